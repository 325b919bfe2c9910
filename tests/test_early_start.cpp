// Slice mode's early start (engine/stream_engine_early.cpp) on the real model: a long segment's first
// early_frames of audio come from the whole decoder in slices with the early predictor's statistics, and the
// exact path takes over after a crossfade. Checked against slice mode without it, on the same segments:
//   - the same number of samples; from the crossfade's end on the same audio (float rounding: the slices end
//     elsewhere); the early frames close to it (the same speech, other statistics), nothing audible where it
//     is silent, no click at the splice;
//   - short segments and a first slice of any length: no early start, or the same audio;
//   - the early start is a property of the segment, not of timing: a recording equals itself.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>

#include "tests/stream_engine_support.h"
#include "tests/test_util.h"

using namespace kokoro;
using namespace kokoro::stream_test;

namespace {

// ~6 s: one sentence, one segment (over early_start_min_frames).
const char* kLongSentence =
    "When the morning train finally pulled into the quiet station, the travellers gathered their heavy bags and "
    "stepped out into the cold air.";
const char* kShortSentence = "Turn left at the next light.";
// ~12 s, one sentence (bench/corpus/paragraph.txt's second).
const char* kVeryLongSentence =
    "Fishermen walked down to the harbor to count the boats, and they found that every one of them had held its "
    "mooring through the night, although the old wooden pier had lost several planks and a lamp post lay across the "
    "path.";

StreamOptions with_early(const Engine& e) {
  StreamOptions so = recommended_slice_options(e.synth->model());
  EXPECT_NE(so.predictor, nullptr) << "no statistics predictor for the test model (data/kokoro-v1_0.stats-predictor.kokoro)";
  EXPECT_NE(so.early_predictor, nullptr)
      << "no early predictor for the test model (data/kokoro-v1_0.early-stats-predictor.kokoro)";
  return so;
}

StreamOptions without_early(const Engine& e) {
  StreamOptions so = with_early(e);
  so.early_predictor = nullptr;
  return so;
}

std::vector<float> record(const Engine& e, const StreamOptions& so, const std::string& text, StreamEngineStats* stats) {
  RecordingSink sink;
  // Whole sentences: the long sentence is one segment.
  StreamEngine eng(e.synth, whole_sentence_frontend(), e.voice, sink, EngineVoice{1.0f, false, 7, false}, SynthesisMode::slice, so);
  std::string error;
  eng.on_report([&](const UtteranceReport& r) { error += r.error; });
  eng.say(text);
  EXPECT_TRUE(eng.wait_idle(100 * kTimeScale));
  EXPECT_EQ(error, "");
  *stats = eng.stats();
  return sink.audio();
}

double rms(const std::vector<float>& a, size_t from, size_t to) {
  double s = 0;
  for (size_t i = from; i < to; ++i) s += double(a[i]) * a[i];
  return std::sqrt(s / std::max<size_t>(1, to - from));
}

float max_step(const std::vector<float>& a, size_t from, size_t to) {
  float m = 0;
  for (size_t i = from + 1; i < to; ++i) m = std::max(m, std::fabs(a[i] - a[i - 1]));
  return m;
}

// Records `text` (one segment) with and without the early start; the early start's frames are the first
// `early_frames` (as the engine computes them from the segment's length).
void expect_early_start_replaces_only_its_frames(const char* text, int64_t early_frames) {
  const Engine& e = engine();
  ASSERT_TRUE(e.synth) << e.error;
  Watchdog dog(240);
  const StreamOptions so = with_early(e);
  ASSERT_NE(so.early_predictor, nullptr);
  StreamEngineStats with_stats, without_stats;
  const std::vector<float> early = record(e, so, text, &with_stats);
  const std::vector<float> plain = record(e, without_early(e), text, &without_stats);
  EXPECT_EQ(with_stats.early_starts, 1u);
  EXPECT_EQ(without_stats.early_starts, 0u);
  ASSERT_EQ(early.size(), plain.size()) << "the early start must not change the segment's length";
  ASSERT_GE(plain.size(), size_t(so.early_start_min_frames) * kSamplesPerFrame);

  EXPECT_EQ(so.early_frames_for(int64_t(plain.size() / kSamplesPerFrame)), early_frames);
  const size_t early_end = size_t(early_frames) * kSamplesPerFrame;
  const size_t splice_end = early_end + size_t(so.early_crossfade_frames) * kSamplesPerFrame;
  float after = 0, before = 0, peak = 0;
  for (size_t i = 0; i < plain.size(); ++i) {
    peak = std::max(peak, std::fabs(plain[i]));
    if (i >= splice_end) after = std::max(after, std::fabs(early[i] - plain[i]));
    if (i < early_end) before = std::max(before, std::fabs(early[i] - plain[i]));
  }
  const double rms_early = rms(early, 0, early_end), rms_plain = rms(plain, 0, early_end);
  std::printf("early start: first %zu samples max |diff| %.3e (rms %.4f vs %.4f), after the crossfade %.2e (peak %.3f)\n",
              early_end, before, rms_early, rms_plain, after, peak);
  EXPECT_GT(peak, 0.05f);
  EXPECT_LT(after, 1e-4f) << "after the crossfade the audio is slice mode's without an early start";
  EXPECT_GT(before, 0.0f) << "the early frames come from the early run, not from the exact path";
  // The same speech with other statistics: its level within a factor of two of the exact path's.
  EXPECT_GT(rms_early, 0.5 * rms_plain);
  EXPECT_LT(rms_early, 2.0 * rms_plain);
  // Nothing audible where slice mode without it is silent (the leading silence).
  size_t lead = 0;
  while (lead < early_end && std::fabs(plain[lead]) < 1e-3f) ++lead;
  float leak = 0;
  for (size_t i = 0; i < lead; ++i) leak = std::max(leak, std::fabs(early[i]));
  EXPECT_LT(leak, 3e-3f) << "sound before speech where slice mode is silent (" << lead << " silent samples)";
  // No click at the splice: no sample-to-sample step there larger than the speech around it makes.
  const size_t around = 2 * kSamplesPerFrame;
  const float step_early = max_step(early, early_end - around, splice_end + around);
  const float step_plain = max_step(plain, early_end - around, splice_end + around);
  EXPECT_LT(step_early, 1.5f * step_plain + 1e-3f) << "a click where the exact path takes over";
}

TEST(EarlyStart, ReplacesOnlyTheFirstFramesOfALongSegment) { expect_early_start_replaces_only_its_frames(kLongSentence, 12); }

// A 12 s segment (499 frames): its early audio is 3 % of it (15 frames), which covers the exact path's longer
// restart.
TEST(EarlyStart, ReplacesOnlyTheFirstFramesOfAVeryLongSegment) {
  expect_early_start_replaces_only_its_frames(kVeryLongSentence, 15);
}

TEST(EarlyStart, ShortSegmentsWaitForTheirDecoderHalfAsBefore) {
  const Engine& e = engine();
  ASSERT_TRUE(e.synth) << e.error;
  Watchdog dog(240);
  StreamEngineStats with_stats, without_stats;
  const std::vector<float> a = record(e, with_early(e), kShortSentence, &with_stats);
  const std::vector<float> b = record(e, without_early(e), kShortSentence, &without_stats);
  EXPECT_EQ(with_stats.early_starts, 0u) << "a 2 s sentence is under early_start_min_frames";
  ASSERT_EQ(a.size(), b.size());
  EXPECT_TRUE(std::equal(a.begin(), a.end(), b.begin()));
  // A long segment with the minimum above its length: no early start either.
  StreamOptions high = with_early(e);
  high.early_start_min_frames = 100000;
  StreamEngineStats high_stats;
  const std::vector<float> c = record(e, high, kLongSentence, &high_stats);
  const std::vector<float> d = record(e, without_early(e), kLongSentence, &without_stats);
  EXPECT_EQ(high_stats.early_starts, 0u);
  ASSERT_EQ(c.size(), d.size());
  EXPECT_TRUE(std::equal(c.begin(), c.end(), d.begin()));
}

// The early run's audio does not depend on where its slices end either, nor on timing: a first slice of one
// frame or of the whole early part, and a second run, give the same audio.
TEST(EarlyStart, SameAudioWhereverSlicesEnd) {
  const Engine& e = engine();
  ASSERT_TRUE(e.synth) << e.error;
  Watchdog dog(240);
  StreamOptions one = with_early(e), whole = with_early(e);
  one.first_chunk_frames = 1;
  whole.first_chunk_frames = whole.early_frames;
  StreamEngineStats s1, s2, s3, s4;
  const std::vector<float> a = record(e, with_early(e), kLongSentence, &s1);
  const std::vector<float> b = record(e, one, kLongSentence, &s2);
  const std::vector<float> c = record(e, whole, kLongSentence, &s3);
  const std::vector<float> again = record(e, with_early(e), kLongSentence, &s4);
  EXPECT_EQ(s1.early_starts + s2.early_starts + s3.early_starts + s4.early_starts, 4u);
  ASSERT_EQ(a.size(), b.size());
  ASSERT_EQ(a.size(), c.size());
  ASSERT_EQ(a.size(), again.size());
  float db = 0, dc = 0;
  for (size_t i = 0; i < a.size(); ++i) {
    db = std::max(db, std::fabs(a[i] - b[i]));
    dc = std::max(dc, std::fabs(a[i] - c[i]));
  }
  EXPECT_LT(db, 1e-4f) << "a first slice of one frame";
  EXPECT_LT(dc, 1e-4f) << "a first slice of the whole early part";
  EXPECT_TRUE(std::equal(a.begin(), a.end(), again.begin())) << "the same run twice";
}

// The early audio's length: early_frames up to a 10 s segment, then 3 % of it (the exact path's restart, which the
// early audio covers, grows with the segment); a function of the length alone.
TEST(EarlyStart, EarlyAudioGrowsWithALongSegment) {
  StreamOptions so;
  EXPECT_EQ(so.early_frames_for(120), so.early_frames);
  EXPECT_EQ(so.early_frames_for(400), 12);
  EXPECT_EQ(so.early_frames_for(401), 13);
  EXPECT_EQ(so.early_frames_for(812), 25);
  so.early_frames_share = 0;
  EXPECT_EQ(so.early_frames_for(812), so.early_frames);
}

}  // namespace
