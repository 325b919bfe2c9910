// The streaming engine (engine/stream_engine.h) end to end on the real model, with sinks the test drives:
//   - exact mode equals the offline Synthesizer segment by segment; events (segments, words) line up with
//     the audio; slice mode delivers the same number of samples, and the same audio wherever slices end;
//   - barge-in: stop() while the vocoder is stuck in the middle of its work still silences the device at
//     its next period (the output thread flushes without waiting for compute), and the next utterance plays;
//   - underrun: a vocoder slower than the device makes the device play silence and count an underrun, and
//     every sample still arrives afterwards;
//   - back-pressure: a 1 MB text against a device that plays nothing keeps every stage bounded;
//   - exact mode's pre-roll: test_stream_engine_preroll.cpp.
// No assertion depends on wall-clock time: the device is a PlaybackQueue (the real JACK/PortAudio logic)
// rendered by the test thread period by period, and slowness is a hook that blocks until the test says so.
// A watchdog turns a hang into a loud failure.
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <csignal>
#include <fstream>
#include <mutex>
#include <thread>

#include "engine/speaker.h"
#include "frontend/utf8.h"
#include "tests/stream_engine_support.h"
#include "tests/test_util.h"

using namespace kokoro;
using namespace kokoro::stream_test;

namespace {

TEST(StreamEngine, ExactModeEqualsTheSynthesizerAndEventsLineUp) {
  const Engine& e = engine();
  ASSERT_TRUE(e.synth) << e.error;
  Watchdog dog(120);
  size_t segments = 0;
  const std::vector<float> want = offline_audio(e, kText, 7, &segments);
  ASSERT_GE(segments, 2u) << "the short first segment should split this text";

  RecordingSink sink;
  std::vector<StreamEvent> events;
  std::vector<UtteranceReport> reports;
  {
    StreamEngine eng(e.synth, e.frontend, e.voice, sink, EngineVoice{1.0f, false, 7, false}, SynthesisMode::exact, {});
    eng.on_event([&](const StreamEvent& ev) { events.push_back(ev); });
    eng.on_report([&](const UtteranceReport& r) { reports.push_back(r); });
    eng.say(kText);
    ASSERT_TRUE(eng.wait_idle(100 * kTimeScale));
  }
  const std::vector<float> got = sink.audio();
  ASSERT_EQ(got.size(), want.size());
  double worst = 0;
  for (size_t i = 0; i < got.size(); ++i) worst = std::max(worst, double(std::fabs(got[i] - want[i])));
  EXPECT_EQ(worst, 0.0) << "the pipeline's exact mode must be the offline synthesis";
  ASSERT_EQ(reports.size(), 1u);
  EXPECT_FALSE(reports[0].interrupted);
  EXPECT_TRUE(reports[0].error.empty()) << reports[0].error;
  EXPECT_EQ(reports[0].segments, segments);
  EXPECT_NEAR(reports[0].audio_seconds, want.size() / 24000.0, 1e-9);
  EXPECT_EQ(sink.ends(), 1u);

  // Events: utterance_start, then per segment start, words, end; times never go back; every word's span is
  // a word of the text; the last segment ends where the audio ends.
  ASSERT_GE(events.size(), 4u);
  EXPECT_EQ(events.front().kind, StreamEvent::Kind::utterance_start);
  EXPECT_EQ(events.back().kind, StreamEvent::Kind::utterance_end);
  size_t seg_starts = 0, words = 0;
  double last_start = 0, last_segment_end = 0;
  const std::string text = kText;
  for (const StreamEvent& ev : events) {
    EXPECT_GE(ev.time_s + 1e-9, last_start);
    last_start = std::max(last_start, ev.time_s);
    if (ev.kind == StreamEvent::Kind::segment_start) ++seg_starts;
    if (ev.kind == StreamEvent::Kind::segment_end) last_segment_end = ev.time_s;
    if (ev.kind == StreamEvent::Kind::word) {
      ++words;
      ASSERT_LT(ev.text_begin, ev.text_end);
      ASSERT_LE(ev.text_end, text.size());
      const std::string w = text.substr(ev.text_begin, ev.text_end - ev.text_begin);
      EXPECT_EQ(w.find(' '), std::string::npos) << w;
      EXPECT_LE(ev.time_s, ev.end_s);
    }
  }
  EXPECT_EQ(seg_starts, segments);
  EXPECT_EQ(words, 8u);  // every word of kText
  EXPECT_NEAR(last_segment_end, want.size() / 24000.0, 1e-9);
}

// first_segment_first: while the first segment is being vocoded, the acoustic worker leaves the second alone
// (on two cores it would take compute from the first audio); without it, it runs ahead. Either way the
// audio is the offline synthesis.
TEST(StreamEngine, LaterSegmentsWaitForTheFirstSegmentsAudio) {
  const Engine& e = engine();
  ASSERT_TRUE(e.synth) << e.error;
  Watchdog dog(240);
  size_t segments = 0;
  const std::vector<float> want = offline_audio(e, kText, 7, &segments);
  ASSERT_EQ(segments, 2u);
  const Vocab vocab = Vocab::from_config(e.synth->model().config(), e.synth->model().path());
  const std::vector<Segment> segs = e.frontend->segment(kText);
  const SynthesisResult first = e.synth->synthesize(tokenize(segs[0].phonemes, vocab), e.voice, 1.0f,
                                                    static_cast<int64_t>(utf8::count_code_points(segs[0].phonemes)));
  const uint64_t first_frames = first.audio.size() / kSamplesPerFrame;
  const uint64_t all_frames = want.size() / kSamplesPerFrame;
  ASSERT_LT(first_frames, all_frames);

  for (const bool hold : {true, false}) {
    SCOPED_TRACE(hold ? "first_segment_first" : "overlapping");
    RecordingSink sink;
    Gate gate;
    StreamOptions so;
    so.first_segment_first = hold;
    so.before_chunk = [&] { gate.pass(); };
    gate.hold();
    StreamEngine eng(e.synth, e.frontend, e.voice, sink, EngineVoice{1.0f, false, 7, false}, SynthesisMode::exact, so);
    eng.say(kText);
    gate.wait_for_waiter();  // the vocoder has the first segment and is stuck before computing it
    if (hold) {
      while (eng.stats().first_segment_holds == 0) std::this_thread::sleep_for(std::chrono::milliseconds(2));
      for (int i = 0; i < 10; ++i) std::this_thread::sleep_for(std::chrono::milliseconds(10));
      EXPECT_EQ(eng.stats().frames_produced, first_frames) << "the second segment must wait for the first one's audio";
    } else {
      while (eng.stats().frames_produced < all_frames) std::this_thread::sleep_for(std::chrono::milliseconds(2));
      EXPECT_EQ(eng.stats().first_segment_holds, 0u);
    }
    gate.release();
    ASSERT_TRUE(eng.wait_idle(100 * kTimeScale));
    EXPECT_EQ(eng.stats().frames_produced, all_frames);
    const std::vector<float> got = sink.audio();
    ASSERT_EQ(got.size(), want.size());
    EXPECT_TRUE(std::equal(got.begin(), got.end(), want.begin())) << "exact mode must stay the offline synthesis";
  }
}

// Slice mode's options: the shipped statistics predictor for this model (without one, slice mode is exact).
StreamOptions slice_options(const Engine& e) {
  StreamOptions so = recommended_slice_options(e.synth->model());
  EXPECT_NE(so.predictor, nullptr) << "no statistics predictor for the test model (data/kokoro-v1_0.stats-predictor.kokoro)";
  return so;
}

TEST(StreamEngine, SliceModeDeliversEverySampleInSlices) {
  const Engine& e = engine();
  ASSERT_TRUE(e.synth) << e.error;
  Watchdog dog(120);
  const std::vector<float> exact = offline_audio(e, kText, 7);
  RecordingSink sink;
  StreamOptions so = slice_options(e);
  so.first_chunk_frames = 2;
  so.max_chunk_frames = 8;
  StreamEngine eng(e.synth, e.frontend, e.voice, sink, EngineVoice{1.0f, false, 7, false}, SynthesisMode::slice, so);
  std::vector<UtteranceReport> reports;
  eng.on_report([&](const UtteranceReport& r) { reports.push_back(r); });
  eng.say(kText);
  ASSERT_TRUE(eng.wait_idle(100 * kTimeScale));
  EXPECT_EQ(sink.audio().size(), exact.size());
  EXPECT_GT(eng.stats().chunks, 4u);
  ASSERT_EQ(reports.size(), 1u);
  EXPECT_TRUE(reports[0].error.empty()) << reports[0].error;
}

// Slice mode (whole-sentence segments, whole_sentence_frontend): for the same segments, the same durations and
// sample count as exact mode; the generator really runs in several slices; one slice covering the segment is
// exact mode bit for bit.

std::vector<float> run_to_recording(const Engine& e, SynthesisMode mode, StreamOptions so, const std::string& text,
                                    StreamEngineStats* stats = nullptr, std::vector<StreamEvent>* events = nullptr) {
  RecordingSink sink;
  StreamEngine eng(e.synth, whole_sentence_frontend(), e.voice, sink, EngineVoice{1.0f, false, 7, false}, mode, so);
  if (events) eng.on_event([events](const StreamEvent& ev) { events->push_back(ev); });
  eng.say(text);
  EXPECT_TRUE(eng.wait_idle(100 * kTimeScale));
  if (stats) *stats = eng.stats();
  return sink.audio();
}

const char* kSliceText =
    "The lamp flickered twice, and the old clock on the wall struck nine. Then the whole house went dark.";
// The same two sentences on two lines: the frontend never joins lines, so exact mode makes each sentence a
// segment, as slice mode's first sentence alone does (StreamOptions::first_sentence_alone).
const char* kSliceTextTwoLines =
    "The lamp flickered twice, and the old clock on the wall struck nine.\nThen the whole house went dark.";

StreamOptions reference_segments(StreamOptions so) {
  so.first_sentence_alone = false;
  return so;
}

TEST(StreamEngine, SliceModeKeepsEverySentencesTimingAndSlicesTheGenerator) {
  const Engine& e = engine();
  ASSERT_TRUE(e.synth) << e.error;
  Watchdog dog(240);
  // Both segmentations: the reference's (one segment for both sentences) and slice mode's default (the first
  // sentence alone), each against exact mode on the same segments.
  for (const bool alone : {false, true}) {
    SCOPED_TRACE(alone ? "first sentence alone" : "reference segments");
    std::vector<StreamEvent> exact_events, slice_events;
    StreamEngineStats stats;
    const std::vector<float> exact = run_to_recording(e, SynthesisMode::exact, {}, alone ? kSliceTextTwoLines : kSliceText,
                                                      nullptr, &exact_events);
    StreamOptions so = slice_options(e);
    so.first_sentence_alone = alone;
    const std::vector<float> sliced = run_to_recording(e, SynthesisMode::slice, so, kSliceText, &stats, &slice_events);
    ASSERT_EQ(sliced.size(), exact.size()) << "durations must equal exact mode's";
    EXPECT_GE(stats.slices, 2u) << "a 5 s segment should start with a short first slice";
    // Word and segment events at the same times as in exact mode.
    ASSERT_EQ(slice_events.size(), exact_events.size());
    size_t segments = 0;
    for (size_t i = 0; i < exact_events.size(); ++i) {
      EXPECT_EQ(slice_events[i].kind, exact_events[i].kind);
      EXPECT_EQ(slice_events[i].time_s, exact_events[i].time_s);
      EXPECT_EQ(slice_events[i].text_begin, exact_events[i].text_begin);
      segments += slice_events[i].kind == StreamEvent::Kind::segment_start;
    }
    EXPECT_EQ(segments, alone ? 2u : 1u);
    // Nothing audible where exact mode is silent: the leading silence (before the first word) stays silent.
    size_t lead = 0;
    while (lead < exact.size() && std::fabs(exact[lead]) < 1e-3f) ++lead;
    float leak = 0;
    for (size_t i = 0; i < lead; ++i) leak = std::max(leak, std::fabs(sliced[i]));
    EXPECT_LT(leak, 3e-3f) << "sound before speech where exact mode is silent (" << lead << " silent samples)";
  }
}

// Every slice of a segment is normalised with the same predicted statistics and carries the convolutions'
// state, so where slices end changes nothing but float rounding (the products see other column counts):
// one slice for the whole segment, the default 12-48 frames, and 3-frame slices give the same audio.
TEST(StreamEngine, SliceModeAudioDoesNotDependOnWhereSlicesEnd) {
  const Engine& e = engine();
  ASSERT_TRUE(e.synth) << e.error;
  Watchdog dog(240);
  // (The reference's segments: both sentences in one segment, so that "one slice" covers everything.)
  // (No early start: its first 0.3 s come from another run; test_early_start.cpp checks its slices.)
  StreamOptions base = reference_segments(slice_options(e));
  base.early_predictor = nullptr;
  StreamOptions whole = base, tiny = base;
  whole.first_chunk_frames = whole.max_chunk_frames = 100000;
  tiny.first_chunk_frames = tiny.max_chunk_frames = 3;
  StreamEngineStats stats_whole, stats_tiny;
  const std::vector<float> a = run_to_recording(e, SynthesisMode::slice, whole, kSliceText, &stats_whole);
  const std::vector<float> b = run_to_recording(e, SynthesisMode::slice, base, kSliceText);
  const std::vector<float> c = run_to_recording(e, SynthesisMode::slice, tiny, kSliceText, &stats_tiny);
  EXPECT_EQ(stats_whole.slices, 1u) << "one segment (the two sentences joined, as the reference joins them), one slice";
  EXPECT_GT(stats_tiny.slices, 50u);
  ASSERT_EQ(a.size(), b.size());
  ASSERT_EQ(a.size(), c.size());
  float db = 0, dc = 0, peak = 0;
  for (size_t i = 0; i < a.size(); ++i) {
    db = std::max(db, std::fabs(a[i] - b[i]));
    dc = std::max(dc, std::fabs(a[i] - c[i]));
    peak = std::max(peak, std::fabs(a[i]));
  }
  std::printf("max |difference| to one slice: default slices %.2e, 3-frame slices %.2e (peak %.3f)\n", db, dc, peak);
  EXPECT_GT(peak, 0.05f);
  EXPECT_LT(db, 1e-4f) << "default slices against one slice";
  EXPECT_LT(dc, 1e-4f) << "3-frame slices against one slice";
}

TEST(StreamEngine, SliceModeBargeInWhileStuckBetweenSlices) {
  const Engine& e = engine();
  ASSERT_TRUE(e.synth) << e.error;
  Watchdog dog(240);
  ManualDeviceSink sink(5.0);  // holds the whole first slice
  Gate gate;
  StreamOptions so = slice_options(e);
  so.preroll.enabled = false;  // the subject is barge-in: a stuck vocoder's first slice must play, not be held
  std::atomic<int> slices{0};
  so.before_chunk = [&] {
    if (++slices == 2) gate.pass();  // the vocoder gets stuck before its second slice
  };
  gate.hold();
  StreamEngine eng(e.synth, whole_sentence_frontend(), e.voice, sink, EngineVoice{1.0f, false, 0, false},
                   SynthesisMode::slice, so);
  eng.say(kSliceText);
  gate.wait_for_waiter();
  // The first slice is in the audio ring; wait until the output thread has handed all of it to the device.
  while (eng.stats().samples_to_sink < eng.stats().max_audio_queued) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  constexpr std::size_t kPeriod = 256;
  bool heard = false;
  for (int i = 0; i < 200 && !heard; ++i) heard = any_sound(sink.render(kPeriod));
  ASSERT_TRUE(heard) << "the first slice should play while the second is not computed";
  stop_and_expect_silence(eng, sink, kPeriod);
  gate.release();
  ASSERT_TRUE(eng.wait_idle(60 * kTimeScale));
  slices = 100;
  const uint64_t played_before = sink.stats().frames_played;
  eng.say("Yes?");
  play_until_idle(eng, sink, kPeriod);
  EXPECT_EQ(sink.stats().frames_played - played_before, offline_audio(e, "Yes?", 0).size());
}

// SSML through the engine (frontend/ssml.h reads it; the engine acts on it): a <break time="500ms"/> is
// exactly 12000 samples of silence between the two parts, each part is what it is alone; a <voice> switch
// speaks its part with that voice; <prosody rate> changes the part's speed.
TEST(StreamEngine, SsmlBreakVoiceAndRateAreSpoken) {
  const Engine& e = engine();
  ASSERT_TRUE(e.synth) << e.error;
  Watchdog dog(240);
  const auto len = [&](const std::string& text) { return run_to_recording(e, SynthesisMode::exact, {}, text); };
  const std::vector<float> a = len("<speak>The lamp flickered.</speak>");
  const std::vector<float> b = len("<speak>Then it went dark.</speak>");
  const std::vector<float> both = len("<speak>The lamp flickered.<break time=\"500ms\"/>Then it went dark.</speak>");
  ASSERT_EQ(both.size(), a.size() + 12000 + b.size());
  for (size_t i = 0; i < 12000; ++i) ASSERT_EQ(both[a.size() + i], 0.0f) << "pause sample " << i;
  for (size_t i = 0; i < b.size(); ++i) ASSERT_EQ(both[a.size() + 12000 + i], b[i]) << "second part sample " << i;

  const std::vector<float> bella = len("<speak><voice name=\"af_bella\">Then it went dark.</voice></speak>");
  ASSERT_FALSE(bella.empty());
  EXPECT_TRUE(bella.size() != b.size() || bella != b) << "the voice switch changed nothing";
  const std::vector<float> slow = len("<speak><prosody rate=\"slow\">Then it went dark.</prosody></speak>");
  EXPECT_GT(slow.size(), b.size() + 2400) << "a slow rate should lengthen the sentence";

  // Marks are events at their place in the audio: here, where the second part starts (after the pause).
  std::vector<StreamEvent> events;
  run_to_recording(e, SynthesisMode::exact, {},
                   "<speak>The lamp flickered.<break time=\"500ms\"/><mark name=\"dark\"/>Then it went dark.<mark name=\"end\"/></speak>",
                   nullptr, &events);
  std::vector<std::pair<std::string, double>> marks;
  for (const StreamEvent& ev : events)
    if (ev.kind == StreamEvent::Kind::mark) marks.emplace_back(ev.name, ev.time_s);
  ASSERT_EQ(marks.size(), 2u);
  EXPECT_EQ(marks[0].first, "dark");
  EXPECT_NEAR(marks[0].second, (a.size() + 12000) / 24000.0, 1e-9);
  EXPECT_EQ(marks[1].first, "end");
  EXPECT_NEAR(marks[1].second, both.size() / 24000.0, 1e-9);
}

// A mark inside a sentence changes nothing said: the audio is the text's without it, sample for sample (in
// exact mode and in slice mode, whose slice borders follow the words), and the mark comes where its word
// starts, just before that word's event. speech-dispatcher puts such a mark after every sentence end and
// abbreviation ("Mr.<mark/> Smith").
TEST(StreamEngine, MarksInsideASentenceComeWithTheirWord) {
  const Engine& e = engine();
  ASSERT_TRUE(e.synth) << e.error;
  Watchdog dog(240);
  const std::string plain = "Mr. Smith came home late. The lamp flickered.";
  const std::string marked =
      "<speak>Mr.<mark name=\"__spd_0\"/> Smith came <mark name=\"m\"/>home late.<mark name=\"__spd_1\"/> The lamp "
      "flickered.<mark name=\"end\"/></speak>";
  const std::vector<std::string> expected_words = {"Smi", "hom", "The"};  // the word after each inner mark
  for (SynthesisMode mode : {SynthesisMode::exact, SynthesisMode::slice}) {
    SCOPED_TRACE(mode == SynthesisMode::exact ? "exact" : "slice");
    std::vector<StreamEvent> events;
    const std::vector<float> without = run_to_recording(e, mode, {}, plain);
    const std::vector<float> with = run_to_recording(e, mode, {}, marked, nullptr, &events);
    ASSERT_EQ(with.size(), without.size());
    EXPECT_TRUE(with == without) << "a mark changed the audio";
    EXPECT_EQ(std::count_if(events.begin(), events.end(),
                            [](const StreamEvent& ev) { return ev.kind == StreamEvent::Kind::segment_start; }),
              1) << "the text is one segment, marks or not";
    std::vector<std::string> names;
    for (size_t i = 0; i < events.size(); ++i) {
      if (events[i].kind != StreamEvent::Kind::mark) continue;
      names.push_back(events[i].name);
      if (names.size() > expected_words.size()) {
        EXPECT_NEAR(events[i].time_s, with.size() / 24000.0, 1e-9) << "the last mark comes after all audio";
        continue;
      }
      ASSERT_LT(i + 1, events.size());
      const StreamEvent& word = events[i + 1];
      ASSERT_EQ(word.kind, StreamEvent::Kind::word) << "mark " << events[i].name << " is not followed by its word";
      EXPECT_EQ(marked.substr(word.text_begin, 3), expected_words[names.size() - 1]);
      EXPECT_EQ(events[i].time_s, word.time_s) << "mark " << events[i].name;
    }
    EXPECT_EQ(names, (std::vector<std::string>{"__spd_0", "m", "__spd_1", "end"}));
  }
}

TEST(StreamEngine, BargeInSilencesTheDeviceWhileTheVocoderIsStillComputing) {
  const Engine& e = engine();
  ASSERT_TRUE(e.synth) << e.error;
  Watchdog dog(120);
  ManualDeviceSink sink(0.5);
  Gate gate;
  StreamOptions so = slice_options(e);
  so.first_chunk_frames = 4;
  so.max_chunk_frames = 4;
  so.preroll.enabled = false;  // the subject is barge-in: the queued chunks must play, not wait for a stuck vocoder
  std::atomic<int> chunks{0};
  so.before_chunk = [&] {
    if (++chunks == 4) gate.pass();  // the vocoder gets stuck in its 4th chunk
  };
  gate.hold();
  StreamEngine eng(e.synth, e.frontend, e.voice, sink, EngineVoice{1.0f, false, 0, false}, SynthesisMode::slice, so);
  ReportLog log;
  log.attach(eng);
  eng.say("Somewhere far beyond the hills, a very long sentence keeps going and going without any end in sight.");
  gate.wait_for_waiter();  // three chunks of audio are queued, the vocoder is stuck
  // Wait until the output thread has handed them to the device (on a loaded machine it may not have yet: the
  // 200 periods below take microseconds, and failed once under ctest -j2), then play until sound comes out.
  while (eng.stats().samples_to_sink < eng.stats().samples_vocoded) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  constexpr std::size_t kPeriod = 256;
  bool heard = false;
  for (int i = 0; i < 200 && !heard; ++i) heard = any_sound(sink.render(kPeriod));
  ASSERT_TRUE(heard);
  ASSERT_GT(sink.queued(), kPeriod) << "stale audio must still be queued for the test to mean anything";

  stop_and_expect_silence(eng, sink, kPeriod);

  gate.release();
  ASSERT_TRUE(eng.wait_idle(60 * kTimeScale));
  chunks = 100;
  expect_interrupted_then_next_plays_whole(e, eng, sink, log, kPeriod);
}

TEST(StreamEngine, UnderrunPlaysSilenceCountsAndLosesNothing) {
  const Engine& e = engine();
  ASSERT_TRUE(e.synth) << e.error;
  Watchdog dog(120);
  ManualDeviceSink sink(0.5);
  Gate gate;
  StreamOptions so = slice_options(e);
  so.first_chunk_frames = 4;
  so.max_chunk_frames = 4;
  so.preroll.enabled = false;  // the subject is an underrun, which slice mode's pre-roll exists to prevent
  std::atomic<int> chunks{0};
  so.before_chunk = [&] {
    if (++chunks == 3) gate.pass();  // the vocoder falls behind after two chunks
  };
  gate.hold();
  StreamEngine eng(e.synth, e.frontend, e.voice, sink, EngineVoice{1.0f, false, 0, false}, SynthesisMode::slice, so);
  const char* text = "Four words come first.";
  const std::vector<float> want = offline_audio(e, text, 0);
  eng.say(text);
  gate.wait_for_waiter();
  constexpr std::size_t kPeriod = 256;
  // Play the two chunks and then some: the device runs dry in the middle of the utterance.
  while (sink.stats().underruns == 0) sink.render(kPeriod);
  for (int i = 0; i < 10; ++i) sink.render(kPeriod);  // silence while the vocoder is late
  gate.release();
  play_until_idle(eng, sink, kPeriod);
  const SinkStats st = sink.stats();
  EXPECT_GE(st.underruns, 1u);
  EXPECT_EQ(st.frames_played, want.size()) << "every sample of the utterance is played despite the underrun";
  EXPECT_EQ(st.frames_written, want.size());
}

TEST(StreamEngine, BackPressureBoundsAMegabyteText) {
  const Engine& e = engine();
  ASSERT_TRUE(e.synth) << e.error;
  Watchdog dog(120);
  ManualDeviceSink sink(0.25);  // never rendered: plays nothing, so everything upstream must stop
  StreamOptions so;
  so.frame_ring_frames = 128;
  so.audio_ring_seconds = 0.25;
  so.text_piece_bytes = 2048;
  std::string text;
  while (text.size() < (1u << 20)) text += "The quick brown fox jumps over the lazy dog, again and again. ";
  {
    StreamEngine eng(e.synth, e.frontend, e.voice, sink, EngineVoice{}, SynthesisMode::exact, so);
    eng.say(text);
    // Wait until the acoustic worker is blocked on back-pressure (a state, not a time).
    while (!eng.stats().acoustic_waiting) std::this_thread::sleep_for(std::chrono::milliseconds(5));
    const uint64_t produced = eng.stats().frames_produced;
    for (int i = 0; i < 20; ++i) std::this_thread::sleep_for(std::chrono::milliseconds(10));
    const StreamEngineStats s = eng.stats();
    std::printf("  1 MB text, device not playing: %llu text bytes segmented, %llu frames produced, "
                "%llu queued at most, %llu samples in the audio ring at most\n",
                static_cast<unsigned long long>(s.text_bytes_segmented), static_cast<unsigned long long>(s.frames_produced),
                static_cast<unsigned long long>(s.max_frames_queued), static_cast<unsigned long long>(s.max_audio_queued));
    EXPECT_EQ(s.frames_produced, produced) << "the acoustic worker must be blocked, not running ahead";
    EXPECT_LE(s.text_bytes_segmented, 2u * 2048u) << "only the pieces in flight are segmented";
    EXPECT_TRUE(s.acoustic_waiting);
    // In flight: the 128 frames allowed, or one whole segment when it is longer (a segment always goes whole).
    EXPECT_LE(s.max_frames_queued, 128u + 1000u);
    // Frames: the ring, the segment the vocoder holds, the audio ring and the device buffer (in frames).
    EXPECT_LE(s.frames_produced, 128u + 1000u);
    eng.stop();
  }  // destruction must not hang with everything blocked
}

// An engine that has nothing to say for a while gives the weights' file pages back (and the heap's free
// pages, not observable here): an idle daemon should not hold the text side's ~75 MB of fp32 weights.
TEST(StreamEngine, AnIdleEngineGivesTheWeightsPagesBack) {
  const Engine& e = engine();
  ASSERT_TRUE(e.synth) << e.error;
  if (std::getenv("KOKORO_KEEP_WEIGHT_PAGES")) GTEST_FAIL() << "KOKORO_KEEP_WEIGHT_PAGES is set: nothing to check";
  Watchdog dog(180);
  // Read in place (fp32) by every sentence's acoustic model in every precision: ALBERT's feed-forward weight.
  const void* weight = e.synth->model().get("bert.encoder.albert_layer_groups.0.albert_layers.0.ffn.weight").data;
  RecordingSink sink;
  StreamEngine eng(e.synth, e.frontend, e.voice, sink, EngineVoice{1.0f, false, 0, false}, SynthesisMode::exact, {});
  eng.say("Good morning.");
  ASSERT_TRUE(eng.wait_idle(100 * kTimeScale));
  const long busy = test::resident_kb_of_mapping(weight);
  ASSERT_GE(busy, 4096) << "the sentence's acoustic model should have read the weights just now";
  // Released kIdleReleaseDelay (0.5 s) after the utterance; a loaded machine may take longer to get there.
  long idle = busy;
  for (int i = 0; i < 600 && idle > busy / 4; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    idle = test::resident_kb_of_mapping(weight);
  }
  EXPECT_LE(idle, busy / 4) << busy << " kB right after the utterance, " << idle << " kB a minute later";
  // And the next sentence reads them back: same audio as the first time.
  const std::vector<float> first = sink.audio();
  eng.say("Good morning.");
  ASSERT_TRUE(eng.wait_idle(100 * kTimeScale));
  const std::vector<float> both = sink.audio();
  ASSERT_EQ(both.size(), 2 * first.size());
  EXPECT_TRUE(std::equal(first.begin(), first.end(), both.begin() + static_cast<std::ptrdiff_t>(first.size())));
}

// The engine's threads wait for each other by wake-ups, not by polling: idle, the vocoder worker and the output
// thread sleep up to StreamEngine::kNapLimit (50 ms) at a time (they napped 2 ms at a time before: ~1000 naps
// a second, each a wake-up that took a core from a sentence's acoustic model). Then a sentence still comes out
// whole. A loaded machine only makes the naps fewer (they last longer).
TEST(StreamEngine, AnIdleEngineSleepsUntilThereIsWork) {
  const Engine& e = engine();
  ASSERT_TRUE(e.synth) << e.error;
  Watchdog dog(180);
  RecordingSink sink;
  StreamEngine eng(e.synth, e.frontend, e.voice, sink, EngineVoice{1.0f, false, 0, false}, SynthesisMode::slice, {});
  eng.say("Good morning.");
  ASSERT_TRUE(eng.wait_idle(100 * kTimeScale));
  const size_t first = sink.audio().size();
  ASSERT_GT(first, 0u);
  const uint64_t before = eng.stats().naps;
  const auto t0 = std::chrono::steady_clock::now();
  std::this_thread::sleep_for(std::chrono::seconds(1));
  const double idle_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  const uint64_t naps = eng.stats().naps - before;
  // Two threads, each at most one nap per 50 ms, and a few wake-ups (the idle release of the weights' pages).
  const double most = 2.0 * (idle_s / 0.050 + 4);
  EXPECT_LE(static_cast<double>(naps), most) << naps << " naps in " << idle_s << " s idle";
  eng.say("Good morning.");
  ASSERT_TRUE(eng.wait_idle(100 * kTimeScale));
  EXPECT_EQ(sink.audio().size(), 2 * first) << "the sentence after the idle second came out whole";
}

TEST(StreamEngine, BadOptionsAreClearErrors) {
  const Engine& e = engine();
  ASSERT_TRUE(e.synth) << e.error;
  RecordingSink sink;
  StreamOptions so = slice_options(e);
  so.first_chunk_frames = 0;
  EXPECT_THROW(StreamEngine(e.synth, e.frontend, e.voice, sink, EngineVoice{}, SynthesisMode::slice, so), Error);
  so = {};
  so.preroll.margin_seconds = -1;
  EXPECT_THROW(StreamEngine(e.synth, e.frontend, e.voice, sink, EngineVoice{}, SynthesisMode::exact, so), Error);
  so = {};
  so.preroll.progress_trust_fraction = 0;
  EXPECT_THROW(StreamEngine(e.synth, e.frontend, e.voice, sink, EngineVoice{}, SynthesisMode::exact, so), Error);
  so = {};
  so.preroll.segment_overhead_seconds = -0.1;
  EXPECT_THROW(StreamEngine(e.synth, e.frontend, e.voice, sink, EngineVoice{}, SynthesisMode::exact, so), Error);
  EXPECT_THROW(parse_synthesis_mode("fast"), Error);
  // The retired stream mode is refused with the reason, not as an unknown word.
  try {
    parse_synthesis_mode("stream");
    ADD_FAILURE() << "stream mode was retired";
  } catch (const Error& ex) {
    EXPECT_NE(std::string(ex.what()).find("retired"), std::string::npos) << ex.what();
  }
}

}  // namespace
