// Exact mode's pre-roll rule (engine/preroll.h) without the model: the formula, proven on a simulated
// device (the "machine" is a speed figure, no wall clock): starting with the pre-roll the rule asks for,
// every segment is vocoded before it is due; with less, the device runs dry. Then the rule that follows the
// vocoder's progress: its estimator, and a simulated machine whose pace changes within a segment.
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

// ---- following the vocoder's progress

TEST(Preroll, GivenVocodingTimesTheRuleIsTheSameFormula) {
  const std::vector<double> audio{14.0, 20.0};
  EXPECT_DOUBLE_EQ(preroll_needed_seconds(audio, std::vector<double>{14.0 * 0.14, 20.0 * 0.14}, bare()),
                   preroll_needed_seconds(audio, 0.14, bare()));
  // A segment partly vocoded: only what is left of it counts, and the next one's time after it.
  EXPECT_DOUBLE_EQ(preroll_needed_seconds(audio, std::vector<double>{1.0, 3.0}, bare()), 1.0);
  EXPECT_DOUBLE_EQ(preroll_needed_seconds({1.0, 20.0}, std::vector<double>{0.5, 3.0}, bare()), 0.5 + 3.0 - 1.0);
  PrerollOptions o;
  o.margin_seconds = 0.25;
  o.margin_share = 0.2;
  EXPECT_DOUBLE_EQ(preroll_needed_seconds({10.0}, std::vector<double>{2.0}, o), 2.0 * 1.2 + 0.25);
}

TEST(Preroll, SegmentOverheadKeepsAShortSegmentFromInflatingALongOnesEstimate) {
  // Measured: 2 s of audio in 0.4 s, with 0.05 s of it fixed per segment.
  const VocodeSpeed speed{(0.4 - 0.05) / 2.0, 0.05};
  EXPECT_NEAR(speed.seconds(2.0), 0.4, 1e-12);
  EXPECT_NEAR(speed.seconds(14.0), 0.05 + 0.175 * 14.0, 1e-12);
  EXPECT_LT(speed.seconds(14.0), 14.0 * 0.4 / 2.0) << "the short segment's RTF would say 2.8 s";
}

TEST(Preroll, NothingVocodedYetLeavesThePrior) {
  const PrerollOptions o;
  EXPECT_DOUBLE_EQ(remaining_vocode_seconds(3.0, 0.0, 0.0, o), 3.0);
  EXPECT_DOUBLE_EQ(remaining_vocode_seconds(3.0, 0.7, 0.0, o), 3.0) << "no progress reported: no pace to measure";
}

TEST(Preroll, ASlowerPaceThanThePriorCountsAtOnce) {
  PrerollOptions o;
  o.progress_trust_fraction = 0.25;
  // 5 % done in 0.5 s: 10 s for the whole, 9.5 s left, although the prior said 3 s.
  EXPECT_NEAR(remaining_vocode_seconds(3.0, 0.5, 0.05, o), 9.5, 1e-12);
  // Stuck after that: the estimate keeps growing with the time spent.
  EXPECT_GT(remaining_vocode_seconds(3.0, 2.0, 0.05, o), remaining_vocode_seconds(3.0, 0.5, 0.05, o));
}

TEST(Preroll, AFasterPaceThanThePriorCountsInProportionToTheWorkDone) {
  PrerollOptions o;
  o.progress_trust_fraction = 0.25;
  // The prior says 4 s; the pace says 2 s for the whole.
  const double early = remaining_vocode_seconds(4.0, 0.1, 0.05, o);  // 20 % trusted: 3.6 s total
  EXPECT_NEAR(early, 3.6 * 0.95, 1e-12);
  const double later = remaining_vocode_seconds(4.0, 0.5, 0.25, o);  // trusted: 2 s total
  EXPECT_NEAR(later, 2.0 * 0.75, 1e-12);
  EXPECT_NEAR(remaining_vocode_seconds(4.0, 1.6, 0.8, o), 2.0 * 0.2, 1e-12);
  EXPECT_DOUBLE_EQ(remaining_vocode_seconds(4.0, 2.0, 1.0, o), 0.0) << "all done";
}

// A simulated machine for the rule re-decided at each progress point (no wall clock): issue 16's shape,
// 2 s held while the 14 s segment is vocoded, a 20 s one after it. The pace is early_rtf (seconds per audio
// second) up to the fraction slow_from of the segment's work, late_rtf after it. At each progress point the
// engine sees the elapsed time and the last piece's pace; playback starts there when the held audio covers
// the rule, or at the release time it sets if that comes before the next point.
struct Machine {
  double early_rtf, late_rtf, slow_from;
};
struct Outcome {
  double start, ready;  // when playback starts and when the segment is vocoded (its vocoding started at 0)
};
Outcome simulate(const Machine& m, const PrerollOptions& o) {
  const double held = 2.0;
  const std::vector<double> audio{14.0, 20.0};
  const std::vector<double> points{0.05, 0.15, 0.18, 0.27, 0.40, 0.62, 0.67, 0.80, 1.0};  // a generator-like split
  const VocodeSpeed prior{0.25, o.segment_overhead_seconds};
  auto time_at = [&](double f) {
    const double a = audio.front();
    return f <= m.slow_from ? f * a * m.early_rtf : m.slow_from * a * m.early_rtf + (f - m.slow_from) * a * m.late_rtf;
  };
  double last_t = 0, last_f = 0;
  for (size_t i = 0; i < points.size(); ++i) {
    const double f = points[i], t = time_at(f);
    const double recent = last_f > 0 ? (t - last_t) / (f - last_f) : 0.0;
    const double remaining = remaining_vocode_seconds(prior.seconds(audio.front()), t, f, o, recent);
    VocodeSpeed live = prior;
    if (f < 1) live.per_second = std::max(0.0, remaining / (1 - f) - prior.overhead_seconds) / audio.front();
    const double need = preroll_needed_seconds(audio, std::vector<double>{remaining, live.seconds(audio[1])}, o);
    const double release = t + std::max(0.0, need - held);
    if (i + 1 == points.size() || release <= time_at(points[i + 1])) return {release, time_at(1.0)};
    last_t = t;
    last_f = f;
  }
  return {-1, time_at(1.0)};
}

TEST(Preroll, ProgressRuleStartsLongBeforeTheSegmentIsVocodedOnAFastMachine) {
  const PrerollOptions o;  // the defaults
  for (const double rtf : {0.08, 0.12, 0.15}) {
    SCOPED_TRACE(rtf);
    const Outcome out = simulate({rtf, rtf, 1.0}, o);
    EXPECT_LE(out.ready, out.start + 2.0) << "late";
    EXPECT_LT(out.start, 0.6 * out.ready) << "a fast machine starts long before the segment is vocoded";
    // The first rule (decided when the vocoding starts, at the prior's speed plus the acoustic model's):
    const double old_need = preroll_needed_seconds({14.0, 20.0}, 0.25 + 0.06, o);
    EXPECT_LT(out.start, old_need - 2.0);
  }
}

// However the pace changes, the segment is never late once a progress point has seen the slower pace
// before playback starts: the rule holds on. (A slowdown after the start is what the margins are for.)
TEST(Preroll, ProgressRuleNeverStartsTooEarlyForASlowdownItHasSeen) {
  const PrerollOptions o;
  int seen = 0, slowdowns_seen = 0;
  for (const double early : {0.08, 0.12, 0.17, 0.25, 0.4})
    for (const double late : {0.1, 0.17, 0.3, 0.6, 1.0, 1.5})
      for (const double from : {0.1, 0.16, 0.3, 0.5, 0.7}) {
        const Machine m{early, late, from};
        const Outcome out = simulate(m, o);
        SCOPED_TRACE(testing::Message() << early << " then " << late << " from " << from);
        ASSERT_GE(out.start, 0);
        // A point after the slowdown came before the start, or the pace did not drop beyond the margin.
        const double first_point_after = from < 0.15 ? 0.15 : from < 0.18 ? 0.18 : from < 0.27 ? 0.27 : from < 0.4 ? 0.4 : from < 0.62 ? 0.62 : from < 0.67 ? 0.67 : 0.8;
        const double a = 14.0, seen_at = from * a * early + (first_point_after - from) * a * late;
        if (late <= early * (1 + o.margin_share) || out.start >= seen_at) {
          ++seen;
          if (late > early * (1 + o.margin_share)) ++slowdowns_seen;
          EXPECT_LE(out.ready, out.start + 2.0) << "late by " << out.ready - out.start - 2.0 << " s";
        }
      }
  EXPECT_GT(seen, 80);
  EXPECT_GT(slowdowns_seen, 20) << "slowdowns beyond the margins must be among the cases held on";
}

}  // namespace

// The early start's estimate of the exact path's restart (curves and decoder half over the whole segment):
// a fixed part and a part per second of segment, so that a measurement on a short segment does not double a
// long one's estimate.
TEST(EarlyRestart, NothingMeasuredFollowsTheSlicePaceButNeverExceedsTheOldRule) {
  EarlyRestartEstimate e;
  using E = EarlyRestartEstimate;
  // Slices at 0.1 s per audio second: 1.5 x 0.052 x 0.1 x (20 + 8.5) s, under the old 0.02 x 20 s.
  EXPECT_NEAR(e.seconds(20, 0.1), E::kFirstMargin * E::kSliceShare * 0.1 * (20 + E::kFixedSeconds), 1e-12);
  EXPECT_LT(e.seconds(20, 0.1), E::kUnmeasuredPerSecond * 20);
  // A slow machine (or the inflated pace of a first slice, look-ahead included): the old rule caps it.
  EXPECT_DOUBLE_EQ(e.seconds(20, 0.6), E::kUnmeasuredPerSecond * 20);
  // No pace known: the old rule.
  EXPECT_DOUBLE_EQ(e.seconds(12, 0), E::kUnmeasuredPerSecond * 12);
}

TEST(EarlyRestart, AShortSegmentsRestartDoesNotDoubleALongOnes) {
  // The yardstick machine: 47 ms + 5.5 ms per second of segment.
  auto restart = [](double s) { return 0.047 + 0.0055 * s; };
  EarlyRestartEstimate e;
  e.measured(5, restart(5));
  const double per_second_alone = restart(5) / 5 * 20;  // what a figure per second of segment predicted
  EXPECT_NEAR(e.seconds(20, 0.1), restart(20), 0.1 * restart(20));
  EXPECT_GT(per_second_alone, 1.5 * restart(20));
  // And the other way round: a long segment's measurement does not halve a short one's estimate.
  EarlyRestartEstimate f;
  f.measured(20, restart(20));
  EXPECT_NEAR(f.seconds(4, 0.1), restart(4), 0.1 * restart(4));
}

TEST(EarlyRestart, FollowsASlowerMeasurementAtOnceAndAFasterOneHalfway) {
  EarlyRestartEstimate e;
  e.measured(10, 0.1);
  const double first = e.per_second;
  EXPECT_NEAR(first, 0.1 / (10 + EarlyRestartEstimate::kFixedSeconds), 1e-12);
  e.measured(10, 0.3);  // three times slower: at once
  EXPECT_NEAR(e.seconds(10, 0.1), 0.3, 1e-12);
  e.measured(10, 0.1);  // faster again: halfway
  EXPECT_NEAR(e.seconds(10, 0.1), 0.2, 1e-12);
  e.measured(10, 0);  // no measurement: unchanged
  EXPECT_NEAR(e.seconds(10, 0.1), 0.2, 1e-12);
}
