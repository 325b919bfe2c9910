// The SSML subset (frontend/ssml.h) through Frontend: pauses, say-as, sub, phoneme, voice, prosody rate
// and marks on the segments, offsets into the SSML source, detection, and errors naming line and column.
#include <gtest/gtest.h>

#include <string>

#include "core/error.h"
#include "frontend/frontend.h"
#include "frontend/ssml.h"
#include "frontend/utf8.h"

namespace {

const kokoro::Frontend& fe() {
  static const kokoro::Frontend f;
  return f;
}

std::string error_of(const std::string& ssml) {
  static const kokoro::Frontend strict([] {
    kokoro::FrontendOptions o;
    o.ssml = kokoro::FrontendOptions::Ssml::on;
    return o;
  }());
  try {
    strict.segment(ssml);
  } catch (const kokoro::Error& e) {
    return e.what();
  }
  return "no error";
}

}  // namespace

TEST(Ssml, BreakStartsASegmentWithItsPause) {
  const auto segs = fe().segment("<speak>Hello there. <break time=\"500ms\"/> Welcome back.</speak>");
  ASSERT_EQ(segs.size(), 2u);
  EXPECT_EQ(segs[0].pause_before, 0.0);
  EXPECT_DOUBLE_EQ(segs[1].pause_before, 0.5);
  EXPECT_EQ(segs[1].phonemes, fe().segment("Welcome back.")[0].phonemes);
  const auto strong = fe().segment("<speak>a cat<break strength=\"strong\"/>a dog<break time=\"1.5s\"/></speak>");
  ASSERT_EQ(strong.size(), 2u);
  EXPECT_DOUBLE_EQ(strong[1].pause_before, 0.75);
  EXPECT_DOUBLE_EQ(strong[1].pause_after, 1.5);
  // Breaks in a row add up.
  const auto two = fe().segment("<speak>one<break time=\"200ms\"/><break time=\"300ms\"/>two</speak>");
  ASSERT_EQ(two.size(), 2u);
  EXPECT_DOUBLE_EQ(two[1].pause_before, 0.5);
}

TEST(Ssml, SayAsSubAndPhonemeChangeWhatIsSaid) {
  EXPECT_EQ(fe().normalize("<speak><say-as interpret-as=\"characters\">NASA</say-as></speak>"), "N [a](/ˈA/) S [a](/ˈA/)");
  EXPECT_EQ(fe().normalize("<speak><say-as interpret-as=\"digits\">2024</say-as></speak>"), "2 0 2 4");
  EXPECT_EQ(fe().normalize("<speak>the <say-as interpret-as=\"ordinal\">21</say-as> time</speak>"), "the 21st time");
  EXPECT_EQ(fe().normalize("<speak><say-as interpret-as=\"date\" format=\"mdy\">3/15/2024</say-as></speak>"),
            "March fifteenth, twenty twenty four");
  EXPECT_EQ(fe().normalize("<speak><say-as interpret-as=\"date\" format=\"dmy\">15/3/2024</say-as></speak>"),
            "March fifteenth, twenty twenty four");
  EXPECT_EQ(fe().normalize("<speak><say-as interpret-as=\"date\" format=\"md\">12/25</say-as></speak>"),
            "December twenty fifth");
  EXPECT_EQ(fe().normalize("<speak><say-as interpret-as=\"telephone\">+1 555 0142</say-as></speak>"),
            "plus 1, 5 5 5, 0 1 4 2");
  EXPECT_EQ(fe().normalize("<speak>the <sub alias=\"World Wide Web\">WWW</sub></speak>"), "the World Wide Web");
  // A phoneme in Kokoro's symbols is spoken exactly as given; IPA is mapped to them.
  const auto segs = fe().segment("<speak>a <phoneme alphabet=\"x-kokoro\" ph=\"təmˈɑtO\">tomato</phoneme></speak>");
  ASSERT_EQ(segs.size(), 1u);
  EXPECT_EQ(segs[0].phonemes, "ɐ təmˈɑtO");
  EXPECT_EQ(kokoro::ssml::ipa_to_kokoro("təˈmeɪtoʊ"), "təˈmAtO");
  EXPECT_EQ(kokoro::ssml::ipa_to_kokoro("ˈtʃɝtʃ"), "ˈʧɜɹʧ");
}

TEST(Ssml, VoiceAndRateApplyToTheirWordsOnly) {
  const auto segs = fe().segment(
      "<speak>I am Heart. <voice name=\"am_adam\">I am Adam.</voice> <prosody rate=\"slow\">Slowly.</prosody> "
      "<prosody rate=\"150%\"><prosody rate=\"2\">Fast.</prosody></prosody> Back.</speak>");
  ASSERT_EQ(segs.size(), 5u);
  EXPECT_EQ(segs[0].voice, "");
  EXPECT_EQ(segs[1].voice, "am_adam");
  EXPECT_EQ(segs[1].phonemes, fe().segment("I am Adam.")[0].phonemes);
  EXPECT_EQ(segs[2].voice, "");
  EXPECT_DOUBLE_EQ(segs[2].rate, 0.75);
  EXPECT_DOUBLE_EQ(segs[3].rate, 3.0);
  EXPECT_DOUBLE_EQ(segs[4].rate, 1.0);
}

TEST(Ssml, MarksAreReportedWhereTheyAre) {
  const auto segs = fe().segment("<speak><mark name=\"a\"/>One. <mark name=\"b\"/>Two.<mark name=\"end\"/></speak>");
  ASSERT_EQ(segs.size(), 2u);
  EXPECT_EQ(segs[0].marks, std::vector<std::string>{"a"});
  EXPECT_EQ(segs[1].marks, std::vector<std::string>{"b"});
  EXPECT_EQ(segs[1].marks_after, std::vector<std::string>{"end"});
}

TEST(Ssml, OffsetsPointIntoTheSource) {
  const std::string src = "<speak>Hello &amp; <sub alias=\"World Wide Web\">WWW</sub> now</speak>";
  const auto segs = fe().segment(src);
  ASSERT_EQ(segs.size(), 1u);
  std::vector<std::string> written;
  for (const auto& w : segs[0].words) written.push_back(src.substr(w.text_begin, w.text_end - w.text_begin));
  ASSERT_EQ(written.size(), 6u);  // Hello & World Wide Web now
  EXPECT_EQ(written[0], "Hello");
  EXPECT_EQ(written[1], "&amp;");
  EXPECT_EQ(written[2], "<sub alias=\"World Wide Web\">WWW</sub>");
  EXPECT_EQ(written[5], "now");
  EXPECT_LE(segs[0].text_end, src.size());
}

TEST(Ssml, DetectionAndModes) {
  EXPECT_TRUE(kokoro::ssml::looks_like_ssml("  <?xml version=\"1.0\"?>\n<speak version=\"1.1\">hi</speak>"));
  EXPECT_FALSE(kokoro::ssml::looks_like_ssml("if a < b then <speak"));
  EXPECT_FALSE(kokoro::ssml::looks_like_ssml("<speaker>"));
  // Plain text with angle brackets is not SSML.
  EXPECT_EQ(fe().normalize("a < b"), "a < b");
  kokoro::FrontendOptions on;
  on.ssml = kokoro::FrontendOptions::Ssml::on;
  EXPECT_EQ(kokoro::Frontend(on).normalize("no root <sub alias=\"here\">x</sub>"), "no root here");
  kokoro::FrontendOptions off;
  off.ssml = kokoro::FrontendOptions::Ssml::off;
  EXPECT_NE(kokoro::Frontend(off).normalize("<speak>x</speak>").find("speak"), std::string::npos);
}

TEST(Ssml, UnknownElementsAreReadThrough) {
  const auto doc = kokoro::ssml::parse("<speak><emphasis>very</emphasis> <foo>good</foo> <foo>x</foo></speak>");
  ASSERT_EQ(doc.pieces.size(), 1u);
  EXPECT_EQ(doc.pieces[0].text, "very good x");
  EXPECT_EQ(doc.warnings.size(), 2u);  // once per element name
}

// Detected (not requested) SSML that is malformed is read as text without its tags, never an exception.
TEST(Ssml, MalformedDetectedSsmlFallsBackToItsText) {
  const std::string src = "<speak>Hello <break time=\"oops\"/> world";
  const auto segs = fe().segment(src);
  ASSERT_EQ(segs.size(), 1u);
  EXPECT_EQ(segs[0].phonemes, fe().segment("Hello world")[0].phonemes);
  EXPECT_EQ(segs[0].text, src.substr(segs[0].text_begin, segs[0].text_end - segs[0].text_begin));
  EXPECT_EQ(fe().normalize(src), "Hello world");
  // Invalid UTF-8 in it still gives valid segment text (found by the fuzzer).
  for (const auto& s : fe().segment("<speak><p>one<s>t\x92\x90\xc3 two")) EXPECT_TRUE(kokoro::utf8::is_valid(s.text));
}

TEST(Ssml, MalformedInputNamesLineAndColumn) {
  EXPECT_EQ(error_of("<speak>\n  Hello <break time=\"5 parsecs\"/></speak>"),
            "SSML line 2, column 9: break time must be like 500ms or 1.5s, got '5 parsecs'");
  EXPECT_EQ(error_of("<speak>\n<p>one</s></speak>"), "SSML line 2, column 7: </s> does not close <p>");
  EXPECT_EQ(error_of("<speak>a &nbsp; b</speak>"), "SSML line 1, column 10: unknown entity &nbsp;");
  EXPECT_EQ(error_of("<speak><p>never closed</speak>"), "SSML line 1, column 23: </speak> does not close <p>");
  EXPECT_EQ(error_of("<speak>open"), "SSML line 1, column 1: <speak> is never closed");
  EXPECT_EQ(error_of("<speak><sub>x</sub></speak>"), "SSML line 1, column 8: <sub> needs an alias");
  EXPECT_EQ(error_of("<speak><break time=500ms/></speak>"), "SSML line 1, column 20: attribute values are quoted");
  EXPECT_EQ(error_of("<speak><sub alias=\"a\"><p>x</p></sub></speak>"),
            "SSML line 1, column 23: <p> inside <sub> (only text is allowed there)");
}
