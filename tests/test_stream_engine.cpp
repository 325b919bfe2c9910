// The streaming engine (engine/stream_engine.h) end to end on the real model, with sinks the test drives:
//   - exact mode equals the offline Synthesizer segment by segment; events (segments, words) line up with
//     the audio; stream mode delivers the same number of samples;
//   - barge-in: stop() while the vocoder is stuck in the middle of its work still silences the device at
//     its next period (the output thread flushes without waiting for compute), and the next utterance plays;
//   - underrun: a vocoder slower than the device makes the device play silence and count an underrun, and
//     every sample still arrives afterwards;
//   - back-pressure: a 1 MB text against a device that plays nothing keeps every stage bounded;
//   - exact mode's pre-roll: a cut first segment waits until the next one is vocoded (no underrun, where
//     without the rule there is one), a single segment does not wait, a barge-in drops a held utterance;
//     following the vocoder's progress (in virtual time: the test's clock is the pre-roll's and the
//     device's), playback starts earlier than the first rule when the vocoder is fast and holds on when it
//     slows down mid-segment; Synthesizer::vocode reports its progress without changing a sample.
// No assertion depends on wall-clock time: the device is a PlaybackQueue (the real JACK/PortAudio logic)
// rendered by the test thread period by period, and slowness is a hook that blocks until the test says so.
// A watchdog turns a hang into a loud failure.
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <condition_variable>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <mutex>
#include <thread>

#include "core/assets.h"
#include "engine/speaker.h"
#include "engine/stream_engine.h"
#include "engine/synthesizer.h"
#include "frontend/utf8.h"
#include "frontend/vocab.h"
#include "realtime/playback_queue.h"
#include "tests/golden_support.h"
#include "tests/test_util.h"

using namespace kokoro;

namespace {

// Sanitizer builds run the model 10-20x slower (and share the machine): give them more time before a hang
// is declared.
#if defined(__SANITIZE_THREAD__) || defined(__SANITIZE_ADDRESS__)
constexpr double kTimeScale = 15;
#else
constexpr double kTimeScale = 1;
#endif

// Aborts the process if not disarmed in time: a hang must fail loudly, not look like a slow pass.
class Watchdog {
 public:
  explicit Watchdog(double base_seconds)
      : thread_([this, seconds = base_seconds * kTimeScale] {
          std::unique_lock<std::mutex> lock(m_);
          if (!cv_.wait_for(lock, std::chrono::duration<double>(seconds), [&] { return done_; })) {
            std::fprintf(stderr, "watchdog: test hung for %.0f s\n", seconds);
            std::abort();
          }
        }) {}
  ~Watchdog() {
    {
      std::lock_guard<std::mutex> lock(m_);
      done_ = true;
    }
    cv_.notify_all();
    thread_.join();
  }

 private:
  std::mutex m_;
  std::condition_variable cv_;
  bool done_ = false;
  std::thread thread_;
};

// Keeps everything written (never blocks), like a WAV file.
class RecordingSink final : public AudioSink {
 public:
  using AudioSink::write;
  std::size_t write(const float* s, std::size_t n) override {
    std::lock_guard<std::mutex> lock(m_);
    audio_.insert(audio_.end(), s, s + n);
    return n;
  }
  void end_utterance() override { ends_.fetch_add(1); }
  void flush() override {}
  void drain(double) override {}
  void interrupt() override {}
  SinkStats stats() const override { return {}; }
  std::string describe() const override { return "recording sink"; }
  int input_rate() const override { return kSampleRate; }
  std::vector<float> audio() const {
    std::lock_guard<std::mutex> lock(m_);
    return audio_;
  }
  uint64_t ends() const { return ends_.load(); }

 private:
  mutable std::mutex m_;
  std::vector<float> audio_;
  std::atomic<uint64_t> ends_{0};
};

// A device whose clock is the test: render(n) is one device period.
class ManualDeviceSink final : public AudioSink {
 public:
  explicit ManualDeviceSink(double buffer_seconds) : q_("test device", kSampleRate, kSampleRate, options(buffer_seconds)) {}
  using AudioSink::write;
  std::size_t write(const float* s, std::size_t n) override { return q_.write(s, n); }
  void end_utterance() override { q_.end_utterance(); }
  void flush() override { q_.flush(); }
  void drain(double t) override { q_.drain(t); }
  void interrupt() override { q_.interrupt(); }
  SinkStats stats() const override { return q_.stats(); }
  std::string describe() const override { return "manual test device"; }
  bool plays_in_real_time() const override { return true; }
  int input_rate() const override { return kSampleRate; }
  std::vector<float> render(std::size_t n) {
    std::vector<float> out(n);
    PlaybackQueue::CallbackScope scope(q_, n);
    q_.render(out.data(), n);
    return out;
  }
  std::size_t queued() const { return q_.queued(); }

 private:
  static SinkOptions options(double buffer_seconds) {
    SinkOptions o;
    o.buffer_seconds = buffer_seconds;
    o.stall_timeout_seconds = 600;  // the back-pressure test never plays
    o.quality = ResampleQuality::fastest;
    return o;
  }
  PlaybackQueue q_;
};

// Plays (renders) whatever the engine hands over until it is idle and the device queue is empty. Renders
// only when a period's worth is queued (or the end is reached), so it never races ahead of the engine.
uint64_t play_until_idle(StreamEngine& eng, ManualDeviceSink& sink, std::size_t period) {
  uint64_t played = 0;
  for (;;) {
    const bool idle = eng.wait_idle(0);
    if (sink.queued() >= period || (idle && sink.queued() > 0)) {
      sink.render(period);
      played += period;
    } else if (idle) {
      return played;
    } else {
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
  }
}

bool any_sound(const std::vector<float>& v, std::size_t from = 0) {
  for (std::size_t i = from; i < v.size(); ++i)
    if (v[i] != 0.0f) return true;
  return false;
}

// Barge-in: stop(); the output thread flushes on its own (even while the vocoder is stuck), after which only
// the fade-out may sound and the next 20 periods are silent.
void stop_and_expect_silence(StreamEngine& eng, ManualDeviceSink& sink, std::size_t period) {
  eng.stop();
  while (eng.stats().flushes == 0) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  EXPECT_FALSE(any_sound(sink.render(period), kFlushFadeFrames)) << "only the fade-out may sound after the flush";
  for (int i = 0; i < 20; ++i) ASSERT_FALSE(any_sound(sink.render(period))) << "period " << i << " after the flush";
}

// A hook the vocoder worker calls before each chunk; blocks while the test holds it.
class Gate {
 public:
  void hold() {
    std::lock_guard<std::mutex> lock(m_);
    open_ = false;
  }
  void release() {
    {
      std::lock_guard<std::mutex> lock(m_);
      open_ = true;
    }
    cv_.notify_all();
  }
  void pass() {
    std::unique_lock<std::mutex> lock(m_);
    ++waiting_;
    cv_.notify_all();
    cv_.wait(lock, [&] { return open_; });
    --waiting_;
  }
  // Blocks the test until the vocoder is stuck at the gate.
  void wait_for_waiter() {
    std::unique_lock<std::mutex> lock(m_);
    cv_.wait(lock, [&] { return waiting_ > 0; });
  }

 private:
  std::mutex m_;
  std::condition_variable cv_;
  bool open_ = true;
  int waiting_ = 0;
};

struct Engine {
  std::shared_ptr<const Synthesizer> synth;
  std::shared_ptr<const Frontend> frontend;
  VoicePack voice;
  std::string error;
};

const Engine& engine() {
  static const Engine e = [] {
    Engine r;
    auto model = test::real_model(&r.error);
    if (!model) return r;
    try {
      const std::string assets = find_assets_dir();
      FrontendOptions fo;
      fo.assets_dir = assets;
      fo.first_segment_max_words = 4;
      r.frontend = std::make_shared<const Frontend>(fo);
      r.voice = VoicePack::resolve("af_heart", assets);
      r.synth = std::make_shared<const Synthesizer>(model);
    } catch (const std::exception& ex) {
      r.error = ex.what();
      r.synth.reset();
    }
    return r;
  }();
  return e;
}

const char* kText = "The lamp flickered twice. Then it went dark.";

std::vector<float> offline_audio(const Engine& e, const std::string& text, uint64_t seed, size_t* segments = nullptr) {
  const Vocab vocab = Vocab::from_config(e.synth->model().config(), e.synth->model().path());
  std::vector<float> all;
  size_t n = 0;
  for (const Segment& seg : e.frontend->segment(text)) {
    const auto ids = tokenize(seg.phonemes, vocab);
    if (ids.empty()) continue;
    SeededNoise noise(seed);
    size_t cps = 0;
    for (unsigned char c : seg.phonemes) cps += (c & 0xC0) != 0x80;
    const SynthesisResult r = e.synth->synthesize(ids, e.voice, 1.0f, static_cast<int64_t>(cps), &noise);
    all.insert(all.end(), r.audio.begin(), r.audio.end());
    ++n;
  }
  if (segments) *segments = n;
  return all;
}

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

TEST(StreamEngine, StreamModeDeliversEverySampleInChunks) {
  const Engine& e = engine();
  ASSERT_TRUE(e.synth) << e.error;
  Watchdog dog(120);
  const std::vector<float> exact = offline_audio(e, kText, 7);
  RecordingSink sink;
  StreamOptions so;
  so.first_chunk_frames = 2;
  so.max_chunk_frames = 8;
  StreamEngine eng(e.synth, e.frontend, e.voice, sink, EngineVoice{1.0f, false, 7, false}, SynthesisMode::stream, so);
  std::vector<UtteranceReport> reports;
  eng.on_report([&](const UtteranceReport& r) { reports.push_back(r); });
  eng.say(kText);
  ASSERT_TRUE(eng.wait_idle(100 * kTimeScale));
  EXPECT_EQ(sink.audio().size(), exact.size());
  EXPECT_GT(eng.stats().chunks, 4u);
  ASSERT_EQ(reports.size(), 1u);
  EXPECT_TRUE(reports[0].error.empty()) << reports[0].error;
}

// Slice mode (whole-sentence segments): the same segments, durations and sample count as exact mode; the
// generator really runs in several slices; one slice covering the segment is exact mode bit for bit.
std::shared_ptr<const Frontend> whole_sentence_frontend() {
  static const std::shared_ptr<const Frontend> f = [] {
    FrontendOptions fo;
    fo.assets_dir = find_assets_dir();
    fo.first_segment_max_words = 0;
    return std::make_shared<const Frontend>(fo);
  }();
  return f;
}

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

TEST(StreamEngine, SliceModeKeepsEverySentencesTimingAndSlicesTheGenerator) {
  const Engine& e = engine();
  ASSERT_TRUE(e.synth) << e.error;
  Watchdog dog(240);
  std::vector<StreamEvent> exact_events, slice_events;
  StreamEngineStats stats;
  const std::vector<float> exact = run_to_recording(e, SynthesisMode::exact, {}, kSliceText, nullptr, &exact_events);
  const std::vector<float> sliced = run_to_recording(e, SynthesisMode::slice, {}, kSliceText, &stats, &slice_events);
  ASSERT_EQ(sliced.size(), exact.size()) << "durations must equal exact mode's";
  EXPECT_GE(stats.slices, 2u) << "a 5 s segment should start with a short first slice";
  // Word and segment events at the same times as in exact mode.
  ASSERT_EQ(slice_events.size(), exact_events.size());
  for (size_t i = 0; i < exact_events.size(); ++i) {
    EXPECT_EQ(slice_events[i].kind, exact_events[i].kind);
    EXPECT_EQ(slice_events[i].time_s, exact_events[i].time_s);
    EXPECT_EQ(slice_events[i].text_begin, exact_events[i].text_begin);
  }
  // Nothing audible where exact mode is silent: the leading silence (before the first word) stays silent.
  size_t lead = 0;
  while (lead < exact.size() && std::fabs(exact[lead]) < 1e-3f) ++lead;
  float leak = 0;
  for (size_t i = 0; i < lead; ++i) leak = std::max(leak, std::fabs(sliced[i]));
  EXPECT_LT(leak, 3e-3f) << "sound before speech where exact mode is silent (" << lead << " silent samples)";
}

TEST(StreamEngine, SliceModeWithOneSliceIsExactMode) {
  const Engine& e = engine();
  ASSERT_TRUE(e.synth) << e.error;
  Watchdog dog(240);
  StreamOptions so;
  so.slice_schedule.first_slice_seconds = 1000;  // every segment is "short": one slice
  StreamEngineStats stats;
  const std::vector<float> exact = run_to_recording(e, SynthesisMode::exact, {}, kText);
  const std::vector<float> sliced = run_to_recording(e, SynthesisMode::slice, so, kText, &stats);
  ASSERT_EQ(sliced.size(), exact.size());
  for (size_t i = 0; i < exact.size(); ++i) ASSERT_EQ(sliced[i], exact[i]) << "sample " << i;
}

TEST(StreamEngine, SliceModeBargeInWhileStuckBetweenSlices) {
  const Engine& e = engine();
  ASSERT_TRUE(e.synth) << e.error;
  Watchdog dog(240);
  ManualDeviceSink sink(5.0);  // holds the whole first slice
  Gate gate;
  StreamOptions so;
  so.slice_schedule.first_slice_seconds = 0.3;
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

TEST(StreamEngine, BargeInSilencesTheDeviceWhileTheVocoderIsStillComputing) {
  const Engine& e = engine();
  ASSERT_TRUE(e.synth) << e.error;
  Watchdog dog(120);
  ManualDeviceSink sink(0.5);
  Gate gate;
  StreamOptions so;
  so.first_chunk_frames = 4;
  so.max_chunk_frames = 4;
  int chunks = 0;
  so.before_chunk = [&] {
    if (++chunks == 4) gate.pass();  // the vocoder gets stuck in its 4th chunk
  };
  gate.hold();
  StreamEngine eng(e.synth, e.frontend, e.voice, sink, EngineVoice{1.0f, false, 0, false}, SynthesisMode::stream, so);
  std::vector<UtteranceReport> reports;
  std::mutex rm;
  eng.on_report([&](const UtteranceReport& r) {
    std::lock_guard<std::mutex> lock(rm);
    reports.push_back(r);
  });
  eng.say("Somewhere far beyond the hills, a very long sentence keeps going and going without any end in sight.");
  gate.wait_for_waiter();  // three chunks of audio are queued, the vocoder is stuck
  // Play until sound comes out.
  constexpr std::size_t kPeriod = 256;
  bool heard = false;
  for (int i = 0; i < 200 && !heard; ++i) heard = any_sound(sink.render(kPeriod));
  ASSERT_TRUE(heard);
  ASSERT_GT(sink.queued(), kPeriod) << "stale audio must still be queued for the test to mean anything";

  stop_and_expect_silence(eng, sink, kPeriod);

  gate.release();
  ASSERT_TRUE(eng.wait_idle(60 * kTimeScale));
  {
    std::lock_guard<std::mutex> lock(rm);
    ASSERT_EQ(reports.size(), 1u);
    EXPECT_TRUE(reports[0].interrupted);
  }

  // The next utterance plays normally and whole: the device plays exactly its samples.
  chunks = 100;
  const std::vector<float> want = offline_audio(e, "Yes?", 0);
  const uint64_t played_before = sink.stats().frames_played;
  eng.say("Yes?");
  play_until_idle(eng, sink, kPeriod);
  EXPECT_EQ(sink.stats().frames_played - played_before, want.size());
  {
    std::lock_guard<std::mutex> lock(rm);
    ASSERT_EQ(reports.size(), 2u);
    EXPECT_FALSE(reports[1].interrupted);
  }
}

TEST(StreamEngine, UnderrunPlaysSilenceCountsAndLosesNothing) {
  const Engine& e = engine();
  ASSERT_TRUE(e.synth) << e.error;
  Watchdog dog(120);
  ManualDeviceSink sink(0.5);
  Gate gate;
  StreamOptions so;
  so.first_chunk_frames = 4;
  so.max_chunk_frames = 4;
  std::atomic<int> chunks{0};
  so.before_chunk = [&] {
    if (++chunks == 3) gate.pass();  // the vocoder falls behind after two chunks
  };
  gate.hold();
  StreamEngine eng(e.synth, e.frontend, e.voice, sink, EngineVoice{1.0f, false, 0, false}, SynthesisMode::stream, so);
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

// Exact mode's pre-roll (engine/preroll.h). The device is the test's; the vocoder is "slow" because the
// test holds it before a segment, and the speed estimate starts at 10 s per second of audio (measuring the
// real first segment can at most halve it), so the rule always asks for more than a first segment: the
// outcome depends on the rule, not on this machine's speed. These tests use the first rule (decided when a
// segment's vocoding starts and when it is queued): following the progress measures this machine's real
// pace on the wall clock; the virtual-time tests below prove that rule.
StreamOptions slow_vocoder_preroll(Gate& gate, std::atomic<int>& chunks, int stuck_at) {
  StreamOptions so;
  so.preroll.nominal_rtf = 10;
  so.preroll.follow_progress = false;
  so.before_chunk = [&gate, &chunks, stuck_at] {
    if (++chunks == stuck_at) gate.pass();
  };
  return so;
}

// The audio the device played, from its first period on.
struct Played {
  std::vector<float> audio;
  void render(ManualDeviceSink& sink, std::size_t period) {
    const std::vector<float> p = sink.render(period);
    audio.insert(audio.end(), p.begin(), p.end());
  }
};

// A cut first segment (4 words) whose playout is shorter than the second segment's vocoding: without the
// rule the device runs dry after it; with the rule nothing is handed to the device while the second
// segment is not vocoded, then the whole utterance plays without an underrun, sample for sample the
// offline synthesis.
TEST(StreamEngine, ExactModePrerollHoldsACutFirstSegmentUntilTheNextIsVocoded) {
  const Engine& e = engine();
  ASSERT_TRUE(e.synth) << e.error;
  Watchdog dog(240);
  size_t segments = 0;
  const std::vector<float> want = offline_audio(e, kText, 7, &segments);
  ASSERT_EQ(segments, 2u) << "the 4-word first segment should split this text";
  constexpr std::size_t kPeriod = 256;
  for (const bool rule : {false, true}) {
    SCOPED_TRACE(rule ? "pre-roll rule" : "no pre-roll rule");
    ManualDeviceSink sink(5.0);
    Gate gate;
    std::atomic<int> chunks{0};
    StreamOptions so = slow_vocoder_preroll(gate, chunks, 2);  // stuck before the second segment
    so.preroll.enabled = rule;
    gate.hold();
    StreamEngine eng(e.synth, e.frontend, e.voice, sink, EngineVoice{1.0f, false, 7, false}, SynthesisMode::exact, so);
    std::vector<UtteranceReport> reports;
    std::mutex rm;
    eng.on_report([&](const UtteranceReport& r) {
      std::lock_guard<std::mutex> lock(rm);
      reports.push_back(r);
    });
    eng.say(kText);
    gate.wait_for_waiter();  // the first segment is vocoded and queued, the second is not
    Played played;
    if (!rule) {
      while (sink.stats().underruns == 0) played.render(sink, kPeriod);  // the first segment plays out, then silence
      EXPECT_EQ(eng.stats().preroll_holds, 0u);
    } else {
      EXPECT_EQ(eng.stats().preroll_holds, 1u) << "the first segment's audio is ready and must wait";
      for (int i = 0; i < 400; ++i) played.render(sink, kPeriod);  // 4.3 s: longer than the first segment
      EXPECT_EQ(eng.stats().samples_to_sink, 0u) << "nothing may reach the device before the second segment is vocoded";
      EXPECT_FALSE(any_sound(played.audio));
      EXPECT_EQ(sink.stats().underruns, 0u);
      played.audio.clear();
    }
    gate.release();
    for (;;) {  // play until idle (as play_until_idle, keeping the audio)
      const bool idle = eng.wait_idle(0);
      if (sink.queued() >= kPeriod || (idle && sink.queued() > 0)) {
        played.render(sink, kPeriod);
      } else if (idle) {
        break;
      } else {
        std::this_thread::sleep_for(std::chrono::milliseconds(1));
      }
    }
    const SinkStats st = sink.stats();
    EXPECT_EQ(st.frames_played, want.size());
    if (!rule) {
      EXPECT_GE(st.underruns, 1u) << "without the rule the cut first segment runs dry";
      continue;
    }
    EXPECT_EQ(st.underruns, 0u) << "with the rule the utterance plays without a gap";
    ASSERT_GE(played.audio.size(), want.size());
    EXPECT_TRUE(std::equal(want.begin(), want.end(), played.audio.begin())) << "the pre-roll changes timing only";
    std::lock_guard<std::mutex> lock(rm);
    ASSERT_EQ(reports.size(), 1u);
    EXPECT_FALSE(reports[0].interrupted);
    EXPECT_GT(reports[0].preroll_ms, 0.0);
    EXPECT_GE(reports[0].first_audio_ms, reports[0].preroll_ms);
  }
}

// An utterance of one segment has nothing after it to wait for: it plays once vocoded, even while the vocoder
// is stuck on the next utterance (whose cut first segment is then held).
TEST(StreamEngine, ExactModePrerollDoesNotHoldASingleSegmentBeyondItsVocoding) {
  const Engine& e = engine();
  ASSERT_TRUE(e.synth) << e.error;
  Watchdog dog(240);
  const char* single = "It went dark.";
  size_t segments = 0;
  const std::vector<float> first = offline_audio(e, single, 7, &segments);
  ASSERT_EQ(segments, 1u);
  const std::vector<float> second = offline_audio(e, kText, 7);
  ManualDeviceSink sink(5.0);
  Gate gate;
  std::atomic<int> chunks{0};
  gate.hold();
  StreamEngine eng(e.synth, e.frontend, e.voice, sink, EngineVoice{1.0f, false, 7, false}, SynthesisMode::exact,
                   slow_vocoder_preroll(gate, chunks, 3));  // stuck before the second utterance's second segment
  std::vector<UtteranceReport> reports;
  std::mutex rm;
  eng.on_report([&](const UtteranceReport& r) {
    std::lock_guard<std::mutex> lock(rm);
    reports.push_back(r);
  });
  eng.say(single);
  eng.say(kText);
  gate.wait_for_waiter();
  // The single segment reaches the device in full although the vocoder is stuck (a hang here is the failure
  // the watchdog reports).
  while (eng.stats().samples_to_sink < first.size()) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  constexpr std::size_t kPeriod = 256;
  Played played;
  while (sink.stats().frames_played < first.size()) played.render(sink, kPeriod);
  EXPECT_EQ(sink.stats().underruns, 0u);
  EXPECT_TRUE(std::equal(first.begin(), first.end(), played.audio.begin()));
  EXPECT_EQ(eng.stats().samples_to_sink, first.size()) << "the next utterance's cut first segment is held";
  EXPECT_EQ(eng.stats().preroll_holds, 1u) << "only the second utterance waits";
  gate.release();
  play_until_idle(eng, sink, kPeriod);
  EXPECT_EQ(sink.stats().frames_played, first.size() + second.size());
  std::lock_guard<std::mutex> lock(rm);
  ASSERT_EQ(reports.size(), 2u);
  EXPECT_EQ(reports[0].preroll_ms, 0.0);
  EXPECT_GT(reports[1].preroll_ms, 0.0);
}

// Barge-in while an utterance is held: nothing of it is ever heard, it is reported interrupted, and the next
// utterance plays whole.
TEST(StreamEngine, ExactModeBargeInDuringThePrerollDropsTheUtterance) {
  const Engine& e = engine();
  ASSERT_TRUE(e.synth) << e.error;
  Watchdog dog(240);
  ManualDeviceSink sink(5.0);
  Gate gate;
  std::atomic<int> chunks{0};
  gate.hold();
  StreamEngine eng(e.synth, e.frontend, e.voice, sink, EngineVoice{1.0f, false, 0, false}, SynthesisMode::exact,
                   slow_vocoder_preroll(gate, chunks, 2));
  std::vector<UtteranceReport> reports;
  std::mutex rm;
  eng.on_report([&](const UtteranceReport& r) {
    std::lock_guard<std::mutex> lock(rm);
    reports.push_back(r);
  });
  eng.say(kText);
  gate.wait_for_waiter();
  ASSERT_EQ(eng.stats().preroll_holds, 1u);
  constexpr std::size_t kPeriod = 256;
  for (int i = 0; i < 20; ++i) ASSERT_FALSE(any_sound(sink.render(kPeriod)));
  stop_and_expect_silence(eng, sink, kPeriod);
  gate.release();
  ASSERT_TRUE(eng.wait_idle(60 * kTimeScale));
  EXPECT_EQ(eng.stats().samples_to_sink, 0u) << "the held utterance never reached the device";
  {
    std::lock_guard<std::mutex> lock(rm);
    ASSERT_EQ(reports.size(), 1u);
    EXPECT_TRUE(reports[0].interrupted);
  }
  chunks = 100;
  const uint64_t played_before = sink.stats().frames_played;
  eng.say("Yes?");
  play_until_idle(eng, sink, kPeriod);
  EXPECT_EQ(sink.stats().frames_played - played_before, offline_audio(e, "Yes?", 0).size());
  EXPECT_EQ(sink.stats().underruns, 0u);
  std::lock_guard<std::mutex> lock(rm);
  ASSERT_EQ(reports.size(), 2u);
  EXPECT_FALSE(reports[1].interrupted);
}

// Synthesizer::vocode's progress: after the decoder half, after each generator piece and at the end, rising
// fractions weighted by the layers' multiply-adds; listening changes no sample.
TEST(StreamEngine, VocodeReportsItsProgressByWorkWithoutChangingTheAudio) {
  const Engine& e = engine();
  ASSERT_TRUE(e.synth) << e.error;
  const Vocab vocab = Vocab::from_config(e.synth->model().config(), e.synth->model().path());
  const Segment seg = e.frontend->segment("It went dark.").front();
  std::vector<int64_t> ids = tokenize(seg.phonemes, vocab);
  ids.insert(ids.begin(), 0);
  ids.push_back(0);
  const float* style = e.voice.style_for(static_cast<int>(utf8::count_code_points(seg.phonemes)));
  AlignedFeatures feats;
  e.synth->acoustic().forward(ids, style, 1.0f, feats);
  Tensor quiet, heard;
  {
    SeededNoise noise(3);
    e.synth->vocode(feats.asr, feats.f0, feats.n, style, noise, quiet);
  }
  std::vector<double> fractions;
  const ProgressCallback record = [&](double f) { fractions.push_back(f); };
  {
    SeededNoise noise(3);
    e.synth->vocode(feats.asr, feats.f0, feats.n, style, noise, heard, nullptr, &record);
  }
  ASSERT_EQ(heard.numel(), quiet.numel());
  EXPECT_TRUE(std::equal(quiet.data(), quiet.data() + quiet.numel(), heard.data()));
  const Generator& g = e.synth->decoder().generator();
  size_t pieces = 0;
  for (size_t i = 0; i < g.num_stages(); ++i) pieces += 1 + g.config().resblock_kernel_sizes.size();
  ASSERT_EQ(fractions.size(), 1 + pieces + 1) << "decoder half, each stage's source branch and resblocks, the end";
  for (size_t i = 1; i < fractions.size(); ++i) EXPECT_GT(fractions[i], fractions[i - 1]) << i;
  EXPECT_EQ(fractions.back(), 1.0);
  // The decoder half is a small share of the work (1024-wide convs at 40 columns per second against the
  // generator's 256 and 128 channels at 400 and 2400 columns per second).
  const double decoder_share = e.synth->decoder().features_macs_per_frame() / e.synth->decoder().macs_per_frame();
  EXPECT_DOUBLE_EQ(fractions.front(), decoder_share);
  EXPECT_GT(decoder_share, 0.01);
  EXPECT_LT(decoder_share, 0.2);
}

// Exact mode's pre-roll following the vocoder's progress (PrerollOptions::follow_progress), in virtual
// time: the test's clock is the pre-roll's clock and the device's. It advances only while the vocoder
// "works": at each progress point of a segment's vocoding the vocoder thread plays the device, one period
// after the other, until the clock reaches the time that much of the segment takes at the simulated pace
// (seconds per audio second, per segment and per fraction of its work). Before each period it waits until
// the engine has handed over all it may (the output thread's own pace is not the test's subject). The outcome
// depends on the simulated paces only, not on this machine's speed.
class VirtualVocoderTime {
 public:
  static constexpr std::size_t kPeriod = 1024;  // 43 ms: fewer steps for the same virtual time
  static constexpr int64_t kPeriodNs = static_cast<int64_t>(kPeriod) * 1000000000 / kSampleRate;
  // pace(segment, fraction): seconds per audio second of the piece of that segment ending at that fraction.
  using Pace = std::function<double(int segment, double fraction)>;
  VirtualVocoderTime(ManualDeviceSink& sink, Pace pace) : sink_(sink), pace_(std::move(pace)) {}

  std::atomic<int64_t> clock{1000000000};
  StreamOptions options(bool follow_progress) {
    StreamOptions so;
    so.preroll.follow_progress = follow_progress;
    so.preroll_clock_ns = &clock;
    so.on_vocode_progress = [this](double audio_seconds, double fraction) { progress(audio_seconds, fraction); };
    return so;
  }
  void attach(StreamEngine& eng) { eng_ = &eng; }
  // The clock when the device first played a sample (-1: not yet), in seconds since the first vocoding began.
  double start_seconds() const { return start_ns_ < 0 ? -1 : static_cast<double>(start_ns_ - first_ns_) * 1e-9; }
  double seconds_now() const { return static_cast<double>(clock.load() - first_ns_) * 1e-9; }
  std::vector<float> played;

  // After the last vocoding: plays the rest as the device would (it never runs ahead of the engine here).
  void play_rest() {
    for (;;) {
      const bool idle = eng_->wait_idle(0);
      if (sink_.queued() >= kPeriod || (idle && sink_.queued() > 0)) {
        render();
      } else if (idle) {
        return;
      } else {
        std::this_thread::sleep_for(std::chrono::milliseconds(1));
      }
    }
  }

 private:
  void progress(double audio_seconds, double fraction) {
    if (first_ns_ < 0) first_ns_ = clock.load();
    if (fraction <= last_fraction_) {  // a new segment (its first progress point)
      ++segment_;
      segment_start_ns_ = clock.load();
      segment_time_ = 0;
      last_fraction_ = 0;
    }
    segment_time_ += (fraction - last_fraction_) * audio_seconds * pace_(segment_, fraction);
    last_fraction_ = fraction;
    const int64_t target = segment_start_ns_ + static_cast<int64_t>(segment_time_ * 1e9);
    while (clock.load() < target) {
      catch_up();
      render();
      clock.fetch_add(kPeriodNs);
    }
  }
  // Waits until the output thread has handed the device everything it may: all that is vocoded, or nothing
  // while a hold lasts (a hold whose release time has come is about to end).
  void catch_up() {
    for (;;) {
      const StreamEngineStats st = eng_->stats();
      if (st.preroll_holding ? clock.load() < st.preroll_release_at_ns : st.samples_to_sink == st.samples_vocoded) return;
      std::this_thread::sleep_for(std::chrono::microseconds(200));
    }
  }
  void render() {
    const std::vector<float> p = sink_.render(kPeriod);
    if (start_ns_ < 0 && any_sound(p)) start_ns_ = clock.load();
    played.insert(played.end(), p.begin(), p.end());
  }

  ManualDeviceSink& sink_;
  Pace pace_;
  StreamEngine* eng_ = nullptr;
  int segment_ = -1;
  double last_fraction_ = 2, segment_time_ = 0;
  int64_t segment_start_ns_ = 0, first_ns_ = -1, start_ns_ = -1;
};

struct VirtualRun {
  double start_s = -1, vocoded_s = -1;  // virtual seconds: first sound, end of the last vocoding
  uint64_t underruns = 0, holds = 0;
  std::vector<float> played;
};

VirtualRun run_virtual(const Engine& e, bool follow_progress, const VirtualVocoderTime::Pace& pace) {
  ManualDeviceSink sink(5.0);
  VirtualVocoderTime vt(sink, pace);
  StreamEngine eng(e.synth, e.frontend, e.voice, sink, EngineVoice{1.0f, false, 7, false}, SynthesisMode::exact,
                   vt.options(follow_progress));
  vt.attach(eng);
  eng.say(kText);
  while (!eng.wait_idle(0) && eng.stats().chunks < 2) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  VirtualRun r;
  r.vocoded_s = vt.seconds_now();
  vt.play_rest();
  r.start_s = vt.start_seconds();
  r.underruns = sink.stats().underruns;
  r.holds = eng.stats().preroll_holds;
  r.played = std::move(vt.played);
  return r;
}

// A short first segment at a slow pace (its fixed costs), the second at a fast one: the first rule takes the
// first segment's pace for the second and holds playback until that is vocoded; following the progress,
// playback starts while it is still being vocoded, and neither runs dry or changes a sample.
TEST(StreamEngine, ExactModePrerollFollowingProgressStartsEarlierWhenTheVocoderIsFast) {
  const Engine& e = engine();
  ASSERT_TRUE(e.synth) << e.error;
  Watchdog dog(240);
  size_t segments = 0;
  const std::vector<float> want = offline_audio(e, kText, 7, &segments);
  ASSERT_EQ(segments, 2u);
  const auto pace = [](int segment, double) { return segment == 0 ? 2.0 : 0.5; };
  const VirtualRun first_rule = run_virtual(e, false, pace);
  const VirtualRun progress = run_virtual(e, true, pace);
  for (const VirtualRun* r : {&first_rule, &progress}) {
    SCOPED_TRACE(r == &progress ? "following progress" : "first rule");
    EXPECT_EQ(r->holds, 1u);
    EXPECT_EQ(r->underruns, 0u);
    ASSERT_GE(r->played.size(), want.size());
    const auto sound = std::find_if(r->played.begin(), r->played.end(), [](float v) { return v != 0.0f; });
    const auto first = std::find_if(want.begin(), want.end(), [](float v) { return v != 0.0f; });
    ASSERT_GE(r->played.end() - sound, want.end() - first);
    EXPECT_TRUE(std::equal(first, want.end(), sound)) << "the pre-roll changes timing only";
  }
  EXPECT_GE(first_rule.start_s, first_rule.vocoded_s) << "the first rule waits for the whole second segment";
  EXPECT_LT(progress.start_s, progress.vocoded_s) << "following progress starts while it is vocoded";
  EXPECT_LT(progress.start_s, first_rule.start_s);
}

// The second segment's vocoding slows down fourfold after the decoder half (6 % of its work), before the hold
// would have ended at the pace it started with: the rule sees it at the next progress point and holds on,
// and the device never runs dry.
TEST(StreamEngine, ExactModePrerollFollowingProgressHoldsOnWhenTheVocoderSlowsDown) {
  const Engine& e = engine();
  ASSERT_TRUE(e.synth) << e.error;
  Watchdog dog(240);
  const std::vector<float> want = offline_audio(e, kText, 7);
  // The first segment's pace makes the rule hold when the second one's vocoding starts.
  const VirtualRun steady = run_virtual(e, true, [](int, double) { return 2.0; });
  const VirtualRun slowing = run_virtual(e, true, [](int segment, double f) { return segment == 0 || f <= 0.06 ? 2.0 : 8.0; });
  for (const VirtualRun* r : {&steady, &slowing}) {
    SCOPED_TRACE(r == &steady ? "steady" : "slowing down");
    EXPECT_EQ(r->holds, 1u);
    EXPECT_EQ(r->underruns, 0u) << "never dry";
    const auto sound = std::find_if(r->played.begin(), r->played.end(), [](float v) { return v != 0.0f; });
    const auto first = std::find_if(want.begin(), want.end(), [](float v) { return v != 0.0f; });
    ASSERT_GE(r->played.end() - sound, want.end() - first);
    EXPECT_TRUE(std::equal(first, want.end(), sound));
  }
  EXPECT_LT(steady.start_s, steady.vocoded_s) << "at the steady pace playback starts during the second vocoding";
  EXPECT_GT(slowing.start_s, steady.start_s) << "the slowdown holds it longer";
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
    // Wait until the acoustic worker is blocked on a full frame ring (a state, not a time).
    while (eng.stats().max_frames_queued < 128) std::this_thread::sleep_for(std::chrono::milliseconds(5));
    const uint64_t produced = eng.stats().frames_produced;
    for (int i = 0; i < 20; ++i) std::this_thread::sleep_for(std::chrono::milliseconds(10));
    const StreamEngineStats s = eng.stats();
    std::printf("  1 MB text, device not playing: %llu text bytes segmented, %llu frames produced, "
                "%llu queued at most, %llu samples in the audio ring at most\n",
                static_cast<unsigned long long>(s.text_bytes_segmented), static_cast<unsigned long long>(s.frames_produced),
                static_cast<unsigned long long>(s.max_frames_queued), static_cast<unsigned long long>(s.max_audio_queued));
    EXPECT_EQ(s.frames_produced, produced) << "the acoustic worker must be blocked, not running ahead";
    EXPECT_LE(s.text_bytes_segmented, 2u * 2048u) << "only the pieces in flight are segmented";
    EXPECT_LE(s.max_frames_queued, 128u);
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

TEST(StreamEngine, BadOptionsAreClearErrors) {
  const Engine& e = engine();
  ASSERT_TRUE(e.synth) << e.error;
  RecordingSink sink;
  StreamOptions so;
  so.policy = "prior";  // needs priors, none given
  EXPECT_THROW(StreamEngine(e.synth, e.frontend, e.voice, sink, EngineVoice{}, SynthesisMode::stream, so), Error);
  so = {};
  so.first_chunk_frames = 0;
  EXPECT_THROW(StreamEngine(e.synth, e.frontend, e.voice, sink, EngineVoice{}, SynthesisMode::stream, so), Error);
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
}

}  // namespace
