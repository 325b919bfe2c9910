// kokoro.lv2's text side without a host: where note-ons cut a text into cues (lv2/cue_text.h) and the
// script's cursor, file and refusals (lv2/script.h).
#include <gtest/gtest.h>

#include <fstream>
#include <string>
#include <vector>

#include "lv2/cue_text.h"
#include "lv2/script.h"
#include "test_util.h"

namespace kokoro::lv2 {
namespace {

std::vector<std::string> cues(const std::string& text) {
  std::vector<std::string> v;
  for (const Cue& c : split_cues(text)) v.push_back(text.substr(c.begin, c.end - c.begin));
  return v;
}

using Lines = std::vector<std::string>;

TEST(Lv2Cues, SentencesAndLines) {
  EXPECT_EQ(cues("Hello there. How are you? Fine!"), (Lines{"Hello there.", "How are you?", "Fine!"}));
  EXPECT_EQ(cues("  One line\n\n  Another line  \n"), (Lines{"One line", "Another line"}));
  EXPECT_EQ(cues("Wait... what?! Yes."), (Lines{"Wait...", "what?!", "Yes."}));
  EXPECT_EQ(cues("He said \"Stop.\" Then left."), (Lines{"He said \"Stop.\"", "Then left."}));
  EXPECT_EQ(cues("(An aside.) Back again…  Done"), (Lines{"(An aside.)", "Back again…", "Done"}));
  EXPECT_EQ(cues(""), Lines{});
  EXPECT_EQ(cues(" \n \t\n"), Lines{});
}

TEST(Lv2Cues, PeriodsThatEndNothing) {
  EXPECT_EQ(cues("Dr. Smith met Mr. Jones at St. Paul's. It rained."),
            (Lines{"Dr. Smith met Mr. Jones at St. Paul's.", "It rained."}));
  EXPECT_EQ(cues("J. R. R. Tolkien wrote it. Pi is 3.14 or so."), (Lines{"J. R. R. Tolkien wrote it.", "Pi is 3.14 or so."}));
  EXPECT_EQ(cues("Bring fruit, e.g. apples. Thanks."), (Lines{"Bring fruit, e.g. apples.", "Thanks."}));
  EXPECT_EQ(cues("Visit example.com today."), (Lines{"Visit example.com today."}));
}

TEST(Lv2Cues, FullWidthPunctuationEndsWithoutASpace) {
  EXPECT_EQ(cues("今日はいい天気ですね。散歩しましょう！「はい。」"),
            (Lines{"今日はいい天気ですね。", "散歩しましょう！", "「はい。」"}));
  EXPECT_EQ(cues("你好，世界。再见？"), (Lines{"你好，世界。", "再见？"}));
}

TEST(Lv2Cues, SsmlIsOneCue) {
  const std::string ssml = "  <speak>One. <break time=\"500ms\"/> Two.</speak>\n";
  EXPECT_TRUE(is_ssml(ssml));
  EXPECT_TRUE(is_ssml("<?xml version=\"1.0\"?>\n<speak version=\"1.1\">Hi.</speak>"));
  EXPECT_FALSE(is_ssml("<speaker>not SSML</speaker>"));
  EXPECT_FALSE(is_ssml("Say <speak> later."));
  EXPECT_EQ(cues(ssml), (Lines{"<speak>One. <break time=\"500ms\"/> Two.</speak>"}));
}

TEST(Lv2Cues, OffsetsPointIntoTheText) {
  const std::string text = "First.\n  Second one!";
  const auto c = split_cues(text);
  ASSERT_EQ(c.size(), 2u);
  EXPECT_EQ(c[1].begin, text.find("Second"));
  EXPECT_EQ(c[1].end, text.size());
}

TEST(Lv2Script, NextCueWrapsAndProgramChangeSelects) {
  Script s;
  EXPECT_NE(s.next(false).why.find("no text to speak"), std::string::npos);
  ASSERT_EQ(s.set_text("One. Two. Three."), "");
  EXPECT_EQ(s.next(false).text, "One.");
  const auto two = s.next(false);
  EXPECT_EQ(two.text, "Two.");
  EXPECT_EQ(two.cue, 1);
  EXPECT_EQ(two.text_offset, 5);
  EXPECT_EQ(s.next(false).text, "Three.");
  EXPECT_EQ(s.next(false).text, "One.") << "after the last cue, the first again";
  s.select(2);
  EXPECT_EQ(s.next(false).text, "Three.");
  s.select(4);  // modulo the 3 cues
  EXPECT_EQ(s.next(false).text, "Two.");
  const auto whole = s.next(true);
  EXPECT_EQ(whole.text, "One. Two. Three.");
  EXPECT_EQ(whole.cue, -1);
  EXPECT_EQ(s.set_text("New. Text."), "");
  EXPECT_EQ(s.next(false).text, "New.") << "a new text starts at its first cue";
}

TEST(Lv2Script, RefusesWhatItCannotSpeakAndKeepsTheRest) {
  Script s;
  ASSERT_EQ(s.set_text("Kept."), "");
  EXPECT_EQ(s.set_text("bad \xC3("), "the text is not valid UTF-8 (invalid UTF-8 at byte 4)");
  EXPECT_EQ(s.set_text(std::string(Script::kMaxTextBytes + 1, 'a')).find("the text is 8388609 bytes"), 0u);
  EXPECT_EQ(s.text(), "Kept.");
  EXPECT_EQ(s.set_text("\xEF\xBF\xBD is a real replacement character."), "") << "U+FFFD itself is valid";

  test::TempDir dir;
  const std::string path = dir.file("script.txt");
  std::ofstream(path) << "From the file. Line two.\n";
  EXPECT_EQ(s.set_file(path), "");
  EXPECT_EQ(s.next(false).text, "From the file.") << "a set file is spoken instead of the text";
  EXPECT_EQ(s.file(), path);
  EXPECT_NE(s.set_file(dir.file("missing.txt")).find("No such file"), std::string::npos);
  EXPECT_EQ(s.file(), dir.file("missing.txt")) << "the path is kept (state from another machine)";
  EXPECT_NE(s.next(false).why.find("missing.txt"), std::string::npos) << "note-ons say why nothing is spoken";
  std::ofstream(dir.file("latin1.txt")) << "caf\xE9\n";
  EXPECT_NE(s.set_file(dir.file("latin1.txt")).find("not valid UTF-8 text"), std::string::npos);
  EXPECT_EQ(s.set_file(""), "");
  EXPECT_EQ(s.next(false).text, "\xEF\xBF\xBD is a real replacement character.") << "no file: the text again";
}

}  // namespace
}  // namespace kokoro::lv2
