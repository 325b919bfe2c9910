// The slice vocoder (vocoder/slice_vocoder.h) on the real weights: one slice is the whole-segment generator
// bit for bit; several slices cover every sample exactly once, keep the level of the whole-segment audio,
// and join without clicks. Needs models/kokoro-v1_0.kokoro and tests/data/golden (fails, never skips).
#include <gtest/gtest.h>

#include <cmath>

#include "acoustic/acoustic_model.h"
#include "core/error.h"
#include "tests/golden_support.h"
#include "vocoder/decoder.h"
#include "vocoder/slice_vocoder.h"
#include "vocoder/stats_predictor.h"

using namespace kokoro;
using namespace kokoro::test;

namespace {

struct Case {
  std::vector<float> style;
  AlignedFeatures feats;
  Tensor x;      // Decoder::features
  Tensor audio;  // Decoder::forward (whole segment)
};

struct Fixture {
  std::shared_ptr<const ModelFile> model;
  std::unique_ptr<Decoder> decoder;
  Case c;
  std::string error;
};

const Fixture& fixture() {
  static const Fixture f = [] {
    Fixture r;
    r.model = real_model(&r.error);
    if (!r.model) return r;
    r.decoder = std::make_unique<Decoder>(r.model);
    const Golden g("medium_150");
    const Tensor ref_s = g.tensor("ref_s");
    r.c.style.assign(ref_s.data(), ref_s.data() + ref_s.numel());
    AcousticModel(r.model).forward(g.ints("input_ids"), r.c.style.data(), g.config().at("speed").get<float>(), r.c.feats);
    r.decoder->features(r.c.feats.asr, r.c.feats.f0, r.c.feats.n, r.c.style.data(), r.c.x);
    TestNoise noise;
    r.decoder->forward(r.c.feats.asr, r.c.feats.f0, r.c.feats.n, r.c.style.data(), noise, r.c.audio);
    return r;
  }();
  return f;
}

std::vector<float> render(const Fixture& f, const std::vector<int64_t>& ends, SliceOptions o = {}) {
  SliceVocoder sv(f.decoder->generator(), o);
  TestNoise noise;
  sv.begin(f.c.x, f.c.feats.f0.data(), f.c.style.data(), noise);
  std::vector<float> out;
  Tensor a;
  for (int64_t e : ends) {
    sv.render_until(e, a);
    out.insert(out.end(), a.data(), a.data() + a.numel());
  }
  return out;
}

double rms_db(const float* p, size_t n) {
  double s = 0;
  for (size_t i = 0; i < n; ++i) s += double(p[i]) * p[i];
  return 10 * std::log10(s / n + 1e-20);
}

}  // namespace

TEST(SliceVocoder, OneSliceIsTheWholeSegmentGenerator) {
  const Fixture& f = fixture();
  ASSERT_TRUE(f.decoder) << f.error;
  const std::vector<float> got = render(f, {f.c.x.dim(1)});
  ASSERT_EQ(static_cast<int64_t>(got.size()), f.c.audio.numel());
  for (size_t i = 0; i < got.size(); ++i) ASSERT_EQ(got[i], f.c.audio.data()[i]) << "sample " << i;
}

// Slices every 80 columns (1 s, shorter than the planner makes them after the first) with pooled statistics
// (the default): every sample once, the level of each 0.25 s window within 3 dB of the whole-segment audio
// where that is speech, and no step at a border larger than the largest sample-to-sample step of the
// whole-segment audio. (Each slice with only its own statistics misses the level by up to 12 dB here: that
// option is kept for measurements, docs/streaming.md.)
TEST(SliceVocoder, SlicesCoverEverySampleKeepTheLevelAndJoinSmoothly) {
  const Fixture& f = fixture();
  ASSERT_TRUE(f.decoder) << f.error;
  const int64_t T = f.c.x.dim(1);
  ASSERT_GT(T, 200) << "the case should be several seconds long";
  std::vector<int64_t> ends;
  for (int64_t e = 80; e < T - 10; e += 80) ends.push_back(e);
  ends.push_back(T);
  const float* want = f.c.audio.data();
  const size_t n = static_cast<size_t>(f.c.audio.numel());
  double max_step = 0;
  for (size_t i = 1; i < n; ++i) max_step = std::max(max_step, double(std::fabs(want[i] - want[i - 1])));
  for (bool pooled : {true}) {
    SliceOptions o;
    o.pooled_statistics = pooled;
    const std::vector<float> got = render(f, ends, o);
    ASSERT_EQ(got.size(), n);
    const size_t win = 6000;
    int compared = 0;
    for (size_t i = 0; i + win <= n; i += win) {
      const double ref = rms_db(want + i, win);
      if (ref < -40) continue;
      ++compared;
      EXPECT_NEAR(rms_db(got.data() + i, win), ref, 3.0) << "window at " << i / 24000.0 << " s, pooled " << pooled;
    }
    EXPECT_GT(compared, 5);
    for (int64_t e : ends) {
      const size_t b = static_cast<size_t>(e) * 300;
      for (size_t i = (b > 300 ? b - 300 : 1); i < std::min(n, b + 300); ++i)
        EXPECT_LE(std::fabs(got[i] - got[i - 1]), max_step) << "border " << e << " pooled " << pooled;
    }
  }
}

namespace {
// A predictor that predicts the same targets for every segment: `targets` (StatsPredictor layout).
std::shared_ptr<const StatsPredictor> constant_predictor(const Fixture& f, const Eigen::VectorXf& targets) {
  auto p = std::make_shared<StatsPredictor>();
  p->layers = StatsPredictor::generator_layers(*f.model);
  const int64_t D = stats_predictor_feature_dim(f.c.x.dim(0), f.decoder->style_dim());
  p->feature_mean = Eigen::VectorXf::Zero(D);
  p->feature_scale = Eigen::VectorXf::Ones(D);
  p->latent = RowMatrixXf::Zero(D, 1);
  p->weight = RowMatrixXf::Zero(targets.size(), 1);
  p->offset = targets;
  return p;
}

// The whole segment's exact generator statistics as predictor targets.
Eigen::VectorXf exact_targets(const Fixture& f) {
  TestNoise noise;
  Tensor audio;
  InstanceStatsCapture capture;
  f.decoder->generator().forward(f.c.x, f.c.feats.f0.data(), f.c.style.data(), noise, audio);
  return stats_targets(capture.stats(), StatsPredictor::generator_layers(*f.model));
}

double max_abs_diff(const std::vector<float>& a, const Tensor& b) {
  double m = 0;
  for (size_t i = 0; i < a.size(); ++i) m = std::max(m, double(std::fabs(a[i] - b.data()[i])));
  return m;
}
}  // namespace

// The predictor only speaks for columns not computed: one slice computes them all and stays exact.
TEST(SliceVocoder, OneSliceWithAStatisticsPredictorIsStillTheWholeSegmentGenerator) {
  const Fixture& f = fixture();
  ASSERT_TRUE(f.decoder) << f.error;
  SliceOptions o;
  int64_t targets = 0;
  for (const StatsLayerShape& l : StatsPredictor::generator_layers(*f.model)) targets += 2 * l.channels;
  o.predictor = constant_predictor(f, Eigen::VectorXf::Zero(targets));  // a poor one
  o.predictor_subtract = 0.5;
  const std::vector<float> got = render(f, {f.c.x.dim(1)}, o);
  ASSERT_EQ(static_cast<int64_t>(got.size()), f.c.audio.numel());
  for (size_t i = 0; i < got.size(); ++i) ASSERT_EQ(got[i], f.c.audio.data()[i]) << "sample " << i;
}

// A predictor that knows the exact whole-segment statistics (subtract 1: the slices normalise with them)
// brings slices closer to the whole-segment audio than pooling alone; a bad one moves them away.
TEST(SliceVocoder, PredictedStatisticsStandInForTheRestOfTheSegment) {
  const Fixture& f = fixture();
  ASSERT_TRUE(f.decoder) << f.error;
  const int64_t T = f.c.x.dim(1);
  const std::vector<int64_t> ends = {80, 160, T};
  const double pooled = max_abs_diff(render(f, ends), f.c.audio);
  SliceOptions o;
  o.predictor = constant_predictor(f, exact_targets(f));
  o.predictor_subtract = 1.0;
  const double oracle = max_abs_diff(render(f, ends, o), f.c.audio);
  EXPECT_LT(oracle, 0.5 * pooled) << "pooled " << pooled << ", with the exact statistics predicted " << oracle;
}

TEST(SliceVocoder, BadSlicesAreErrors) {
  const Fixture& f = fixture();
  ASSERT_TRUE(f.decoder) << f.error;
  SliceVocoder sv(f.decoder->generator());
  Tensor a;
  EXPECT_THROW(sv.render_until(10, a), Error);  // before begin
  TestNoise noise;
  sv.begin(f.c.x, f.c.feats.f0.data(), f.c.style.data(), noise);
  EXPECT_THROW(sv.render_until(f.c.x.dim(1) + 1, a), Error);
  EXPECT_THROW(sv.render_until(1, a), Error);  // shorter than the crossfades need
  sv.render_until(40, a);
  EXPECT_THROW(sv.render_until(40, a), Error);  // backwards / empty
  SliceOptions bad;
  bad.crossfade_samples = 10000;
  EXPECT_THROW(SliceVocoder(f.decoder->generator(), bad), Error);
}
