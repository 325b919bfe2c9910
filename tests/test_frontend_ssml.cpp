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

// A mark is a place between words, not a new segment: the segments are those of the text without it, and a
// mark inside one is reported at the word it precedes.
TEST(Ssml, MarksAreReportedWhereTheyAre) {
  const std::string src = "<speak><mark name=\"a\"/>One. <mark name=\"b\"/>Two.<mark name=\"end\"/></speak>";
  const auto segs = fe().segment(src);
  ASSERT_EQ(segs.size(), 1u);
  EXPECT_EQ(segs[0].phonemes, fe().segment("One. Two.")[0].phonemes);
  EXPECT_EQ(segs[0].marks, std::vector<std::string>{"a"});
  ASSERT_EQ(segs[0].inner_marks.size(), 1u);
  EXPECT_EQ(segs[0].inner_marks[0].name, "b");
  EXPECT_EQ(src.substr(segs[0].inner_marks[0].word_begin, 3), "Two");
  EXPECT_EQ(segs[0].marks_after, std::vector<std::string>{"end"});
  // Inside a word: with that word. Where the segments break: before the next segment.
  const auto in_word = fe().segment("<speak>The lamp flic<mark name=\"w\"/>kered.</speak>");
  ASSERT_EQ(in_word.size(), 1u);
  ASSERT_EQ(in_word[0].inner_marks.size(), 1u);
  EXPECT_EQ(in_word[0].inner_marks[0].word_begin, in_word[0].words[2].text_begin);
  const auto at_break = fe().segment("<speak>One.<mark name=\"x\"/><break time=\"200ms\"/>Two.</speak>");
  ASSERT_EQ(at_break.size(), 2u);
  EXPECT_TRUE(at_break[0].inner_marks.empty());
  EXPECT_EQ(at_break[1].marks, std::vector<std::string>{"x"});
}

namespace {

// Every mark of the segments in the order the engine reports them, each with the source text from where it
// stands ("^" for a mark before a segment's first word, "$" after the last).
std::vector<std::string> marks_in_order(const std::vector<kokoro::Segment>& segs, const std::string& src) {
  std::vector<std::string> out;
  for (const auto& seg : segs) {
    for (const auto& m : seg.marks) out.push_back(m + "@" + src.substr(seg.words.at(0).text_begin, 3));
    for (const auto& m : seg.inner_marks) out.push_back(m.name + "@" + src.substr(m.word_begin, 3));
    for (const auto& m : seg.marks_after) out.push_back(m + "@$");
  }
  return out;
}

std::vector<std::string> phonemes_of(const std::vector<kokoro::Segment>& segs) {
  std::vector<std::string> out;
  for (const auto& seg : segs) out.push_back(seg.phonemes);
  return out;
}

}  // namespace

// What speech-dispatcher 0.11 hands its output modules (read from its log at LogLevel 5, probed with spd-say):
// a text-mode message escaped (&lt; &gt; &amp;, quotes as they are) inside <speak>, with an index mark
// <mark name="__spd_N"/> after every '.', '?' or '!' that a blank, '<' or '&' follows; an SSML-mode message
// (spd-say -x) as the client wrote it, plus those marks; its symbol preprocessing re-escapes quotes as &quot;
// and &apos;. sd_kokoro puts a <speak> root of its own around every message (an SSML-mode client may leave it
// out). All of it says what the plain text says, in the same segments, with every mark at its word.
TEST(Ssml, SpeechDispatcherMessagesSayTheirText) {
  struct Row {
    std::string message, plain;
    std::vector<std::string> marks;
  };
  const std::vector<Row> rows = {
      {"<speak>Hello there.<mark name=\"__spd_0\"/> How are you?<mark name=\"__spd_1\"/> Mr.<mark name=\"__spd_2\"/> "
       "Smith &amp; &lt;Jones&gt; \"quoted\" it's 5 &gt; 3.</speak>",
       "Hello there. How are you? Mr. Smith & <Jones> \"quoted\" it's 5 > 3.",
       {"__spd_0@How", "__spd_1@Mr.", "__spd_2@Smi"}},
      {"<speak>Ends with dots...<mark name=\"__spd_0\"/> And \"e.g.\" here!Next?<mark name=\"__spd_1\"/> Yes.</speak>",
       "Ends with dots... And \"e.g.\" here!Next? Yes.", {"__spd_0@And", "__spd_1@Yes"}},
      {"<speak>Hi <mark name=\"m1\"/>there.<mark name=\"__spd_0\"/> Tom &amp; Jerry &lt;3 don't &quot;q&quot; "
       "&apos;r&apos; &#233; caf&#xE9;.<mark name=\"__spd_1\"/><mark name=\"end\"/></speak>",
       "Hi there. Tom & Jerry <3 don't \"q\" 'r' \xC3\xA9 caf\xC3\xA9.",
       {"m1@the", "__spd_0@Tom", "__spd_1@$", "end@$"}},
      {"<speak><?xml version=\"1.0\"?><speak version=\"1.1\" xmlns=\"http://www.w3.org/2001/10/synthesis\" "
       "xml:lang=\"en-US\">An XML declaration.<mark name=\"__spd_0\"/> <emphasis>Fine</emphasis>.</speak></speak>",
       "An XML declaration. Fine.", {"__spd_0@Fin"}},
      {"<speak>No root <mark name=\"a\"/>here.<mark name=\"__spd_0\"/> Next.</speak>", "No root here. Next.",
       {"a@her", "__spd_0@Nex"}},
      {"<speak>multi\nline.<mark name=\"__spd_0\"/> text\n.\n.dot start</speak>", "multi\nline. text\n.\n.dot start",
       {"__spd_0@tex"}},
      {"<speak>Hello, world!<mark name=\"__spd_0\"/> (a) [b] {c} 50% $5 #1 @home ~ ^ * _ | \\ / &lt; &amp; &gt;</speak>",
       "Hello, world! (a) [b] {c} 50% $5 #1 @home ~ ^ * _ | \\ / < & >", {"__spd_0@a) "}},
      {"<speak>Emoji \xF0\x9F\x98\x80 and \xE2\x99\xA5 and caf\xC3\xA9.</speak>",
       "Emoji \xF0\x9F\x98\x80 and \xE2\x99\xA5 and caf\xC3\xA9.", {}},
  };
  for (const Row& row : rows) {
    SCOPED_TRACE(row.message);
    ASSERT_TRUE(fe().reads_as_ssml(row.message));
    const auto segs = fe().segment(row.message);
    EXPECT_EQ(phonemes_of(segs), phonemes_of(fe().segment(row.plain)));
    EXPECT_EQ(marks_in_order(segs, row.message), row.marks);
  }
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
  // The frontend's answer, which the streaming engine asks too (it hands SSML over whole).
  EXPECT_TRUE(fe().reads_as_ssml("\xEF\xBB\xBF<!-- c --><?xml version=\"1.0\"?>\n<speak>hi</speak>"));
  EXPECT_FALSE(fe().reads_as_ssml("a < b <speak>"));
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
