// Text that streams in (engine/stream_engine.h, begin_text / append_text / end_text) on the real model, in
// virtual time: the pause flush runs on a test clock (StreamOptions::text_clock_ns) that only the test moves,
// so no wall clock decides a cut. The text appended piece by piece, word by word with pauses, byte by byte
// (characters split between pieces) or at once gives bit-identical audio, slice and exact mode; exact mode's
// audio is the offline synthesis of each sentence on its own. Also: one utterance (one report, word offsets in
// the whole text), the pause flush when the clock passes it and not before, barge-in, an utterance said
// meanwhile waits for the end, invalid UTF-8. Real weights (fails without them); recording sinks (no device
// clock: the slice plan is the nominal one).
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <mutex>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "core/precision.h"
#include "tests/shared_model.h"
#include "tests/stream_engine_support.h"

namespace kokoro {
namespace {

using stream_test::RecordingSink;
using stream_test::ReportLog;
using stream_test::Watchdog;

const std::string kText = "The café's lamp flickered twice. Then it went dark! Was anyone there? \"No,\" he said.";
constexpr uint64_t kSeed = 7;
constexpr double kWait = 300 * stream_test::kTimeScale;

// A session whose streamed text's clock is the test's.
struct Session {
  Session(const Model& m, SynthesisMode mode) {
    StreamOptions so = m.stream_options(mode);
    so.text_clock_ns = &clock;
    engine = std::make_unique<StreamEngine>(m.synthesizer(), m.frontend("en-us"), *m.voice("af_heart"), sink,
                                            EngineVoice{1.0f, false, kSeed, false}, mode, std::move(so));
    log.attach(*engine);
    engine->on_event([this](const StreamEvent& e) {
      std::lock_guard<std::mutex> lock(mutex);
      events.push_back(e);
    });
  }
  std::vector<StreamEvent> events_seen() {
    std::lock_guard<std::mutex> lock(mutex);
    return events;
  }
  std::atomic<int64_t> clock{0};
  RecordingSink sink;
  ReportLog log;
  std::mutex mutex;
  std::vector<StreamEvent> events;
  std::unique_ptr<StreamEngine> engine;
};

// Polls `done` every 10 ms for up to `seconds`.
template <typename Pred>
bool wait_until(double seconds, Pred done) {
  const auto end = std::chrono::steady_clock::now() + std::chrono::duration<double>(seconds);
  while (!done()) {
    if (std::chrono::steady_clock::now() > end) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  return true;
}

// Streams `text` in pieces ending at `cuts`, sleeping up to `max_pause_ms` (real time) between pieces, so that
// the worker sees the text at many different stages; returns the session once all of it has been spoken.
std::unique_ptr<Session> stream_in(const Model& m, SynthesisMode mode, const std::string& text,
                                   const std::vector<size_t>& cuts, int max_pause_ms) {
  auto session = std::make_unique<Session>(m, mode);
  Session& s = *session;
  std::mt19937 rng(static_cast<unsigned>(cuts.size()));
  const uint64_t id = s.engine->begin_text();
  size_t at = 0;
  for (size_t cut : cuts) {
    EXPECT_TRUE(s.engine->append_text(id, std::string_view(text).substr(at, cut - at)));
    at = cut;
    if (max_pause_ms > 0) std::this_thread::sleep_for(std::chrono::milliseconds(rng() % (max_pause_ms + 1)));
  }
  EXPECT_TRUE(s.engine->append_text(id, std::string_view(text).substr(at)));
  EXPECT_TRUE(s.engine->end_text(id));
  EXPECT_FALSE(s.engine->append_text(id, "more")) << "text after the end is refused";
  EXPECT_TRUE(s.engine->wait_idle(kWait));
  return session;
}

std::vector<float> streamed(const Model& m, SynthesisMode mode, const std::string& text, const std::vector<size_t>& cuts,
                            int max_pause_ms) {
  return stream_in(m, mode, text, cuts, max_pause_ms)->sink.audio();
}

std::vector<size_t> word_cuts(const std::string& text) {
  std::vector<size_t> cuts;
  for (size_t i = 1; i < text.size(); ++i)
    if (text[i] == ' ') cuts.push_back(i + 1);
  return cuts;
}

std::vector<size_t> byte_cuts(const std::string& text) {
  std::vector<size_t> cuts;
  for (size_t i = 1; i < text.size(); ++i) cuts.push_back(i);
  return cuts;
}

void expect_piecewise_equals_whole(SynthesisMode mode) {
  REQUIRE_MODEL(m);
  Watchdog dog(900);
  const std::unique_ptr<Session> s = stream_in(*m, mode, kText, {}, 0);
  const std::vector<float> whole = s->sink.audio();
  ASSERT_GT(whole.size(), 24000u * 3);
  // One utterance: one report, one start and end, a segment per sentence, word offsets in the whole text.
  const std::vector<UtteranceReport> reports = s->log.reports();
  ASSERT_EQ(reports.size(), 1u);
  EXPECT_EQ(reports[0].text, kText);
  EXPECT_TRUE(reports[0].error.empty()) << reports[0].error;
  EXPECT_FALSE(reports[0].interrupted);
  EXPECT_EQ(reports[0].segments, 4u) << "one segment per sentence";
  int starts = 0, ends = 0;
  std::vector<std::string> words;
  for (const StreamEvent& e : s->events_seen()) {
    starts += e.kind == StreamEvent::Kind::utterance_start;
    ends += e.kind == StreamEvent::Kind::utterance_end;
    if (e.kind == StreamEvent::Kind::word) {
      ASSERT_LE(e.text_end, kText.size());
      words.push_back(kText.substr(e.text_begin, e.text_end - e.text_begin));
    }
  }
  EXPECT_EQ(starts, 1);
  EXPECT_EQ(ends, 1);
  ASSERT_GE(words.size(), 12u);
  EXPECT_EQ(words.front(), "The");
  EXPECT_EQ(words.back(), "said");

  EXPECT_EQ(streamed(*m, mode, kText, word_cuts(kText), 40), whole) << "word by word, with pauses";
  EXPECT_EQ(streamed(*m, mode, kText, byte_cuts(kText), 2), whole) << "byte by byte (characters split)";
  std::vector<size_t> random_cuts;
  std::mt19937 rng(3);
  for (size_t at = 0;;) {
    at += 1 + rng() % 9;
    if (at >= kText.size()) break;
    random_cuts.push_back(at);
  }
  EXPECT_EQ(streamed(*m, mode, kText, random_cuts, 15), whole) << "random pieces";
}

TEST(TextStream, PiecewiseEqualsWholeSlice) { expect_piecewise_equals_whole(SynthesisMode::slice); }
TEST(TextStream, PiecewiseEqualsWholeExact) { expect_piecewise_equals_whole(SynthesisMode::exact); }

// Exact mode vocodes whole segments as the offline path does: the streamed audio is the offline synthesis of
// each sentence segmented on its own.
// A long sentence whose words come one by one: its text encoder columns are computed before its last word
// (acoustic/text_encoder.h), and its audio is still that of the sentence given at once.
TEST(TextStream, ALongSentenceComputedAheadSoundsAsGivenAtOnce) {
  REQUIRE_MODEL(m);
  if (!bf16_supported()) GTEST_SKIP() << "this CPU has no AVX512-BF16: columns are computed ahead in bf16's tiles only";
  Watchdog dog(600);
  // The programs' precision (the library's default, fp32, computes nothing ahead), for this test only.
  struct PrecisionScope {
    Precision saved = precision();
    PrecisionScope() { set_precision(recommended_precision()); }
    ~PrecisionScope() { set_precision(saved); }
  } precision_scope;
  const std::string text =
      "The old lighthouse keeper climbed the narrow spiral stairs every evening at dusk, carrying a lantern, a "
      "flask of tea and a battered notebook full of the ships he had seen.";
  const std::vector<float> whole = streamed(*m, SynthesisMode::slice, text, {}, 0);
  ASSERT_GT(whole.size(), 24000u * 5);
  Session s(*m, SynthesisMode::slice);
  const uint64_t id = s.engine->begin_text();
  const size_t last_word = text.rfind(' ') + 1;
  size_t at = 0;
  for (size_t cut : word_cuts(text)) {
    if (cut > last_word) break;
    ASSERT_TRUE(s.engine->append_text(id, std::string_view(text).substr(at, cut - at)));
    at = cut;
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  // The worker computes ahead while the last word is awaited (bounded: a stalled machine fails by the watchdog).
  EXPECT_TRUE(wait_until(120, [&] { return s.engine->stats().tokens_ahead >= 64; }))
      << "columns computed ahead: " << s.engine->stats().tokens_ahead;
  ASSERT_TRUE(s.engine->append_text(id, std::string_view(text).substr(at)));
  ASSERT_TRUE(s.engine->end_text(id));
  ASSERT_TRUE(s.engine->wait_idle(kWait));
  EXPECT_EQ(s.sink.audio(), whole) << "the sentence computed ahead sounds other than given at once";
}

TEST(TextStream, ExactAudioIsEachSentenceOnItsOwn) {
  REQUIRE_MODEL(m);
  Watchdog dog(600);
  const std::vector<float> got = streamed(*m, SynthesisMode::exact, kText, word_cuts(kText), 10);
  stream_test::Engine e{m->synthesizer(), m->frontend("en-us"), *m->voice("af_heart"), ""};
  std::vector<float> want;
  for (const char* sentence : {"The café's lamp flickered twice.", " Then it went dark!", " Was anyone there?",
                               " \"No,\" he said."}) {
    const std::vector<float> a = stream_test::offline_audio(e, sentence, kSeed, nullptr, e.frontend.get());
    want.insert(want.end(), a.begin(), a.end());
  }
  EXPECT_EQ(got, want);
}

TEST(TextStream, PauseFlushSpeaksAnUnfinishedSentenceOnlyWhenItsClockPasses) {
  REQUIRE_MODEL(m);
  Watchdog dog(600);
  Session s(*m, SynthesisMode::slice);
  const uint64_t id = s.engine->begin_text(1.0);
  ASSERT_TRUE(s.engine->append_text(id, "Hello there, this sentence has no end"));
  // Without the clock moving nothing is said, whatever the wall clock does meanwhile.
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  EXPECT_EQ(s.engine->stats().text_bytes_segmented, 0u);
  s.clock.store(999'000'000);
  std::this_thread::sleep_for(std::chrono::milliseconds(100));
  EXPECT_EQ(s.engine->stats().text_bytes_segmented, 0u) << "0.999 s is not a pause of 1 s";
  s.clock.store(1'000'000'000);
  ASSERT_TRUE(wait_until(kWait, [&] { return !s.sink.audio().empty(); })) << "the pause flush did not speak";
  ASSERT_TRUE(s.engine->append_text(id, " yet. But this one does."));
  ASSERT_TRUE(s.engine->end_text(id));
  ASSERT_TRUE(s.engine->wait_idle(kWait));
  const std::vector<UtteranceReport> reports = s.log.reports();
  ASSERT_EQ(reports.size(), 1u);
  EXPECT_EQ(reports[0].segments, 3u) << "the flushed words, \" yet.\", \" But this one does.\"";
}

TEST(TextStream, StopEndsTheStreamAndDropsItsText) {
  REQUIRE_MODEL(m);
  Watchdog dog(600);
  Session s(*m, SynthesisMode::slice);
  const uint64_t id = s.engine->begin_text();
  ASSERT_TRUE(s.engine->append_text(id, "The first sentence is spoken at once. The second"));
  ASSERT_TRUE(wait_until(kWait, [&] { return !s.sink.audio().empty(); }));
  s.engine->stop();
  EXPECT_FALSE(s.engine->append_text(id, " never comes.")) << "a stopped stream takes no more text";
  EXPECT_FALSE(s.engine->end_text(id));
  ASSERT_TRUE(s.engine->wait_idle(kWait));
  std::vector<UtteranceReport> reports = s.log.reports();
  ASSERT_EQ(reports.size(), 1u);
  EXPECT_TRUE(reports[0].interrupted);
  // The session goes on: a new stream speaks.
  const size_t before = s.sink.audio().size();
  const uint64_t next = s.engine->begin_text();
  ASSERT_TRUE(s.engine->append_text(next, "Yes?"));
  ASSERT_TRUE(s.engine->end_text(next));
  ASSERT_TRUE(s.engine->wait_idle(kWait));
  reports = s.log.reports();
  ASSERT_EQ(reports.size(), 2u);
  EXPECT_FALSE(reports[1].interrupted);
  EXPECT_GT(s.sink.audio().size(), before + 4800);
}

TEST(TextStream, AnUtteranceSaidMeanwhileWaitsForTheEnd) {
  REQUIRE_MODEL(m);
  Watchdog dog(600);
  Session s(*m, SynthesisMode::slice);
  const uint64_t stream = s.engine->begin_text();
  const uint64_t queued = s.engine->say("Queued.");
  ASSERT_TRUE(s.engine->append_text(stream, "Streamed first. "));
  ASSERT_TRUE(wait_until(kWait, [&] { return !s.sink.audio().empty(); }));
  EXPECT_FALSE(s.engine->wait_idle(0.2)) << "the queued utterance must wait for the stream's end";
  ASSERT_TRUE(s.engine->end_text(stream));
  ASSERT_TRUE(s.engine->wait_idle(kWait));
  const std::vector<UtteranceReport> reports = s.log.reports();
  ASSERT_EQ(reports.size(), 2u);
  EXPECT_EQ(reports[0].text, "Streamed first. ");
  EXPECT_EQ(reports[1].text, "Queued.");
  (void)queued;
}

TEST(TextStream, InvalidUtf8IsSpokenAroundAndBlankTextSaysNothing) {
  REQUIRE_MODEL(m);
  Watchdog dog(600);
  Session s(*m, SynthesisMode::slice);
  const uint64_t id = s.engine->begin_text();
  for (const char* piece : {"Bad \xff", "\xfe bytes \xc3", "\x28 here. And \xe2\x82", " more."})
    ASSERT_TRUE(s.engine->append_text(id, piece));
  ASSERT_TRUE(s.engine->end_text(id));
  const uint64_t blank = s.engine->begin_text();
  ASSERT_TRUE(s.engine->append_text(blank, " \n\t "));
  ASSERT_TRUE(s.engine->end_text(blank));
  ASSERT_TRUE(s.engine->wait_idle(kWait));
  const std::vector<UtteranceReport> reports = s.log.reports();
  ASSERT_EQ(reports.size(), 2u);
  EXPECT_TRUE(reports[0].error.empty()) << reports[0].error;
  EXPECT_GT(reports[0].audio_seconds, 0.5);
  EXPECT_TRUE(reports[1].error.empty()) << reports[1].error;
  EXPECT_EQ(reports[1].audio_seconds, 0.0);
}

}  // namespace
}  // namespace kokoro
