// Exact mode's pre-roll rule (engine/preroll.h) without the model: the formula, proven on a simulated
// device (the "machine" is a speed figure, no wall clock): starting with the pre-roll the rule asks for,
// every segment is vocoded before it is due; with less, the device runs dry.
#include <gtest/gtest.h>

#include <algorithm>
#include <random>

#include "engine/preroll.h"

using namespace kokoro;

namespace {

PrerollOptions bare() {
  PrerollOptions o;
  o.margin_seconds = 0;
  o.margin_share = 0;
  return o;
}

// Playback starts with `queued` seconds ahead and the vocoder starting on segment 1 at the same moment,
// each segment taking rtf * A_i: how late the latest segment is (0: never dry).
double worst_lateness(const std::vector<double>& audio, double rtf, double queued) {
  double ready = 0, due = queued, worst = 0;
  for (const double a : audio) {
    ready += rtf * a;
    worst = std::max(worst, ready - due);
    due += a;
  }
  return worst;
}

TEST(Preroll, NothingToVocodeNeedsNothing) {
  EXPECT_EQ(preroll_needed_seconds({}, 0.3, PrerollOptions{}), 0.0);
}

TEST(Preroll, OneSegmentNeedsItsVocodingTimeAndTheMargins) {
  PrerollOptions o;
  o.margin_seconds = 0.25;
  o.margin_share = 0.2;
  EXPECT_DOUBLE_EQ(preroll_needed_seconds({10.0}, 0.3, o), 10.0 * 0.3 * 1.2 + 0.25);
}

// Issue 16's paragraph with --first-words 6: a 2 s first segment, then 14 s and 20 s. After the first one is
// vocoded, the second one's vocoding is what the held audio must cover; the third fits in the second's audio.
TEST(Preroll, IssueSixteensParagraphNeedsTheSecondSegmentsVocoding) {
  const double need = preroll_needed_seconds({14.0, 20.0}, 0.14, bare());
  EXPECT_DOUBLE_EQ(need, 14.0 * 0.14);
  EXPECT_GT(need, 1.9) << "a 2 s first segment barely covers it: the margins decide";
}

// A short segment followed by a long one: the long one's vocoding dominates (the max is not the first term).
TEST(Preroll, AShortSegmentBeforeALongOneNeedsTheLongOnesTime) {
  const double need = preroll_needed_seconds({1.0, 25.0}, 0.2, bare());
  EXPECT_DOUBLE_EQ(need, 0.2 * 26.0 - 1.0);
  EXPECT_GT(need, 0.2 * 1.0);
}

// The rule is exact: with the pre-roll it asks for (no margins) no segment is late, with 50 ms less one is
// (when any pre-roll is needed at all); the margins only add.
TEST(Preroll, IsTheSmallestPrerollThatNeverRunsDry) {
  std::mt19937 rng(16);
  std::uniform_real_distribution<double> seconds(0.3, 25.0), speed(0.05, 1.5);
  std::uniform_int_distribution<int> count(1, 6);
  int tight = 0;
  for (int trial = 0; trial < 2000; ++trial) {
    std::vector<double> audio(count(rng));
    for (double& a : audio) a = seconds(rng);
    const double rtf = speed(rng);
    const double need = preroll_needed_seconds(audio, rtf, bare());
    ASSERT_LE(worst_lateness(audio, rtf, need), 1e-9) << "trial " << trial;
    if (need > 0.05) {
      ASSERT_GT(worst_lateness(audio, rtf, need - 0.05), 0.0) << "trial " << trial;
      ++tight;
    }
    PrerollOptions margins;
    margins.margin_seconds = 0.25;
    margins.margin_share = 0.2;
    ASSERT_GE(preroll_needed_seconds(audio, rtf, margins), need + 0.25);
  }
  EXPECT_GT(tight, 1000);
}

TEST(Preroll, SpeedEstimateFollowsASlowerMachineAtOnceAndAFasterOneHalfway) {
  EXPECT_DOUBLE_EQ(updated_preroll_rtf(0.2, 0.5), 0.5);
  EXPECT_DOUBLE_EQ(updated_preroll_rtf(0.4, 0.2), 0.3);
  EXPECT_DOUBLE_EQ(updated_preroll_rtf(0.4, 0.0), 0.4) << "no measurement, no change";
}

}  // namespace
