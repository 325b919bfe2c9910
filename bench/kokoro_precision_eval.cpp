// kokoro-precision-eval: what the bf16 option (core/precision.h) gains in speed and costs in fidelity, in one
// process and one run, on the real weights.
//
// Every segment of the corpora (frontend with a 6-word first segment, as kokoro-bench) is synthesized in
// fp32 and in bf16, with the same noise (SeededNoise 0), in alternating rounds (fp32 first in odd rounds,
// bf16 first in even ones, so that neither always runs on a warmer cache or a quieter machine). Reported per
// precision: wall and CPU time of the acoustic model and of the vocoder per second of audio, and RTF; then
// fidelity, in two parts, since a bf16 acoustic model can move a duration by a frame (durations are
// rounded), after which two audios are no longer aligned sample by sample:
//   vocoder  the fp32 acoustic features through the bf16 vocoder vs through the fp32 vocoder: LSD and MCD
//            (bench/stream_metrics.h, the definitions of kokoro-stream-eval and tools/reference/compare_e2e.py)
//   all      bf16 acoustic model + bf16 vocoder vs all fp32: how many segments changed their total length
//            and by how many frames; durations that differ; F0 difference; LSD/MCD on the segments of equal
//            length.
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
double cpu_seconds() {
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  return u.ru_utime.tv_sec + u.ru_utime.tv_usec / 1e6 + u.ru_stime.tv_sec + u.ru_stime.tv_usec / 1e6;
}
double loadavg_1m() {
  std::ifstream f("/proc/loadavg");
  double v = 0;
  f >> v;
  return v;
}

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

    // Warm-up in both precisions (first touch of weights; bf16's once-per-model weight preparation).
    const std::vector<Segment_> first(segs.begin(), segs.begin() + 1);
    for (Precision p : {Precision::fp32, Precision::bf16}) {
      set_precision(p);
      run_all(synth, first, nullptr);
    }

    std::vector<std::vector<float>> audio32(segs.size()), audio16(segs.size());
    nlohmann::json j;
    j["threads"] = threads;
    j["segments"] = segs.size();
    j["loadavg_before"] = loadavg_1m();
    std::printf("kokoro-precision-eval  %zu segments (%s)  threads %d  load average %.2f\n", segs.size(),
                corpora.c_str(), threads, loadavg_1m());
    std::printf("%-6s %-5s %10s %14s %14s %8s %8s\n", "round", "prec", "audio s", "acoustic ms/s", "vocoder ms/s",
                "RTF", "CPU RTF");
    double sum[2] = {0, 0};
    for (int round = 0; round < rounds; ++round)
      for (int k = 0; k < 2; ++k) {
        const Precision p = (k == round % 2) ? Precision::fp32 : Precision::bf16;
        set_precision(p);
        const bool is32 = p == Precision::fp32;
        const Timing t = run_all(synth, segs, round == 0 ? (is32 ? &audio32 : &audio16) : nullptr);
        sum[is32 ? 0 : 1] += t.rtf();
        std::printf("%-6d %-5s %10.2f %14.1f %14.1f %8.3f %8.3f\n", round + 1, precision_name(p), t.audio_s,
                    1e3 * t.acoustic_s / t.audio_s, 1e3 * t.vocoder_s / t.audio_s, t.rtf(), t.cpu_s / t.audio_s);
        j["runs"].push_back({{"round", round + 1}, {"precision", precision_name(p)}, {"audio_s", t.audio_s},
                             {"acoustic_ms_per_s", 1e3 * t.acoustic_s / t.audio_s},
                             {"vocoder_ms_per_s", 1e3 * t.vocoder_s / t.audio_s}, {"rtf", t.rtf()},
                             {"rtf_cpu", t.cpu_s / t.audio_s}});
      }
    set_precision(Precision::fp32);
    const double rtf32 = sum[0] / rounds, rtf16 = sum[1] / rounds;
    std::printf("mean RTF fp32 %.3f  bf16 %.3f  speed-up %.2fx\n", rtf32, rtf16, rtf32 / rtf16);

    // Fidelity (untimed).
    std::vector<double> lsd_v, mcd_v, lsd_a, mcd_a, f0_diff;
    int changed_length = 0, durations_differ = 0, durations_total = 0;
    double frames_moved = 0;
    for (size_t i = 0; i < segs.size(); ++i) {
      const Segment_& s = segs[i];
      AlignedFeatures f32, f16;
      set_precision(Precision::fp32);
      synth.acoustic().forward(s.ids, s.style.data(), 1.0f, f32);
      set_precision(Precision::bf16);
      synth.acoustic().forward(s.ids, s.style.data(), 1.0f, f16);
      SeededNoise noise(0);
      Tensor voc16;
      synth.decoder().forward(f32.asr, f32.f0, f32.n, s.style.data(), noise, voc16);
      set_precision(Precision::fp32);
      const std::vector<float> v16(voc16.data(), voc16.data() + voc16.numel());
      lsd_v.push_back(log_spectral_distance_db(v16, audio32[i]));
      mcd_v.push_back(mel_cepstral_distortion_db(v16, audio32[i]));
      for (size_t t = 0; t < f32.durations.size(); ++t) durations_differ += f32.durations[t] != f16.durations[t];
      durations_total += static_cast<int>(f32.durations.size());
      if (audio16[i].size() != audio32[i].size()) {
        ++changed_length;
        frames_moved += std::abs(f16.frames() - f32.frames());
        continue;
      }
      double d2 = 0;
      for (int64_t t = 0; t < f32.f0.numel(); ++t) d2 += double(f16.f0[t] - f32.f0[t]) * (f16.f0[t] - f32.f0[t]);
      f0_diff.push_back(std::sqrt(d2 / f32.f0.numel()));
      lsd_a.push_back(log_spectral_distance_db(audio16[i], audio32[i]));
      mcd_a.push_back(mel_cepstral_distortion_db(audio16[i], audio32[i]));
    }
    auto stats = [](const std::vector<double>& v) {
      return nlohmann::json{{"mean", mean(v)}, {"p95", percentile(v, 95)}, {"max", percentile(v, 100)}, {"n", v.size()}};
    };
    std::printf("vocoder only (fp32 features): LSD mean %.3f dB, p95 %.3f, max %.3f;  MCD mean %.3f dB, p95 %.3f, "
                "max %.3f\n", mean(lsd_v), percentile(lsd_v, 95), percentile(lsd_v, 100), mean(mcd_v),
                percentile(mcd_v, 95), percentile(mcd_v, 100));
    std::printf("all bf16: %d of %zu segments changed length (%.0f frames in all); %d of %d durations differ;\n"
                "  on the %zu of equal length: F0 rms difference mean %.2f Hz, LSD mean %.3f dB (max %.3f), MCD mean "
                "%.3f dB (max %.3f)\n",
                changed_length, segs.size(), frames_moved, durations_differ, durations_total, lsd_a.size(),
                mean(f0_diff), mean(lsd_a), percentile(lsd_a, 100), mean(mcd_a), percentile(mcd_a, 100));
    j["rtf_fp32"] = rtf32;
    j["rtf_bf16"] = rtf16;
    j["speedup"] = rtf32 / rtf16;
    j["vocoder_only"] = {{"lsd_db", stats(lsd_v)}, {"mcd_db", stats(mcd_v)}};
    j["all_bf16"] = {{"segments_changed_length", changed_length}, {"frames_moved", frames_moved},
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
