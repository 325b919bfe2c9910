// What the speaking apps (kokoro-say, kokoro-jack) have in common on the command line: which voice,
// language, speed, model and assets, how many compute threads, and the resampling quality; and loading
// them into a frontend, a synthesizer and a voice pack. One definition, so that both apps accept the same
// flags with the same defaults and the same help text.
#pragma once
#include <CLI/CLI.hpp>

#include <cstdint>
#include <memory>
#include <future>
#include <optional>
#include <string>

#include "core/voice.h"
#include "engine/speaker.h"
#include "engine/synthesizer.h"
#include "frontend/frontend.h"

namespace kokoro::app {

struct SpeechOptions {
  std::string voice = "af_heart";
  std::string lang;  // empty: from the voice name (frontend/voice_language.h), else en-us
  float speed = 1.0f;
  std::string model;   // empty: $KOKORO_MODEL, then models/kokoro-v1_0.kokoro
  std::string assets;  // empty: $KOKORO_ASSETS, then the shared assets directory
  int threads = 2;
  uint64_t seed = 0;
  // Cut each utterance's first segment after this many words (0: never). Changes the sentence's prosody (a
  // phrase end at the cut), so it is off: the slice mode starts speech early without it.
  std::size_t first_words = 0;
  bool phonemes_in = false;
  std::string resample = "medium";
  std::string mode = "slice";  // exact | slice (engine/stream_options.h; docs/streaming.md: why slice)
  double first_slice = StreamOptions{}.first_chunk_frames * 0.025;  // slice mode: an utterance's first slice (s)
  double max_slice = StreamOptions{}.max_chunk_frames * 0.025;      // slice mode: the longest slice (s)
  // fp32 | bf16 | bf16-all | int8; empty: $KOKORO_PRECISION, then int8 where the CPU has AVX512-VNNI and -BF16,
  // bf16-all where it has AVX512-BF16 (same transcripts and DNSMOS as fp32; docs/benchmarks.md), else fp32
  // (core/precision.h).
  std::string precision;
  std::string lexicon;         // user lexicon file (frontend/user_lexicon.h); empty: none
  bool no_markup = false;      // read misaki's inline markup [word](/phonemes/) as plain text
  bool ssml = false;           // read the input as SSML (default: only text that starts with <speak>)
  std::string emoji = "read";  // read (each one's name) or drop (frontend/frontend.h FrontendOptions::emoji)
};

// Adds --voice --speed --lang --mode --model --assets --threads --precision --seed --first-words --phonemes-in
// --resample --lexicon --no-markup --ssml --emoji.
void add_speech_options(CLI::App& app, SpeechOptions& options);

// The loaded pieces. load_* throw kokoro::Error naming the file, voice or language that is wrong.
// The language to speak: --lang, else the voice's (jf_alpha -> ja), else en-us.
std::string resolved_language(const SpeechOptions& options);

struct SpeechEngine {
  std::string assets_dir;
  std::shared_ptr<const Frontend> frontend;
  std::shared_ptr<const Synthesizer> synthesizer;
  VoicePack voice;
  // Slice mode's options with the model's statistics predictor (read with the model; see speaker_options).
  std::optional<StreamOptions> slice_options;
  std::string slice_note;
  // oneDNN's kernels being generated (onednn_warm_up) on a thread of their own: not waited for by the loader,
  // so that the engine starts at once; a product that needs them before they are ready waits inside oneDNN.
  // The future's destructor joins the thread.
  std::future<void> kernels_ready;
};
std::shared_ptr<const Frontend> load_frontend(const SpeechOptions& options, const std::string& assets_dir);
// Everything: assets, frontend, voice, model (also sets the compute thread count and the precision). The
// model (with slice mode's statistics predictor) loads on a thread of its own while this one loads the
// frontend and the voice: they take about as long and share nothing, and both come before a new process's
// first audio (issue 28).
SpeechEngine load_speech_engine(const SpeechOptions& options);
// Synthesizes one short sentence and drops the audio, so that the once-per-model work (bf16 packing and
// transposes of the weights, oneDNN's kernels, the first read of the model's pages) happens now and not in
// the first utterance. For long-running programs: kokoro-jack's first audio on issue 16's paragraph went from
// 1334 to 939 ms with it (docs/streaming.md).
// Returns the milliseconds it took.
double warm_up(const SpeechEngine& engine);
// Writes the weights prepared so far to the user's cache, so that the next start skips preparing them
// (ModelFile::persist_prepared_weights); logs what it did at debug level. Call it off the audio path.
void persist_prepared_weights(const SpeechEngine& engine);

// spdlog at warn (debug with -v), lines prefixed "<app>: <level>: " like the apps' own messages.
void setup_logging(const char* app_name, bool verbose);

// One line for the start-up message: "mode slice, precision bf16, kernels x86-64-v4+bf16".
std::string describe_speech(const SpeechOptions& options);
// Speaker settings that follow from the options (speed, phoneme input, seed, synthesis mode) and from the
// engine's model (slice mode: its statistics predictor when it has one, engine/stream_options.h).
SpeakerOptions speaker_options(const SpeechOptions& options, const SpeechEngine& engine);

}  // namespace kokoro::app
