#include "apps/common/speech_options.h"

#include <spdlog/spdlog.h>

#include <chrono>
#include <algorithm>
#include <future>
#include <cstdlib>

#include "core/assets.h"
#include "core/model_file.h"
#include "core/onednn_matmul.h"
#include "core/parallel.h"
#include "core/kernel_family.h"
#include "core/precision.h"
#include "frontend/vocab.h"
#include "frontend/voice_language.h"
#include "realtime/audio_sink.h"

namespace kokoro::app {

void add_speech_options(CLI::App& app, SpeechOptions& o) {
  app.add_option("--voice", o.voice, "Voice name, .bin file, or blend like af_heart:0.6,af_bella:0.4")->capture_default_str();
  app.add_option("--speed", o.speed, "Speaking rate (0.25..4; 1 is normal)")->check(CLI::Range(0.25f, 4.0f))->capture_default_str();
  app.add_option("--lang", o.lang,
                 "Language: en-us, en-gb, es, fr-fr, hi, it, pt-br, ja, zh (default: the voice's, from its first "
                 "letter: af_heart en-us, jf_alpha ja, zf_xiaobei zh, ...)");
  app.add_option("--mode", o.mode,
                 "Synthesis mode: exact (whole sentences vocoded whole, identical to the reference) or slice (same "
                 "sentences, the vocoder's generator in slices that carry its state, normalised by the statistics "
                 "predictor: first audio after the first short slice). See docs/streaming.md")
      ->check(CLI::Validator(
          [](std::string& v) {
            try {
              parse_synthesis_mode(v);
              return std::string();
            } catch (const std::exception& e) {
              return std::string(e.what());
            }
          },
          "exact|slice"))
      ->capture_default_str();
  app.add_option("--first-slice", o.first_slice,
                 "Slice mode: seconds of speech in the first slice of an utterance (shorter: earlier first audio; "
                 "it must outlast the computing of the next one)")
      ->check(CLI::Range(0.05, 30.0))->capture_default_str();
  app.add_option("--max-slice", o.max_slice,
                 "Slice mode: the longest slice in seconds (slices double from the first up to this)")
      ->check(CLI::Range(0.05, 60.0))->capture_default_str();
  app.add_flag("--phonemes-in", o.phonemes_in, "The input is a phoneme string (Kokoro's symbols), not text");
  app.add_option("--model", o.model, "Model file (default: $KOKORO_MODEL, else the installed "
                 "<prefix>/share/kokoro-rt/kokoro-v1_0.kokoro, else models/ of a build tree)");
  app.add_option("--assets", o.assets, "Assets directory (default: $KOKORO_ASSETS, else the installed "
                 "<prefix>/share/kokoro-rt/assets, else ../shared/assets of a build tree)");
  app.add_option("--threads", o.threads, "Compute threads")->check(CLI::Range(1, 64))->capture_default_str();
  app.add_option("--precision", o.precision,
                 "Arithmetic of the largest products: fp32 (identical to the reference), bf16 (vocoder "
                 "convolutions in bf16, AVX512-BF16 CPUs only, same durations and F0 as fp32) or bf16-all (the "
                 "acoustic model too: ~1.9x faster than fp32, a duration moves by a frame now and then) or int8 "
                 "(bf16-all with ALBERT's products in 8 bits, AVX512-VNNI: ALBERT ~1.6x faster, durations move "
                 "by a frame ~5x as often; docs/benchmarks.md has their fidelity). Default: $KOKORO_PRECISION, then int8 where the CPU has AVX512-VNNI and -BF16, bf16-all where it "
                 "has it, else fp32")
      ->check(CLI::IsMember({"fp32", "bf16", "bf16-all", "int8"}));
  app.add_option("--seed", o.seed, "Noise seed (same seed, same audio)")->capture_default_str();
  app.add_option("--first-words", o.first_words, "Cut the first segment of an utterance after N words (0: never; a cut changes the sentence's prosody, and the segments after it are whole sentences that grow with the audio before them)")->capture_default_str();
  app.add_option("--lexicon", o.lexicon,
                 "User lexicon (English): lines of 'word  /phonemes/' or 'word  respelling' that win over the "
                 "built-in one; an all-lower-case word matches any capitalisation")
      ->check(CLI::ExistingFile);
  app.add_flag("--no-markup", o.no_markup, "Read misaki's inline markup [word](/phonemes/) as plain text");
  app.add_flag("--ssml", o.ssml,
               "Read the input as SSML (default: only when it starts with <speak>); the text content, <sub>, "
               "<say-as> and <phoneme> are spoken, <break>/<voice>/<prosody> are reported on the segments");
  app.add_option("--emoji", o.emoji,
                 "Emoji: read (each one's name, as screen readers say it; a run of the same emoji once) or drop "
                 "(left out, for text whose emoji are decoration)")
      ->check(CLI::IsMember({"read", "drop"}))->capture_default_str();
  app.add_option("--resample", o.resample, "Resampling quality to the device rate: best, medium, fastest, linear")
      ->check(CLI::IsMember({"best", "medium", "fastest", "linear"}))->capture_default_str();
}

std::string resolved_language(const SpeechOptions& o) {
  if (!o.lang.empty()) return o.lang;
  const std::string from_voice = language_for_voice(o.voice);
  return from_voice.empty() ? "en-us" : from_voice;
}

std::shared_ptr<const Frontend> load_frontend(const SpeechOptions& o, const std::string& assets_dir) {
  FrontendOptions fo;
  fo.language = resolved_language(o);
  fo.assets_dir = assets_dir;
  fo.first_segment_max_words = o.first_words;
  fo.lexicon_file = o.lexicon;
  fo.inline_markup = !o.no_markup;
  if (o.ssml) fo.ssml = FrontendOptions::Ssml::on;
  fo.emoji = o.emoji == "drop" ? FrontendOptions::Emoji::drop : FrontendOptions::Emoji::read;
  return std::make_shared<const Frontend>(fo);
}

SpeechEngine load_speech_engine(const SpeechOptions& o) {
  SpeechEngine e;
  e.assets_dir = find_assets_dir(o.assets);
  set_num_threads(o.threads);
  if (!o.precision.empty())
    set_precision(parse_precision(o.precision, "--precision"));
  else if (!std::getenv("KOKORO_PRECISION"))
    set_precision(recommended_precision());  // int8 or bf16-all where the CPU has them; fp32 is one flag away
  const std::string model = default_model_path(o.model);
  const bool slice = parse_synthesis_mode(o.mode) == SynthesisMode::slice;
  // oneDNN's GEMM kernels are generated while the model opens, not in the first sentence's first product.
  e.kernels_ready = std::async(std::launch::async, onednn_warm_up);
  // The model on its own thread (a future's destructor waits for it, also when the frontend throws).
  std::future<void> model_loaded = std::async(std::launch::async, [&] {
    try {
      e.synthesizer = std::make_shared<const Synthesizer>(ModelFile::open(model));
    } catch (const Error& ex) {
      throw Error(ex.what() + missing_model_hint(model));
    }
    const auto t0 = std::chrono::steady_clock::now();
    if (slice) e.slice_options = recommended_slice_options(e.synthesizer->model(), &e.slice_note);
    spdlog::debug("model open, slice options read {:.1f} ms later", std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count());
  });
  const auto t0 = std::chrono::steady_clock::now();
  e.frontend = load_frontend(o, e.assets_dir);
  e.voice = VoicePack::resolve(o.voice, e.assets_dir);
  spdlog::debug("frontend and voice loaded in {:.1f} ms", std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count());
  model_loaded.get();
  return e;
}

void setup_logging(const char* app_name, bool verbose) {
  spdlog::set_level(verbose ? spdlog::level::debug : spdlog::level::warn);
  spdlog::set_pattern(std::string(app_name) + ": %l: %v");
}

SpeakerOptions speaker_options(const SpeechOptions& o, const SpeechEngine& engine) {
  SpeakerOptions so;
  so.speed = o.speed;
  so.phoneme_input = o.phonemes_in;
  so.seed = o.seed;
  so.mode = parse_synthesis_mode(o.mode);
  if (so.mode == SynthesisMode::slice) {
    std::string note = engine.slice_note;
    so.stream = engine.slice_options ? *engine.slice_options : recommended_slice_options(engine.synthesizer->model(), &note);
    spdlog::info("{}", note);
    so.stream.first_chunk_frames = slice_frames(o.first_slice);
    so.stream.max_chunk_frames = std::max(so.stream.first_chunk_frames, slice_frames(o.max_slice));
  }
  return so;
}

std::string describe_speech(const SpeechOptions& o) {
  return "mode " + o.mode + ", precision " + precision_name(precision()) + ", kernels " + kernel_family();
}

void persist_prepared_weights(const SpeechEngine& engine) {
  const auto t0 = std::chrono::steady_clock::now();
  const size_t n = engine.synthesizer->model().persist_prepared_weights();
  if (n > 0)
    spdlog::debug("prepared weights: {} written to the cache in {:.0f} ms", n,
                  std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count());
}

double warm_up(const SpeechEngine& engine) {
  const auto t0 = std::chrono::steady_clock::now();
  // About 2.5 s of speech: long enough that every kernel takes the path a real sentence takes.
  const auto segments = engine.frontend->segment("One moment, please: the voice is getting ready to speak.");
  const Vocab vocab = Vocab::from_config(engine.synthesizer->model().config(), engine.synthesizer->model().path());
  for (const auto& seg : segments) {
    const std::vector<int64_t> ids = tokenize(seg.phonemes, vocab);
    if (!ids.empty()) engine.synthesizer->synthesize(ids, engine.voice, 1.0f, static_cast<int64_t>(ids.size()));
  }
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
}

}  // namespace kokoro::app
