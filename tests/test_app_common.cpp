// apps/common: the line reader the apps use on terminals and pipes (lines, CRLF, a last line without a
// newline, over-long lines handed over in pieces at spaces or character boundaries), text excerpts and
// the status-line wording, and what kokoro-say says about input that is not UTF-8 or has nothing to speak.
#include <gtest/gtest.h>
#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <cstdio>
#include <string>
#include <vector>

#include "apps/common/input_notes.h"
#include "apps/common/line_reader.h"
#include "apps/common/process_start.h"
#include "apps/common/report.h"
#include "apps/common/word_timestamps.h"
#include "core/error.h"

namespace kokoro::app {
namespace {

// Feeds `chunks` through a pipe one write at a time and collects every line until end of file.
std::vector<InputLine> read_all(const std::vector<std::string>& chunks, std::size_t max_line) {
  int fds[2];
  EXPECT_EQ(::pipe2(fds, O_CLOEXEC), 0);
  LineReader reader(max_line);
  std::vector<InputLine> lines;
  for (const auto& c : chunks) {
    EXPECT_EQ(::write(fds[1], c.data(), c.size()), static_cast<ssize_t>(c.size()));
    EXPECT_TRUE(reader.read_available(fds[0], "test pipe", lines));
  }
  ::close(fds[1]);
  while (reader.read_available(fds[0], "test pipe", lines)) {
  }
  ::close(fds[0]);
  return lines;
}

std::vector<std::string> texts(const std::vector<InputLine>& lines) {
  std::vector<std::string> v;
  for (const auto& l : lines) v.push_back(l.text);
  return v;
}

TEST(LineReader, SplitsLinesAcrossReadsAndKeepsTheLastUnterminatedOne) {
  const auto lines = read_all({"first li", "ne\nsecond\r\n\nthi", "rd"}, 1024);
  EXPECT_EQ(texts(lines), (std::vector<std::string>{"first line", "second", "", "third"}));
  for (const auto& l : lines) EXPECT_FALSE(l.continued);
}

TEST(LineReader, OverLongLineComesInPiecesCutAtSpaces) {
  const std::string line = "aaaa bbbb cccc dddd eeee ffff gggg";  // 34 bytes, pieces of at most 16
  const auto lines = read_all({line + "\nnext\n"}, 16);
  ASSERT_GE(lines.size(), 3u);
  std::string joined;
  for (std::size_t i = 0; i + 1 < lines.size(); ++i) {
    EXPECT_LE(lines[i].text.size(), 16u);
    EXPECT_EQ(lines[i].continued, i > 0) << i;
    joined += lines[i].text;
    EXPECT_TRUE(i + 2 == lines.size() || lines[i].text.back() == ' ') << "not cut after a space: '" << lines[i].text << "'";
  }
  EXPECT_EQ(joined, line) << "pieces must add up to the line";
  EXPECT_EQ(lines.back().text, "next");
  EXPECT_FALSE(lines.back().continued);
}

TEST(LineReader, SamePiecesHoweverTheBytesArrive) {
  const std::string text = "one two three four five six seven eight nine ten\nshort\n\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9 end";
  std::vector<std::string> bytes;
  for (char c : text) bytes.emplace_back(1, c);
  const auto at_once = read_all({text}, 12);
  const auto one_by_one = read_all(bytes, 12);
  EXPECT_EQ(texts(at_once), texts(one_by_one));
  ASSERT_EQ(at_once.size(), one_by_one.size());
  for (std::size_t i = 0; i < at_once.size(); ++i) EXPECT_EQ(at_once[i].continued, one_by_one[i].continued) << i;
}

TEST(LineReader, PiecesOfTextWithoutSpacesNeverSplitACharacter) {
  std::string line;
  for (int i = 0; i < 40; ++i) line += "\xc3\xa9";  // "é" x 40, 80 bytes, no spaces
  const auto lines = read_all({line}, 17);
  std::string joined;
  for (const auto& l : lines) {
    EXPECT_LE(l.text.size(), 17u);
    EXPECT_EQ(l.text.size() % 2, 0u) << "a piece ends inside a two-byte character";
    joined += l.text;
  }
  EXPECT_EQ(joined, line);
}

TEST(LineReader, ReadErrorNamesTheInput) {
  LineReader reader;
  std::vector<InputLine> lines;
  try {
    reader.read_available(-1, "named pipe /tmp/x", lines);
    FAIL() << "reading a bad descriptor must throw";
  } catch (const std::exception& e) {
    EXPECT_NE(std::string(e.what()).find("cannot read named pipe /tmp/x"), std::string::npos) << e.what();
  }
}

TEST(InputNotes, InvalidBytesAreReplacedOneByOneAndCounted) {
  const std::string fffd = "\xef\xbf\xbd";
  EXPECT_EQ(replace_invalid_utf8("Hello").invalid_bytes, 0u);
  EXPECT_EQ(replace_invalid_utf8("caf\xc3\xa9 " + fffd).invalid_bytes, 0u) << "a real U+FFFD is valid";
  const CheckedText c = replace_invalid_utf8("\xff\xfe Hello \xc3\x28 world \xe2\x82");
  EXPECT_EQ(c.invalid_bytes, 5u);
  EXPECT_EQ(c.text, fffd + fffd + " Hello " + fffd + "( world " + fffd + fffd);
  EXPECT_EQ(replace_invalid_utf8(std::string("\x00\xc0\xaf", 3)).invalid_bytes, 2u) << "overlong '/'";
}

// Reads what InputNotes wrote to its stream.
struct Captured {
  std::FILE* f = std::tmpfile();
  ~Captured() { std::fclose(f); }
  std::string text() {
    std::fflush(f);
    std::rewind(f);
    std::string out;
    for (int c; (c = std::fgetc(f)) != EOF;) out += char(c);
    return out;
  }
};

TEST(InputNotes, SaysHowManyBytesAndWhenNothingWasSpeakable) {
  Captured out;
  InputNotes notes("kokoro-say", out.f, 2);
  EXPECT_EQ(notes.check("fine"), "fine");
  notes.check("a\xff\xfe");
  UtteranceReport spoken;
  spoken.text = "fine";
  spoken.audio_seconds = 1.0;
  spoken.segments = 1;
  notes.spoken(spoken);
  UtteranceReport pauses;  // "...!?": 0.75 s of silence, no segment spoken: nothing speakable
  pauses.text = "...!?";
  pauses.audio_seconds = 0.75;
  notes.spoken(pauses);
  UtteranceReport none;
  none.text = "\xef\xbf\xbd\xef\xbf\xbd";
  notes.spoken(none);
  UtteranceReport failed = none;
  failed.error = "boom";
  notes.spoken(failed);  // an error is reported as such, not as nothing speakable
  notes.finish();
  const std::string text = out.text();
  EXPECT_NE(text.find("kokoro-say: warning: 2 bytes of invalid UTF-8 replaced by U+FFFD"), std::string::npos) << text;
  EXPECT_NE(text.find("kokoro-say: nothing speakable in"), std::string::npos) << text;
  EXPECT_EQ(text.find("nothing speakable in \"fine\""), std::string::npos) << text;
  EXPECT_NE(text.find("nothing speakable in \"...!?\""), std::string::npos) << text;
  EXPECT_EQ(std::count(text.begin(), text.end(), '\n'), 3) << text;
}

TEST(InputNotes, ManyBadTextsAreNamedAFewTimesThenSummedUp) {
  Captured out;
  InputNotes notes("kokoro-say", out.f, 2);
  UtteranceReport none;
  for (int i = 0; i < 100; ++i) {
    none.text = notes.check("\x01\xff");
    notes.spoken(none);
  }
  notes.finish();
  const std::string text = out.text();
  EXPECT_EQ(std::count(text.begin(), text.end(), '\n'), 6) << text;
  EXPECT_NE(text.find("100 bytes of invalid UTF-8 in all, in 100 texts"), std::string::npos) << text;
  EXPECT_NE(text.find("100 texts in all had nothing speakable"), std::string::npos) << text;
}

TEST(Report, ExcerptCutsAtCharactersAndHidesControls) {
  EXPECT_EQ(excerpt("short"), "short");
  EXPECT_EQ(excerpt("a\tb\nc"), "a b c");
  EXPECT_EQ(excerpt("\xc3\xa9\xc3\xa9\xc3\xa9", 2), "\xc3\xa9\xc3\xa9...");
  EXPECT_EQ(excerpt(std::string(70, 'x')), std::string(60, 'x') + "...");
}

TEST(Report, StatusLineWording) {
  UtteranceReport r;
  r.text = "Hello there.";
  r.segments = 2;
  r.first_audio_ms = 412.4;
  r.audio_seconds = 4.0;
  r.synth_seconds = 1.2;
  EXPECT_EQ(format_report(r), "[spoken] 4.00 s of speech, first audio after 412 ms, synthesized in 1.20 s (RTF 0.30), 2 segments");
  EXPECT_EQ(format_report(r, SinkCounters{3, 1}, true),
            "[spoken] 4.00 s of speech, first audio after 412 ms, synthesized in 1.20 s (RTF 0.30), 2 segments"
            " | xruns 3 so far, underruns 1 | \"Hello there.\"");
  r.preroll_ms = 150.2;  // exact mode's pre-roll held the start
  EXPECT_EQ(format_report(r, SinkCounters{3, 1}),
            "[spoken] 4.00 s of speech, first audio after 412 ms, synthesized in 1.20 s (RTF 0.30), 2 segments,"
            " pre-roll 150 ms | xruns 3 so far, underruns 1");
  EXPECT_EQ(format_report(r, SinkCounters{3, 1, 21.4}).substr(format_report(r).size()),
            " | xruns 3 so far, underruns 1, worst callback 21 us");
  r.interrupted = true;
  r.segments = 1;
  EXPECT_EQ(format_report(r).substr(0, 9), "[stopped]");
  EXPECT_NE(format_report(r).find("1 segment"), std::string::npos);
  r.error = "JACK client kokoro: JACK server shut down (gone)";
  EXPECT_EQ(format_report(r), "[failed] JACK client kokoro: JACK server shut down (gone)");
}

// kokoro-say --timestamps: word events resolved against the text said, whatever order they come in, and
// written as JSON and WebVTT.
TEST(WordTimestamps, EventsBeforeTheirTextAreResolvedAndFormatted) {
  WordTimestamps ts;
  StreamEvent start;
  start.kind = StreamEvent::Kind::utterance_start;
  start.utterance = 7;
  ts.on_event(start);  // not a word: ignored
  StreamEvent w;
  w.kind = StreamEvent::Kind::word;
  w.utterance = 7;
  w.text_begin = 0;
  w.text_end = 5;
  w.time_s = 0.35;
  w.end_s = 0.6504;
  ts.on_event(w);  // before said(): the text is known only later
  w.text_begin = 7;
  w.text_end = 12;
  w.time_s = 61.25;
  w.end_s = 3725.5;
  ts.on_event(w);
  w.utterance = 8;  // an utterance never said: dropped
  ts.on_event(w);
  ts.said(7, "Hello, \"you\"");
  const auto words = ts.words();
  ASSERT_EQ(words.size(), 2u);
  EXPECT_EQ(words[0].text, "Hello");
  EXPECT_EQ(words[1].text, "\"you\"");
  EXPECT_EQ(WordTimestamps::to_vtt(words),
            "WEBVTT\n\n00:00:00.350 --> 00:00:00.650\nHello\n\n00:01:01.250 --> 01:02:05.500\n\"you\"\n");
  EXPECT_EQ(WordTimestamps::to_json(words),
            "[\n {\n  \"end\": 0.65,\n  \"start\": 0.35,\n  \"utterance\": 7,\n  \"word\": \"Hello\"\n },\n {\n"
            "  \"end\": 3725.5,\n  \"start\": 61.25,\n  \"utterance\": 7,\n  \"word\": \"\\\"you\\\"\"\n }\n]\n");
}

TEST(WordTimestamps, FormatFromNameOrFlag) {
  EXPECT_EQ(parse_timestamp_format("", "words.vtt"), TimestampFormat::vtt);
  EXPECT_EQ(parse_timestamp_format("", "words.json"), TimestampFormat::json);
  EXPECT_EQ(parse_timestamp_format("", "words"), TimestampFormat::json);
  EXPECT_EQ(parse_timestamp_format("json", "words.vtt"), TimestampFormat::json);
  EXPECT_THROW(parse_timestamp_format("srt", "x"), Error);
}

// The process's start (apps/common/process_start.h): the kernel's record, or a launcher's reading in
// KOKORO_START_NS when it is plausible (at most a minute before the kernel's), never a stale exported one.
TEST(ProcessStart, TheKernelsRecordOrAPlausibleLaunchersReading) {
  using namespace std::chrono;
  unsetenv(kStartTimeVariable);
  const auto kernel = process_start_time();
  ASSERT_TRUE(kernel);
  EXPECT_LE(*kernel, steady_clock::now());
  const auto ns = [](steady_clock::time_point t) { return duration_cast<nanoseconds>(t.time_since_epoch()).count(); };
  const long long launcher = ns(*kernel) - 5000000000LL;  // a launcher that read its clock 5 s before
  setenv(kStartTimeVariable, std::to_string(launcher).c_str(), 1);
  EXPECT_EQ(ns(*process_start_time()), launcher);
  const long long stale = ns(*kernel) - 3600000000000LL;  // exported an hour ago
  setenv(kStartTimeVariable, std::to_string(stale).c_str(), 1);
  // (Each reading converts the kernel's boot-time record through "now" on two clocks: equal within a ms.)
  EXPECT_NEAR(ns(*process_start_time()), ns(*kernel), 1e6) << "an hour-old value is not this process's start";
  setenv(kStartTimeVariable, "not a number", 1);
  EXPECT_NEAR(ns(*process_start_time()), ns(*kernel), 1e6);
  unsetenv(kStartTimeVariable);
}

}  // namespace
}  // namespace kokoro::app
