// Text a person would not read out as written (issue 32), through Frontend::segment, where the engine turns
// text into segments (so kokoro-say, the C API and every synthesis mode get the same): text with nothing
// speakable is a bounded pause and never phonemes, repeated characters are read a few times, emoji are read
// by name once per run or dropped on request.
#include <gtest/gtest.h>

#include <map>
#include <memory>
#include <string>

#include "frontend/frontend.h"
#include "frontend/utf8.h"

using namespace kokoro;

namespace {

const Frontend& frontend(const std::string& lang = "en-us", FrontendOptions::Emoji emoji = FrontendOptions::Emoji::read) {
  static std::map<std::string, std::unique_ptr<Frontend>> cache;
  auto& fe = cache[lang + (emoji == FrontendOptions::Emoji::drop ? "/drop" : "")];
  if (!fe) {
    FrontendOptions opt;
    opt.language = lang;
    opt.emoji = emoji;
    fe = std::make_unique<Frontend>(opt);
  }
  return *fe;
}

std::string phonemes(const std::vector<Segment>& segs) {
  std::string s;
  for (const auto& seg : segs) s += (s.empty() ? "" : " | ") + (seg.phonemes.empty() ? "(pause)" : seg.phonemes);
  return s;
}

std::string repeat(const std::string& piece, size_t n, const std::string& sep = "") {
  std::string s;
  for (size_t i = 0; i < n; ++i) s += (i ? sep : "") + piece;
  return s;
}

void expect_one_pause(const std::vector<Segment>& segs, const std::string& text, const std::string& what) {
  ASSERT_EQ(segs.size(), 1u) << what << ": " << phonemes(segs);
  EXPECT_TRUE(segs[0].phonemes.empty()) << what;
  EXPECT_TRUE(segs[0].words.empty()) << what;
  EXPECT_DOUBLE_EQ(segs[0].pause_before, kSilentTextPause) << what;
  EXPECT_LE(segs[0].text_end, text.size()) << what;
}

}  // namespace

// Issue 32's hand-tried input: 200 periods with spaces were 25.8 s of murmur; now one pause of 0.75 s.
TEST(NothingSpeakable, SpacedPeriodsAreOnePause) {
  const std::string text = repeat(".", 200, " ");
  const auto segs = frontend().segment(text);
  expect_one_pause(segs, text, "200 spaced periods");
  EXPECT_EQ(segs[0].text_begin, 0u);
  EXPECT_EQ(segs[0].text_end, text.size());
}

TEST(NothingSpeakable, PunctuationAndSymbolLinesArePausesInEveryLanguage) {
  for (const char* lang : {"en-us", "en-gb", "es", "fr-fr"}) {
    for (const std::string text : {"!!!!!!!!!!", "...", "* * *", "----------", "#", ":-)", "?!?!?!", "… — …", "%"})
      expect_one_pause(frontend(lang).segment(text), text, std::string(lang) + " " + text);
  }
}

TEST(NothingSpeakable, ManyLinesOfMarksAreOnePause) {
  const std::string text = repeat(". . . . . . . .", 1000, "\n");
  expect_one_pause(frontend().segment(text), text, "1000 lines of dots");
}

TEST(NothingSpeakable, PauseBetweenSpokenLines) {
  const std::string text = "Chapter one.\n* * *\nIt was late.";
  const auto segs = frontend().segment(text);
  ASSERT_EQ(segs.size(), 3u) << phonemes(segs);
  EXPECT_FALSE(segs[0].phonemes.empty());
  EXPECT_TRUE(segs[1].phonemes.empty());
  EXPECT_EQ(segs[1].text, "* * *");
  EXPECT_DOUBLE_EQ(segs[1].pause_before, kSilentTextPause);
  EXPECT_FALSE(segs[2].phonemes.empty());
  EXPECT_EQ(segs[2].pause_before, 0.0);
}

TEST(NothingSpeakable, SilentInputStillGivesNoSegments) {
  EXPECT_TRUE(frontend().segment("   \n\t ").empty());
  EXPECT_TRUE(frontend().segment("\xff\xfe\xfd").empty());  // invalid bytes: silent, as before
}

TEST(NothingSpeakable, SsmlBreakAndAPauseAdd) {
  const auto segs = frontend().segment("<speak>Hello. <break time=\"500ms\"/> . . . . <s>Bye.</s></speak>");
  ASSERT_EQ(segs.size(), 3u) << phonemes(segs);
  EXPECT_TRUE(segs[1].phonemes.empty());
  EXPECT_DOUBLE_EQ(segs[1].pause_before, 0.5 + kSilentTextPause);
}

// Issue 32's hand-tried input: 1000 letters "a" were 13.4 s of sound; now the word "aaaa" (four letters).
TEST(Repetition, ThousandLettersAreAShortReading) {
  const std::string text(1000, 'a');
  const auto segs = frontend().segment(text);
  ASSERT_EQ(segs.size(), 1u);
  EXPECT_EQ(segs[0].phonemes, phonemes(frontend().segment("aaaa")));
  EXPECT_LE(utf8::count_code_points(segs[0].phonemes), 16u) << segs[0].phonemes;
  ASSERT_EQ(segs[0].words.size(), 1u);
  EXPECT_EQ(segs[0].words[0].text_begin, 0u);  // the word's span covers the whole run
  EXPECT_EQ(segs[0].words[0].text_end, text.size());
}

TEST(Repetition, LettersAndMarksPastFourAreReadFourTimes) {
  const auto& fe = frontend();
  EXPECT_EQ(phonemes(fe.segment("soooooooooooooooo good")), phonemes(fe.segment("soooo good")));
  EXPECT_EQ(phonemes(fe.segment("Really" + std::string(300, '?'))), phonemes(fe.segment("Really????")));
  EXPECT_EQ(phonemes(fe.segment("Wait" + repeat(" .", 500) + " what")), phonemes(fe.segment("Wait . . . . what")));
  EXPECT_EQ(phonemes(fe.segment("The IIII on clocks")), phonemes(fe.segment("The IIII on clocks"))) << "four are kept";
  // Digits are a number, never cut.
  EXPECT_NE(phonemes(fe.segment("100000")), phonemes(fe.segment("10000")));
}

// Issue 32's hand-tried input: 30 emoji then "hello" were "grinning" 30 times run together (10.3 s).
TEST(Emoji, ThirtyCopiesThenHelloSayTheNameOnce) {
  const std::string text = repeat("😀", 30) + " hello";
  const auto segs = frontend().segment(text);
  ASSERT_EQ(segs.size(), 1u);
  EXPECT_EQ(segs[0].phonemes, phonemes(frontend().segment("grinning face hello")));
  ASSERT_EQ(segs[0].words.size(), 2u);
  EXPECT_EQ(segs[0].words[0].text_begin, 0u);
  EXPECT_EQ(segs[0].words[0].text_end, 30 * std::string("😀").size());  // one word spans the 30 emoji
  for (const char* lang : {"en-us", "en-gb"})
    EXPECT_EQ(phonemes(frontend(lang).segment(repeat("😀", 30, " ") + " hello")),
              phonemes(frontend(lang).segment("grinning face hello")))
        << lang;
}

TEST(Emoji, DroppedOnRequest) {
  const auto& drop = frontend("en-us", FrontendOptions::Emoji::drop);
  EXPECT_EQ(phonemes(drop.segment("I love it ❤️😀👍🏽!")), phonemes(frontend().segment("I love it!")));
  EXPECT_EQ(phonemes(drop.segment("hi😀there")), phonemes(frontend().segment("hi there")));
  EXPECT_TRUE(drop.segment("😀😀😀").empty());  // nothing left to say
  // Text symbols are not emoji: kept.
  EXPECT_EQ(phonemes(drop.segment("© 2024")), phonemes(frontend().segment("© 2024")));
}

TEST(Emoji, OtherLanguagesCollapseRunsToo) {
  const auto& es = frontend("es");
  EXPECT_EQ(phonemes(es.segment(repeat("😀", 30) + " hola")), phonemes(es.segment("😀 hola")));
}
