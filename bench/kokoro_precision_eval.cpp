// kokoro-precision-eval: what the bf16 option (core/precision.h) gains in speed and costs in fidelity, in one
// process and one run, on the real weights.
//
// Every segment of the corpora (frontend with a 6-word first segment, as kokoro-bench) is synthesized in
// fp32, bf16 and bf16-all, with the same noise (SeededNoise 0), in rounds that rotate the order (so that
// none always runs on a warmer cache or a quieter machine). Reported per precision: wall and CPU time of the
// acoustic model and of the vocoder per second of audio, and RTF; then fidelity against fp32:
//   bf16      the acoustic model runs in fp32, so the features are the fp32 ones and the audio aligns
//             sample by sample: LSD and MCD (bench/stream_metrics.h, the definitions of kokoro-stream-eval
//             and tools/reference/compare_e2e.py)
//   bf16-all  a bf16 acoustic model can move a duration by a frame (durations are rounded), after which the
//             audios no longer align: segments that changed length, durations that differ, F0 difference,
//             and LSD/MCD on the segments of equal length. For scale, the same measures for fp32 audio whose
//             F0 curve was only multiplied by 1.0005 (0.1 Hz at 200 Hz): the vocoder integrates F0 into the
//             phase of its harmonic source, so a tiny F0 change alone moves the waveform.
//
//   kokoro-precision-eval --corpus short,medium --threads 2 --rounds 2
#include <CLI/CLI.hpp>
#include <sys/resource.h>

#include <chrono>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "bench/process_stats.h"
#include "bench/stream_metrics.h"
#include "core/assets.h"
#include "core/error.h"
#include "core/parallel.h"
#include "core/precision.h"
#include "engine/synthesizer.h"
#include "frontend/frontend.h"
#include "frontend/utf8.h"
#include "frontend/vocab.h"

using namespace kokoro;
using namespace kokoro::bench;

namespace {

using Clock = std::chrono::steady_clock;
double s_since(Clock::time_point t) { return std::chrono::duration<double>(Clock::now() - t).count(); }

struct Segment_ {
  std::string corpus;
  std::vector<int64_t> ids;  // with both boundary tokens
  std::vector<float> style;
};

struct Timing {
  double acoustic_s = 0, vocoder_s = 0, cpu_s = 0, audio_s = 0;
  double rtf() const { return (acoustic_s + vocoder_s) / audio_s; }
};

// One pass over every segment in the current precision; audio kept when `keep` is given.
Timing run_all(const Synthesizer& synth, const std::vector<Segment_>& segs, std::vector<std::vector<float>>* keep) {
  Timing t;
  const double cpu0 = cpu_seconds();
  for (size_t i = 0; i < segs.size(); ++i) {
    const Segment_& s = segs[i];
    AlignedFeatures feats;
    auto t0 = Clock::now();
    synth.acoustic().forward(s.ids, s.style.data(), 1.0f, feats);
    t.acoustic_s += s_since(t0);
    SeededNoise noise(0);
    Tensor audio;
    t0 = Clock::now();
    synth.decoder().forward(feats.asr, feats.f0, feats.n, s.style.data(), noise, audio);
    t.vocoder_s += s_since(t0);
    t.audio_s += static_cast<double>(audio.numel()) / kSampleRate;
    if (keep) (*keep)[i].assign(audio.data(), audio.data() + audio.numel());
  }
  t.cpu_s = cpu_seconds() - cpu0;
  return t;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"kokoro-precision-eval: bf16 vs fp32 speed and fidelity (LSD/MCD) in one run"};
  std::string corpora = "short,medium", corpus_dir = std::string(KOKORO_SOURCE_DIR) + "/bench/corpus";
  std::string model_path, assets, voice_name = "af_heart", json_file;
  int threads = num_threads(), rounds = 2;
  app.add_option("--corpus", corpora, "Comma-separated corpora")->capture_default_str();
  app.add_option("--corpus-dir", corpus_dir, "Where <name>.txt corpora live")->capture_default_str();
  app.add_option("--threads", threads, "Kernel threads")->capture_default_str()->check(CLI::Range(1, 64));
  app.add_option("--rounds", rounds, "Alternating timed rounds of both precisions")->capture_default_str()->check(CLI::Range(1, 100));
  app.add_option("--voice", voice_name, "Voice")->capture_default_str();
  app.add_option("--model", model_path, "Model file (default: KOKORO_MODEL or models/kokoro-v1_0.kokoro)");
  app.add_option("--assets", assets, "Assets directory");
  app.add_option("--json-file", json_file, "Also write the results as JSON");
  CLI11_PARSE(app, argc, argv);

  try {
    if (!bf16_supported()) throw Error("kokoro-precision-eval: this CPU or build has no AVX512-BF16");
    set_num_threads(threads);
    assets = find_assets_dir(assets);
    Synthesizer synth(ModelFile::open(default_model_path(model_path)));
    FrontendOptions fo;
    fo.assets_dir = assets;
    fo.first_segment_max_words = 6;
    const Frontend fe(fo);
    const Vocab vocab = Vocab::load(assets + "/config.json");
    const VoicePack voice = VoicePack::resolve(voice_name, assets);

    std::vector<Segment_> segs;
    for (std::stringstream ss(corpora); ss.good();) {
      std::string name;
      std::getline(ss, name, ',');
      if (name.empty()) continue;
      std::ifstream in(corpus_dir + "/" + name + ".txt");
      if (!in) throw Error("kokoro-precision-eval: cannot read corpus " + corpus_dir + "/" + name + ".txt");
      for (std::string line; std::getline(in, line);)
        for (const Segment& seg : fe.segment(line)) {
          Segment_ s;
          s.corpus = name;
          s.ids = tokenize(seg.phonemes, vocab);
          if (s.ids.empty()) continue;
          s.ids.insert(s.ids.begin(), 0);
          s.ids.push_back(0);
          const float* row = voice.style_for(static_cast<int>(utf8::count_code_points(seg.phonemes)));
          s.style.assign(row, row + kStyleDim);
          segs.push_back(std::move(s));
        }
    }
    if (segs.empty()) throw Error("kokoro-precision-eval: no segments");

    // Warm-up in every precision (first touch of weights; bf16's once-per-model weight preparation).
    const std::vector<Segment_> first(segs.begin(), segs.begin() + 1);
    const Precision precs[3] = {Precision::fp32, Precision::bf16, Precision::bf16_all};
    for (Precision p : precs) {
      set_precision(p);
      run_all(synth, first, nullptr);
    }

    std::vector<std::vector<float>> audio[3];
    for (auto& a : audio) a.resize(segs.size());
    const auto& audio32 = audio[0];
    const auto& audio16 = audio[1];
    const auto& audio16all = audio[2];
    nlohmann::json j;
    j["threads"] = threads;
    j["segments"] = segs.size();
    j["loadavg_before"] = loadavg_1m();
    std::printf("kokoro-precision-eval  %zu segments (%s)  threads %d  load average %.2f\n", segs.size(),
                corpora.c_str(), threads, loadavg_1m());
    std::printf("%-6s %-5s %10s %14s %14s %8s %8s\n", "round", "prec", "audio s", "acoustic ms/s", "vocoder ms/s",
                "RTF", "CPU RTF");
    double sum[3] = {0, 0, 0};
    for (int round = 0; round < rounds; ++round)
      for (int k = 0; k < 3; ++k) {
        const int which = (k + round) % 3;
        const Precision p = precs[which];
        set_precision(p);
        const Timing t = run_all(synth, segs, round == 0 ? &audio[which] : nullptr);
        sum[which] += t.rtf();
        std::printf("%-6d %-5s %10.2f %14.1f %14.1f %8.3f %8.3f\n", round + 1, precision_name(p), t.audio_s,
                    1e3 * t.acoustic_s / t.audio_s, 1e3 * t.vocoder_s / t.audio_s, t.rtf(), t.cpu_s / t.audio_s);
        j["runs"].push_back({{"round", round + 1}, {"precision", precision_name(p)}, {"audio_s", t.audio_s},
                             {"acoustic_ms_per_s", 1e3 * t.acoustic_s / t.audio_s},
                             {"vocoder_ms_per_s", 1e3 * t.vocoder_s / t.audio_s}, {"rtf", t.rtf()},
                             {"rtf_cpu", t.cpu_s / t.audio_s}});
      }
    set_precision(Precision::fp32);
    const double rtf32 = sum[0] / rounds, rtf16 = sum[1] / rounds, rtf16all = sum[2] / rounds;
    std::printf("mean RTF fp32 %.3f  bf16 %.3f (%.2fx)  bf16-all %.3f (%.2fx)\n", rtf32, rtf16, rtf32 / rtf16,
                rtf16all, rtf32 / rtf16all);

    // Fidelity (untimed).
    std::vector<double> lsd_v, mcd_v, lsd_a, mcd_a, f0_diff, lsd_f0, mcd_f0;
    for (size_t i = 0; i < segs.size(); ++i) {
      if (audio16[i].size() != audio32[i].size())
        throw Error("kokoro-precision-eval: bf16 changed a segment's length (its acoustic model must stay fp32)");
      lsd_v.push_back(log_spectral_distance_db(audio16[i], audio32[i]));
      mcd_v.push_back(mel_cepstral_distortion_db(audio16[i], audio32[i]));
    }
    int changed_length = 0, durations_differ = 0, durations_total = 0;
    double frames_moved = 0;
    for (size_t i = 0; i < segs.size(); ++i) {
      const Segment_& s = segs[i];
      AlignedFeatures f32, f16;
      set_precision(Precision::fp32);
      synth.acoustic().forward(s.ids, s.style.data(), 1.0f, f32);
      set_precision(Precision::bf16_all);
      synth.acoustic().forward(s.ids, s.style.data(), 1.0f, f16);
      set_precision(Precision::fp32);
      for (size_t t = 0; t < f32.durations.size(); ++t) durations_differ += f32.durations[t] != f16.durations[t];
      durations_total += static_cast<int>(f32.durations.size());
      if (audio16all[i].size() != audio32[i].size()) {
        ++changed_length;
        frames_moved += std::abs(f16.frames() - f32.frames());
        continue;
      }
      {
        Tensor f0 = f32.f0, moved;
        for (int64_t t = 0; t < f0.numel(); ++t) f0[t] *= 1.0005f;
        SeededNoise noise(0);
        synth.decoder().forward(f32.asr, f0, f32.n, s.style.data(), noise, moved);
        const std::vector<float> m(moved.data(), moved.data() + moved.numel());
        lsd_f0.push_back(log_spectral_distance_db(m, audio32[i]));
        mcd_f0.push_back(mel_cepstral_distortion_db(m, audio32[i]));
      }
      double d2 = 0;
      for (int64_t t = 0; t < f32.f0.numel(); ++t) d2 += double(f16.f0[t] - f32.f0[t]) * (f16.f0[t] - f32.f0[t]);
      f0_diff.push_back(std::sqrt(d2 / f32.f0.numel()));
      lsd_a.push_back(log_spectral_distance_db(audio16all[i], audio32[i]));
      mcd_a.push_back(mel_cepstral_distortion_db(audio16all[i], audio32[i]));
    }
    auto stats = [](const std::vector<double>& v) {
      return nlohmann::json{{"mean", mean(v)}, {"p95", percentile(v, 95)}, {"max", percentile(v, 100)}, {"n", v.size()}};
    };
    std::printf("bf16 (acoustic model fp32, same features): LSD mean %.3f dB, p95 %.3f, max %.3f;  MCD mean %.3f dB, p95 %.3f, "
                "max %.3f\n", mean(lsd_v), percentile(lsd_v, 95), percentile(lsd_v, 100), mean(mcd_v),
                percentile(mcd_v, 95), percentile(mcd_v, 100));
    std::printf("bf16-all: %d of %zu segments changed length (%.0f frames in all); %d of %d durations differ;\n"
                "  on the %zu of equal length: F0 rms difference mean %.2f Hz, LSD mean %.3f dB (max %.3f), MCD mean "
                "%.3f dB (max %.3f)\n",
                changed_length, segs.size(), frames_moved, durations_differ, durations_total, lsd_a.size(),
                mean(f0_diff), mean(lsd_a), percentile(lsd_a, 100), mean(mcd_a), percentile(mcd_a, 100));
    std::printf("  for scale, fp32 with F0 x 1.0005 on the same segments: LSD mean %.3f dB (max %.3f), MCD mean %.3f dB "
                "(max %.3f)\n", mean(lsd_f0), percentile(lsd_f0, 100), mean(mcd_f0), percentile(mcd_f0, 100));
    j["fp32_f0_x1.0005"] = {{"lsd_db", stats(lsd_f0)}, {"mcd_db", stats(mcd_f0)}};
    j["rtf_fp32"] = rtf32;
    j["rtf_bf16"] = rtf16;
    j["rtf_bf16_all"] = rtf16all;
    j["bf16"] = {{"lsd_db", stats(lsd_v)}, {"mcd_db", stats(mcd_v)}};
    j["bf16_all"] = {{"segments_changed_length", changed_length}, {"frames_moved", frames_moved},
                     {"durations_differ", durations_differ}, {"durations", durations_total},
                     {"f0_rms_diff_hz", stats(f0_diff)}, {"lsd_db_equal_length", stats(lsd_a)},
                     {"mcd_db_equal_length", stats(mcd_a)}};
    j["loadavg_after"] = loadavg_1m();
    std::printf("load average after %.2f\n", loadavg_1m());
    if (!json_file.empty()) std::ofstream(json_file) << j.dump(2) << "\n";
  } catch (const std::exception& e) {
    std::fprintf(stderr, "kokoro-precision-eval: %s\n", e.what());
    return 1;
  }
  return 0;
}
