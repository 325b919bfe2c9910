// Text that streams in, its sentence cuts (frontend/sentence_feed.h): a sentence is complete once the character
// after its end has come, by the frontend's own rules (no cut after "Dr." or inside "3.50", a closing quote
// stays with its sentence), a line break ends one at once, and the cuts are the same however the text is split
// into pieces (every two-piece split, byte by byte, at once): the property that makes streamed audio equal
// whole-text audio. Also characters split between pieces, text without any end, and runs of sentence marks.
#include <gtest/gtest.h>

#include <random>
#include <string>
#include <vector>

#include "frontend/frontend.h"
#include "frontend/sentence_feed.h"
#include "frontend/utf8.h"

using namespace kokoro;

namespace {

const Frontend& english() {
  static const Frontend fe(FrontendOptions{});
  return fe;
}

// The sentences of `text` fed in pieces cut at `cuts` (ascending byte offsets), then ended.
std::vector<std::string> sentences(const std::string& text, const std::vector<size_t>& cuts, size_t max_bytes = 4096) {
  SentenceFeed feed(english(), max_bytes);
  std::vector<std::string> out;
  size_t at = 0, expected_offset = 0;
  auto take = [&](const SentenceFeed::Sentence& s) {
    EXPECT_EQ(s.offset, expected_offset) << "sentences must tile the text";
    expected_offset += s.text.size();
    out.push_back(s.text);
  };
  for (size_t cut : cuts) {
    feed.append(std::string_view(text).substr(at, cut - at));
    at = cut;
    while (auto s = feed.next()) take(*s);
  }
  feed.append(std::string_view(text).substr(at));
  while (auto s = feed.next()) take(*s);
  if (auto s = feed.rest(true)) take(*s);
  EXPECT_EQ(expected_offset, text.size());
  return out;
}

std::vector<std::string> at_once(const std::string& text) { return sentences(text, {}); }

std::vector<std::string> byte_by_byte(const std::string& text) {
  std::vector<size_t> cuts;
  for (size_t i = 1; i < text.size(); ++i) cuts.push_back(i);
  return sentences(text, cuts);
}

TEST(SentenceFeed, CutsWhereTheFrontendEndsASentence) {
  const std::string text = "Dr. Smith paid $3.50 for it. \"Really?\" he asked. Then he left!";
  const std::vector<std::string> want = {"Dr. Smith paid $3.50 for it.", " \"Really?\"", " he asked.", " Then he left!"};
  EXPECT_EQ(at_once(text), want);
}

TEST(SentenceFeed, SameSentencesHoweverTheTextIsSplit) {
  const std::string text =
      "Mr. Brown met Ms. Green at 5 p.m. on Jan. 3. They talked about e.g. the 2.5% rate! "
      "Was it fair? She said: \"No.\" (He agreed.)\nA new line\nand the end… Really.";
  const std::vector<std::string> whole = at_once(text);
  ASSERT_GE(whole.size(), 4u);
  EXPECT_EQ(byte_by_byte(text), whole);
  for (size_t i = 1; i < text.size(); ++i) ASSERT_EQ(sentences(text, {i}), whole) << "split at byte " << i;
  std::mt19937 rng(7);
  for (int trial = 0; trial < 20; ++trial) {
    std::vector<size_t> cuts;
    for (size_t at = 0;;) {
      at += 1 + rng() % 12;
      if (at >= text.size()) break;
      cuts.push_back(at);
    }
    ASSERT_EQ(sentences(text, cuts), whole) << "trial " << trial;
  }
}

TEST(SentenceFeed, ASentenceEndsOnlyOnceTheNextCharacterShowsIt) {
  SentenceFeed feed(english(), 4096);
  feed.append("It costs 3.");
  EXPECT_FALSE(feed.next()) << "\"3.\" may still become \"3.5\"";
  feed.append("5 dollars.");
  EXPECT_FALSE(feed.next());
  feed.append(" ");
  auto s = feed.next();
  ASSERT_TRUE(s);
  EXPECT_EQ(s->text, "It costs 3.5 dollars.");
  EXPECT_FALSE(feed.next());
  feed.append("No end yet");
  EXPECT_FALSE(feed.next());
  EXPECT_TRUE(feed.pending_text());
  s = feed.rest(false);  // what the pause flush takes
  ASSERT_TRUE(s);
  EXPECT_EQ(s->text, " No end yet");
  EXPECT_EQ(s->offset, 21u);
  EXPECT_FALSE(feed.pending_text());
}

TEST(SentenceFeed, ALineBreakEndsASentenceAtOnce) {
  SentenceFeed feed(english(), 4096);
  feed.append("A line without a stop\n");
  auto s = feed.next();
  ASSERT_TRUE(s);
  EXPECT_EQ(s->text, "A line without a stop\n");
  EXPECT_EQ(at_once("one\ntwo\r\n\nthree"), (std::vector<std::string>{"one\n", "two\r\n", "\n", "three"}));
}

TEST(SentenceFeed, ACharacterSplitBetweenPiecesWaitsForItsLastByte) {
  const std::string text = "Café au lait. Ça va? Über 5 €. 今日は。";
  EXPECT_EQ(byte_by_byte(text), at_once(text));
  SentenceFeed feed(english(), 4096);
  feed.append("Ok. \xE2\x82");  // the first two bytes of "€"
  auto s = feed.next();
  ASSERT_TRUE(s);
  EXPECT_EQ(s->text, "Ok.");
  s = feed.rest(false);  // a pause flush takes the space, not half a character
  ASSERT_TRUE(s);
  EXPECT_EQ(s->text, " ");
  EXPECT_EQ(feed.pending_bytes(), 2u);
  EXPECT_FALSE(feed.rest(false));
  feed.append("\xAC");
  s = feed.rest(false);
  ASSERT_TRUE(s);
  EXPECT_EQ(s->text, "€");
  // At the end of the text an unfinished character goes too (the frontend reads it as U+FFFD).
  feed.append("\xE2\x82");
  s = feed.rest(true);
  ASSERT_TRUE(s);
  EXPECT_EQ(s->text, "\xE2\x82");
}

TEST(SentenceFeed, TextWithoutAnEndIsCutAtMaxBytesTheSameWayEveryTime) {
  std::string text;
  while (text.size() < 1000) text += "and on and on ";
  const std::vector<std::string> whole = sentences(text, {}, 256);
  ASSERT_GE(whole.size(), 4u);
  for (const std::string& s : whole) EXPECT_LE(s.size(), 256u);
  std::vector<size_t> cuts;
  for (size_t i = 7; i < text.size(); i += 7) cuts.push_back(i);
  EXPECT_EQ(sentences(text, cuts, 256), whole);
}

TEST(SentenceFeed, RunsOfMarksAndBadBytesEndPromptly) {
  // ". . . ." has no word before its marks: no sentence ends there; the questions to the frontend are bounded.
  std::string dots;
  for (int i = 0; i < 2000; ++i) dots += ". ";
  const std::vector<std::string> cut = sentences(dots, {}, 1024);
  ASSERT_FALSE(cut.empty());
  std::string joined;
  for (const std::string& s : cut) joined += s;
  EXPECT_EQ(joined, dots);
  const std::string bad = "\xff\xfe Hello. \xc3\x28 world. \xe2\x82";
  EXPECT_EQ(byte_by_byte(bad), at_once(bad));
}

TEST(Utf8, IncompleteTail) {
  EXPECT_EQ(utf8::incomplete_tail(""), 0u);
  EXPECT_EQ(utf8::incomplete_tail("abc"), 0u);
  EXPECT_EQ(utf8::incomplete_tail("a\xC3"), 1u);
  EXPECT_EQ(utf8::incomplete_tail("a\xC3\xA9"), 0u);
  EXPECT_EQ(utf8::incomplete_tail("\xE2\x82"), 2u);
  EXPECT_EQ(utf8::incomplete_tail("\xF0\x9F\x98"), 3u);
  EXPECT_EQ(utf8::incomplete_tail("\xF0\x9F\x98\x80"), 0u);
  EXPECT_EQ(utf8::incomplete_tail("\xC0"), 0u) << "an overlong lead never completes";
  EXPECT_EQ(utf8::incomplete_tail("\xE0\x80"), 0u) << "an overlong second byte never completes";
  EXPECT_EQ(utf8::incomplete_tail("\xED\xA0"), 0u) << "a surrogate never completes";
  EXPECT_EQ(utf8::incomplete_tail("\xF5"), 0u);
  EXPECT_EQ(utf8::incomplete_tail("\x80\x80"), 0u);
}

}  // namespace
