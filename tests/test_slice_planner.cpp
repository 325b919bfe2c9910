// The slice planner (engine/slice_planner.h) without the model: where slices end, and the continuity rule
// proven on a deterministic simulated device (issue 16: no wall clock, the "machine" is a speed figure).
#include <gtest/gtest.h>

#include <algorithm>
#include <random>

#include "core/error.h"
#include "engine/slice_planner.h"

using namespace kokoro;

namespace {

constexpr double kSpc = 300.0 / 24000.0;  // seconds per generator column
constexpr int64_t kCtx = 8, kMin = 3;

// A synthetic sentence: words of 0.15-0.6 s separated by gaps of 1-2 columns, a pause of 0.2 s every ~7 words.
std::vector<WordTimes> words_for(double seconds, uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<double> len(0.15, 0.6);
  std::vector<WordTimes> w;
  double t = 0.1;
  for (int i = 0; t < seconds - 0.4; ++i) {
    const double d = std::min(len(rng), seconds - 0.1 - t);
    w.push_back({t, t + d});
    t += d + ((i % 7 == 6) ? 0.2 : 0.025);
  }
  return w;
}

SlicePlanner planner_for(double seconds, uint32_t seed, SliceSchedule s = {}) {
  const int64_t T = static_cast<int64_t>(seconds / kSpc);
  return SlicePlanner(s, T, kSpc, kCtx, kMin, slice_borders_from_words(words_for(seconds, seed), kSpc, T));
}

bool is_border(const SlicePlanner& p, int64_t c) {
  if (c == p.columns()) return true;
  for (const SliceBorder& b : p.borders())
    if (b.column == c) return true;
  return false;
}

// Plays a segment through a device that starts with `queued` seconds ahead, the slices computed one after
// the other at speed `rtf` (compute = planner.compute_seconds). measured: each slice is planned from the
// queue the device really has (the engine's measured bound) as well as the nominal plan. Returns the total
// time the device would have played silence after the first slice, and counts the slices.
double simulate(const SlicePlanner& p, double queued, double rtf, bool measured, int* slices = nullptr,
                double nominal_rtf = 0.35) {
  const std::vector<int64_t> plan = p.nominal_plan(queued);
  double q = queued, dry = 0;
  int n = 0;
  for (int64_t from = 0; from < p.columns(); ++n) {
    int64_t end = *std::upper_bound(plan.begin(), plan.end(), from);
    if (measured) end = std::min(end, p.next_end(from, q, rtf));
    const double c = p.compute_seconds(from, end, rtf);
    if (from > 0 || queued > 0) dry += std::max(0.0, c - q);  // the first slice of an utterance is the TTFA
    q = std::max(0.0, q - c) + static_cast<double>(end - from) * kSpc;
    from = end;
  }
  if (slices) *slices = n;
  return dry;
}

}  // namespace

TEST(SlicePlanner, FirstSliceIsTheShortestWordAlignedPieceOfTheWantedLength) {
  const SlicePlanner p = planner_for(6.0, 1);
  SliceSchedule s;
  const int64_t end = p.next_end(0, 0.0, 0.35);
  EXPECT_TRUE(is_border(p, end));
  EXPECT_GE(end * kSpc, s.first_slice_seconds - 1e-9);
  EXPECT_LE(end * kSpc, 1.6 * s.first_slice_seconds + 0.6);  // a word at most past the window
  // No earlier border would have been long enough.
  for (const SliceBorder& b : p.borders())
    if (b.column < end) EXPECT_LT(b.column * kSpc, s.first_slice_seconds * 1.6);
}

TEST(SlicePlanner, AShortSegmentIsOneSlice) {
  const SlicePlanner p = planner_for(0.8, 2);
  EXPECT_EQ(p.next_end(0, 0.0, 0.35), p.columns());
  EXPECT_EQ(p.nominal_plan(0).size(), 1u);
}

TEST(SlicePlanner, PlentyOfQueuedAudioMeansOneSliceForTheRest) {
  const SlicePlanner p = planner_for(6.0, 3);
  EXPECT_EQ(p.next_end(0, 30.0, 0.35), p.columns());
  EXPECT_EQ(p.next_end(100, 30.0, 0.35), p.columns());
}

TEST(SlicePlanner, NominalPlanEndsAtWordBordersGrowsAndIsDeterministic) {
  for (uint32_t seed = 0; seed < 20; ++seed) {
    const SlicePlanner p = planner_for(3.0 + seed, seed);
    const std::vector<int64_t> plan = p.nominal_plan(0);
    ASSERT_FALSE(plan.empty());
    EXPECT_EQ(plan.back(), p.columns());
    int64_t from = 0;
    for (int64_t end : plan) {
      EXPECT_GT(end, from);
      EXPECT_TRUE(is_border(p, end)) << end;
      from = end;
    }
    EXPECT_EQ(plan, p.nominal_plan(0));
    // Slices never shrink after the first (the queue only grows on a machine at the nominal speed).
    for (size_t i = 2; i < plan.size(); ++i)
      if (plan[i] != p.columns()) EXPECT_GE(plan[i] - plan[i - 1], plan[1] - plan[0] - 40) << "seed " << seed;
  }
}

// The continuity rule: on a machine at the nominal speed or faster, the nominal plan never runs dry after
// the first slice, for sentences of 1 to 40 s.
TEST(SlicePlanner, NominalPlanNeverRunsDryAtTheNominalSpeed) {
  for (uint32_t seed = 0; seed < 40; ++seed) {
    const SlicePlanner p = planner_for(1.0 + seed, seed);
    for (double rtf : {0.35, 0.2, 0.1}) {
      int slices = 0;
      EXPECT_EQ(simulate(p, 0.0, rtf, false, &slices), 0.0) << "seed " << seed << " rtf " << rtf;
      EXPECT_LE(slices, 12);
    }
  }
}

// Slower machines than planned for (load): the measured bound shortens the slices so that nothing runs dry
// as long as the machine is faster than real time with room for the safety margin; the nominal plan alone
// would run dry.
TEST(SlicePlanner, MeasuredBoundKeepsASlowMachineContinuous) {
  int nominal_dry = 0;
  for (uint32_t seed = 0; seed < 40; ++seed) {
    const SlicePlanner p = planner_for(4.0 + seed, seed);
    EXPECT_EQ(simulate(p, 0.0, 0.5, true), 0.0) << "seed " << seed;
    if (simulate(p, 0.0, 0.5, false) > 0) ++nominal_dry;
  }
  EXPECT_GT(nominal_dry, 0) << "the slow machine should be slow enough to matter";
}

// A machine slower than real time must run dry; then it does so only at word borders (every slice ends at
// one), and the planner still makes progress.
TEST(SlicePlanner, TooSlowAMachineRunsDryOnlyAtWordBorders) {
  const SlicePlanner p = planner_for(10.0, 5);
  int slices = 0;
  EXPECT_GT(simulate(p, 0.0, 1.5, true, &slices), 0.0);
  int64_t from = 0;
  double q = 0.5;
  while (from < p.columns()) {
    const int64_t end = p.next_end(from, q, 1.5);
    EXPECT_GT(end, from);
    EXPECT_TRUE(is_border(p, end));
    from = end;
    q = 0.01;
  }
}

// A later segment starts with the previous one's audio still queued: its first slice is longer than an
// utterance's first slice.
TEST(SlicePlanner, QueuedAudioLengthensTheFirstSliceOfALaterSegment) {
  const SlicePlanner p = planner_for(12.0, 7);
  EXPECT_GT(p.next_end(0, 3.0, 0.35), p.next_end(0, 0.0, 0.35));
}

TEST(SlicePlanner, BordersFromWordsSitInTheGaps) {
  const std::vector<WordTimes> w{{0.1, 0.5}, {0.55, 0.9}, {1.2, 1.6}};
  const auto b = slice_borders_from_words(w, kSpc, 200);
  ASSERT_EQ(b.size(), 2u);
  EXPECT_NEAR(b[0].column * kSpc, 0.525, kSpc);
  EXPECT_NEAR(b[0].gap_seconds, 0.05, 1e-9);
  EXPECT_NEAR(b[1].column * kSpc, 1.05, kSpc);
  EXPECT_NEAR(b[1].gap_seconds, 0.3, 1e-9);
}

TEST(SlicePlanner, BadSettingsAreErrors) {
  SliceSchedule s;
  s.nominal_rtf = 0;
  EXPECT_THROW(SlicePlanner(s, 100, kSpc, kCtx, kMin, {}), Error);
  EXPECT_THROW(SlicePlanner(SliceSchedule{}, 0, kSpc, kCtx, kMin, {}), Error);
  const SlicePlanner p = planner_for(2.0, 1);
  EXPECT_THROW(p.next_end(p.columns(), 1.0, 0.35), Error);
}
