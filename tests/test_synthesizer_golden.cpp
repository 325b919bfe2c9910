// End to end against the reference: token ids + voice row + speed -> audio through the whole engine
// (Synthesizer: acoustic model then decoder), with the reference's deterministic test noise
// (docs/golden-data.md describes the cases).
//
// What can be asserted end to end, and why it differs from the per-module limits: durations are identical
// and every intermediate is within 1e-4 relative (test_acoustic_golden), and the decoder given the
// reference's own inputs reproduces the audio within 1e-3 (test_vocoder_golden). Fed with our own F0 curve
// instead, the sine source integrates the ~1e-5 relative F0 rounding differences into a phase offset that
// grows with time and harmonic number (up to 9 x F0), so samples drift apart by up to a few 1e-2 in the
// longest case while the sound is the same. Measured on one_phoneme with the decoder on the reference's own
// inputs (max |d| 1.2e-6 unperturbed): scaling F0 by up to 1e-6 relative moves samples by 3.5e-3 and 10 ms
// frame energies by 0.4%; by up to 1e-5 (our end-to-end F0 error), by 1.4e-2 and 3.3%. End to end therefore
// checks what a listener hears, at that level: identical durations, 10 ms frame energy within 3% (frames
// above -50 dBFS), sums over every sample within 1e-4, and samples within 5e-2.
#include <gtest/gtest.h>

#include "core/precision.h"
#include "engine/synthesizer.h"
#include "tests/golden_support.h"

using namespace kokoro;
using namespace kokoro::test;

namespace {

constexpr double kFrameEnergyRel = 0.03;
constexpr double kSampleDriftMax = 0.05;

// Worst relative RMS difference over 10 ms frames (240 samples) whose reference RMS is above -50 dBFS.
double worst_frame_energy_error(const std::vector<float>& a, const Tensor& ref) {
  double worst = 0;
  for (int64_t start = 0; start + 240 <= ref.numel(); start += 240) {
    double ea = 0, eb = 0;
    for (int64_t i = start; i < start + 240; ++i) {
      ea += double(a[i]) * a[i];
      eb += double(ref[i]) * ref[i];
    }
    const double ra = std::sqrt(ea / 240), rb = std::sqrt(eb / 240);
    if (rb > 0.00316) worst = std::max(worst, std::fabs(ra - rb) / rb);
  }
  return worst;
}

const Synthesizer* synthesizer(std::string* error) {
  static std::unique_ptr<Synthesizer> s;
  static std::string err;
  if (!s && err.empty()) {
    if (auto m = real_model(&err)) s = std::make_unique<Synthesizer>(m);
  }
  if (error) *error = err;
  return s.get();
}

class SynthesizerGolden : public ::testing::TestWithParam<std::string> {};

TEST_P(SynthesizerGolden, AudioFromTokenIds) {
  std::string err;
  const Synthesizer* synth = synthesizer(&err);
  ASSERT_TRUE(synth) << err;
  const Golden g(GetParam());
  std::vector<int64_t> ids = g.ints("input_ids");
  ASSERT_GE(ids.size(), 3u);
  ASSERT_EQ(ids.front(), 0);
  ASSERT_EQ(ids.back(), 0);
  ids = std::vector<int64_t>(ids.begin() + 1, ids.end() - 1);  // the engine adds the boundary tokens
  const Tensor ref_s = g.tensor("ref_s");
  TestNoise noise;
  const SynthesisResult r = synth->synthesize_with_style(ids, ref_s.data(), g.config().at("speed").get<float>(), &noise);
  EXPECT_EQ(r.durations, g.ints("pred_dur")) << g.name();
  Tensor audio({static_cast<int64_t>(r.audio.size())});
  std::copy(r.audio.begin(), r.audio.end(), audio.data());
  const Comparison c = compare(g, "audio", audio);
  print_comparison(g.name(), "audio(e2e)", c);
  EXPECT_LE(c.max_abs, kSampleDriftMax) << g.name();
  // Sums over every sample, relative to the sum of |audio|: catches errors outside the kept samples.
  if (c.reduced) EXPECT_LE(c.sum_rel, 1e-4) << g.name();
  if (!c.reduced) {
    const double e = worst_frame_energy_error(r.audio, g.tensor("audio"));
    std::printf("  %-12s worst 10 ms frame energy difference %.3e\n", g.name().c_str(), e);
    EXPECT_LE(e, kFrameEnergyRel) << g.name();
  }
  ASSERT_EQ(r.timings.size(), ids.size());
  EXPECT_NEAR(r.timings.back().end_s + r.durations.back() * 0.025, r.seconds(), 1e-9);
}

// bf16 (the apps' default where the CPU has it: the vocoder's convolutions in bf16, the acoustic model in
// fp32) against the reference: identical durations, and the sound within bf16's rounding of it. The limits
// are the measured errors with 2-30x margin (printed); the whole-file energy must stay within 2 %.
TEST_P(SynthesizerGolden, Bf16AudioWithinToleranceOfReference) {
  if (!bf16_supported()) GTEST_SKIP() << "this CPU has no AVX512-BF16: the bf16 engine cannot be checked here";
  std::string err;
  const Synthesizer* synth = synthesizer(&err);
  ASSERT_TRUE(synth) << err;
  const Golden g(GetParam());
  std::vector<int64_t> ids = g.ints("input_ids");
  ids = std::vector<int64_t>(ids.begin() + 1, ids.end() - 1);
  const Tensor ref_s = g.tensor("ref_s");
  TestNoise noise;
  set_precision(Precision::bf16);
  SynthesisResult r;
  try {
    r = synth->synthesize_with_style(ids, ref_s.data(), g.config().at("speed").get<float>(), &noise);
  } catch (...) {
    set_precision(Precision::fp32);
    throw;
  }
  set_precision(Precision::fp32);
  EXPECT_EQ(r.durations, g.ints("pred_dur")) << g.name();
  const Tensor ref = g.tensor("audio");
  if (ref.numel() != static_cast<int64_t>(r.audio.size())) {
    // Long cases keep only an excerpt of the reference audio: their length and sums are what can be checked.
    Tensor audio({static_cast<int64_t>(r.audio.size())});
    std::copy(r.audio.begin(), r.audio.end(), audio.data());
    const Comparison c = compare(g, "audio", audio);
    print_comparison(g.name(), "audio(bf16)", c);
    EXPECT_LE(c.sum_rel, 1e-3) << g.name();     // measured <= 3.1e-5
    EXPECT_LE(c.max_abs, 2 * kSampleDriftMax) << g.name();  // measured <= 2.3e-2
    return;
  }
  const double frame = worst_frame_energy_error(r.audio, ref);
  double e_ours = 0, e_ref = 0;
  for (int64_t i = 0; i < ref.numel(); ++i) {
    e_ours += double(r.audio[i]) * r.audio[i];
    e_ref += double(ref[i]) * ref[i];
  }
  const double energy = std::sqrt(e_ours / e_ref);
  std::printf("  %-12s bf16: worst 10 ms frame energy difference %.3e, RMS ratio %.4f\n", g.name().c_str(), frame,
              energy);
  EXPECT_LE(frame, 0.06) << g.name();  // measured 2.3e-2
  EXPECT_NEAR(energy, 1.0, 0.02) << g.name();
}

INSTANTIATE_TEST_SUITE_P(Cases, SynthesizerGolden, ::testing::ValuesIn(golden_cases()), [](const auto& info) {
  std::string n = info.param;
  std::replace(n.begin(), n.end(), '.', '_');
  return n;
});

}  // namespace
