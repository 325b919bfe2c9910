// Word timestamps follow KPipeline.join_timestamps; expected values are worked out by hand from its rules
// (half-frames, -3 offset on the first boundary token, spaces split between neighbours).
#include <gtest/gtest.h>

#include "engine/word_timing.h"

using namespace kokoro;

TEST(WordTiming, FollowsTheReferenceRules) {
  // "ab cd." -> words "ab" [0,2) and "cd" [3,5), punctuation "." [5,6).
  Segment seg;
  seg.phonemes = "ab cd.";
  seg.words = {{0, 2, 0, 2}, {3, 5, 3, 5}};
  //                      bos  a  b  ' ' c  d  .  eos
  const std::vector<int64_t> dur{5, 2, 3, 4, 1, 2, 6, 7};
  const auto t = word_timings(seg, dur);
  ASSERT_EQ(t.size(), 2u);
  // left = right = 2*(5-3) = 4. "ab": start 4; left = 4 + 2*5 + 4 = 18 -> end 18; right = 22.
  EXPECT_DOUBLE_EQ(t[0].start_s, 4 / 80.0);
  EXPECT_DOUBLE_EQ(t[0].end_s, 18 / 80.0);
  // "cd": start 18; left = 22 + 2*3 = 28 -> end 28 (no space after: "." follows directly).
  EXPECT_DOUBLE_EQ(t[1].start_s, 18 / 80.0);
  EXPECT_DOUBLE_EQ(t[1].end_s, 28 / 80.0);
  EXPECT_EQ(t[1].text_begin, 3u);
}

TEST(WordTiming, MultiByteSymbolsAndShortInputs) {
  Segment seg;
  seg.phonemes = "ðə kˈæt";  // ð, ə, ˈ, æ are multi-byte: token indices are code points
  seg.words = {{0, 3, 0, 4}, {4, 7, 5, seg.phonemes.size()}};
  const std::vector<int64_t> dur{3, 2, 2, 1, 1, 1, 1, 1, 4};  // bos, ð ə ' ' k ˈ æ t, eos
  const auto t = word_timings(seg, dur);
  ASSERT_EQ(t.size(), 2u);
  EXPECT_DOUBLE_EQ(t[0].start_s, 0.0);           // 2*max(0, 3-3) = 0
  EXPECT_DOUBLE_EQ(t[0].end_s, (0 + 8 + 1) / 80.0);
  EXPECT_DOUBLE_EQ(t[1].start_s, 9 / 80.0);
  EXPECT_DOUBLE_EQ(t[1].end_s, (10 + 8) / 80.0);
  EXPECT_TRUE(word_timings(seg, {1, 2}).empty());
}
