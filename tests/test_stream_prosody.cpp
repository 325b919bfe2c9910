// The F0 and energy branches chunk by chunk (acoustic/stream_prosody.h, slice mode's early start) against
// ProsodyPredictor::curves_from_shared on the real weights. The shared prosody features come from the C++
// acoustic model on golden token ids; the offline branches run once under InstanceStatsCapture, then
// StreamProsody runs with exactly those statistics (SuppliedStats), fed 1, 2, 5 and 16 frames at a time and
// the whole segment at once. Every value of both curves must match the offline ones (float rounding only: the
// same blocks, the convolutions over other column counts), and the chunks must complete every value, as many
// of each curve.
//
// Needs models/kokoro-v1_0.kokoro and tests/data/golden (fails, never skips, without them).
#include <gtest/gtest.h>

#include <cmath>

#include "acoustic/acoustic_model.h"
#include "acoustic/stream_prosody.h"
#include "tests/golden_support.h"
#include "vocoder/stream_ops.h"

using namespace kokoro;
using namespace kokoro::test;

namespace {

struct Fixture {
  std::shared_ptr<const ModelFile> model;
  std::unique_ptr<AcousticModel> acoustic;
  Tensor shared, f0, n;
  std::vector<float> style;
  std::map<std::string, InstanceStats> stats;
  std::string error;
};

const Fixture& fixture() {
  static const Fixture f = [] {
    Fixture r;
    r.model = real_model(&r.error);
    if (!r.model) return r;
    r.acoustic = std::make_unique<AcousticModel>(r.model);
    const Golden g("short_20");
    const Tensor ref_s = g.tensor("ref_s");
    r.style.assign(ref_s.data(), ref_s.data() + ref_s.numel());
    AlignedFeatures feats;
    r.acoustic->forward_text(g.ints("input_ids"), r.style.data(), g.config().at("speed").get<float>(), feats, r.shared);
    InstanceStatsCapture capture;
    r.acoustic->predictor().curves_from_shared(r.shared, r.style.data() + r.acoustic->style_dim(), r.f0, r.n);
    r.stats = capture.take();
    return r;
  }();
  return f;
}

double max_abs_diff(const std::vector<float>& a, const Tensor& b) {
  double d = 0;
  for (size_t i = 0; i < a.size(); ++i) d = std::max(d, double(std::fabs(a[i] - b[static_cast<int64_t>(i)])));
  return d;
}

class StreamProsodyEquivalence : public ::testing::TestWithParam<int> {};

TEST_P(StreamProsodyEquivalence, ChunkedEqualsOfflineWithOfflineStatistics) {
  const Fixture& fx = fixture();
  ASSERT_TRUE(fx.acoustic) << fx.error;
  const int64_t F = fx.shared.dim(1);
  ASSERT_EQ(fx.f0.numel(), 2 * F);
  // The branches' 12 AdaIN layers, every one captured offline.
  StreamProsody sp(fx.acoustic->predictor());
  ASSERT_EQ(sp.layers().size(), 12u);
  for (const NormLayer& l : sp.layers()) EXPECT_TRUE(fx.stats.count(l.name)) << l.name;
  SuppliedStats policy(fx.stats);
  sp.begin(fx.style.data() + fx.acoustic->style_dim(), policy, F);
  const int64_t chunk = GetParam() > 0 ? GetParam() : F;
  std::vector<float> f0, n;
  Tensor cols;
  for (int64_t at = 0; at < F; at += chunk) {
    const int64_t m = std::min(chunk, F - at);
    copy_columns(fx.shared, at, m, cols);
    sp.push(cols, at + m == F, f0, n);
    EXPECT_EQ(f0.size(), n.size());
    EXPECT_LE(static_cast<int64_t>(f0.size()), 2 * (at + m));  // never ahead of its input
  }
  ASSERT_EQ(static_cast<int64_t>(f0.size()), 2 * F);
  ASSERT_EQ(static_cast<int64_t>(n.size()), 2 * F);
  double top = 0;
  for (int64_t i = 0; i < fx.f0.numel(); ++i) top = std::max(top, double(std::fabs(fx.f0[i])));
  EXPECT_GT(top, 50.0) << "a voiced F0 curve expected";
  EXPECT_LE(max_abs_diff(f0, fx.f0), 1e-3) << "F0 (Hz), chunks of " << chunk;
  EXPECT_LE(max_abs_diff(n, fx.n), 1e-4) << "energy, chunks of " << chunk;
}

INSTANTIATE_TEST_SUITE_P(ChunkFrames, StreamProsodyEquivalence, ::testing::Values(1, 2, 5, 16, 0),
                         [](const ::testing::TestParamInfo<int>& i) {
                           return i.param ? std::to_string(i.param) + "_frames" : std::string("whole");
                         });

}  // namespace
