// Google Benchmark of the vocoder: Decoder::forward on a 2-second utterance (F = 80 asr frames -> 48000
// samples at 24 kHz) with synthetic but speech-shaped inputs, on the real converted model.
//
// Reports RTF = compute seconds / audio seconds, the project's definition (lower is faster; < 1 is faster than
// real time), and audio_x = its inverse (audio seconds produced per wall second). The argument is the kernel
// thread count (kokoro::set_num_threads, core/parallel.h).
//
//   build/bin/bench_vocoder                       (model: KOKORO_MODEL or models/kokoro-v1_0.kokoro)
#include <benchmark/benchmark.h>

#include <Eigen/Core>
#include <cmath>
#include <memory>
#include <numbers>
#include <vector>

#include "core/assets.h"
#include "core/model_file.h"
#include "core/parallel.h"
#include "vocoder/decoder.h"

namespace {

using namespace kokoro;

constexpr int64_t kFrames = 80;  // 2 s of audio: 80 frames * 600 samples / 24000 Hz

void BM_VocoderTwoSeconds(benchmark::State& state) {
  kokoro::set_num_threads(static_cast<int>(state.range(0)));
  std::shared_ptr<const ModelFile> model;
  std::unique_ptr<Decoder> decoder;
  try {
    model = ModelFile::open(default_model_path());
    decoder = std::make_unique<Decoder>(model);
  } catch (const std::exception& e) {
    state.SkipWithError((std::string(e.what()) + " (create the model with scripts/fetch-assets)").c_str());
    return;
  }
  // asr: smooth pseudo-random features; F0: a 110-220 Hz contour with an unvoiced gap; N: a slow envelope.
  Tensor asr({512, kFrames}), f0({2 * kFrames}), n({2 * kFrames});
  for (int64_t c = 0; c < 512; ++c)
    for (int64_t t = 0; t < kFrames; ++t) asr[c * kFrames + t] = 0.5f * std::sin(0.37f * c + 0.11f * t * (1 + c % 7));
  for (int64_t t = 0; t < 2 * kFrames; ++t) {
    const bool gap = t >= 70 && t < 90;
    f0[t] = gap ? 0.0f : 165.0f + 55.0f * std::sin(2 * std::numbers::pi_v<float> * t / 160.0f);
    n[t] = -1.0f + std::sin(t / 20.0f);
  }
  std::vector<float> style(decoder->style_dim());
  for (size_t i = 0; i < style.size(); ++i) style[i] = 0.1f * std::cos(0.7f * i);

  Tensor audio;
  for (auto _ : state) {
    SeededNoise noise(42);
    decoder->forward(asr, f0, n, style.data(), noise, audio);
    benchmark::DoNotOptimize(audio.data());
  }
  const double audio_seconds = static_cast<double>(kFrames * decoder->samples_per_frame()) / 24000.0;
  // kIsIterationInvariantRate gives audio_seconds * iterations / elapsed = audio per wall second; RTF is its
  // inverse (kInvert): elapsed / (iterations * audio_seconds).
  state.counters["audio_x"] = benchmark::Counter(audio_seconds, benchmark::Counter::kIsIterationInvariantRate);
  state.counters["RTF"] = benchmark::Counter(
      audio_seconds, benchmark::Counter::kIsIterationInvariantRate | benchmark::Counter::kInvert);
  state.counters["audio_s"] = audio_seconds;
  state.counters["threads"] = kokoro::num_threads();
}

BENCHMARK(BM_VocoderTwoSeconds)->Arg(1)->Arg(2)->Unit(benchmark::kMillisecond)->UseRealTime()->MinTime(5.0);

}  // namespace

BENCHMARK_MAIN();
