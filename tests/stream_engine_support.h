// What the streaming engine's tests share (test_stream_engine.cpp, test_stream_engine_preroll.cpp): a
// watchdog that turns a hang into a loud failure, sinks the test drives (a recording and a device whose
// clock is the test), a gate that holds the vocoder, the real model behind one engine, and the offline
// synthesis the streamed audio must equal.
#pragma once
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "core/assets.h"
#include "engine/stream_engine.h"
#include "engine/synthesizer.h"
#include "frontend/vocab.h"
#include "realtime/playback_queue.h"
#include "tests/golden_support.h"
#include "tests/test_util.h"

namespace kokoro::stream_test {

// Sanitizer builds run the model 10-20x slower (and share the machine): give them more time before a hang
// is declared.
#if defined(__SANITIZE_THREAD__) || defined(__SANITIZE_ADDRESS__)
constexpr double kTimeScale = 15;
#else
constexpr double kTimeScale = 1;
#endif

// Aborts the process if not disarmed in time: a hang must fail loudly, not look like a slow pass.
struct Watchdog : test::Watchdog {
  explicit Watchdog(double base_seconds) : test::Watchdog(base_seconds * kTimeScale, "stream engine test") {}
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

// The utterance reports an engine gives on its own thread, for the test thread to read.
class ReportLog {
 public:
  void attach(StreamEngine& eng) {
    eng.on_report([this](const UtteranceReport& r) {
      std::lock_guard<std::mutex> lock(m_);
      reports_.push_back(r);
    });
  }
  std::vector<UtteranceReport> reports() const {
    std::lock_guard<std::mutex> lock(m_);
    return reports_;
  }

 private:
  mutable std::mutex m_;
  std::vector<UtteranceReport> reports_;
};

// A device whose clock is the test: render(n) is one device period.
class ManualDeviceSink final : public AudioSink {
 public:
  explicit ManualDeviceSink(double buffer_seconds) : q_("test device", kSampleRate, kSampleRate, options(buffer_seconds)) {}
  using AudioSink::write;
  std::size_t write(const float* s, std::size_t n) override { return q_.write(s, n); }
  void end_utterance() override { q_.end_utterance(); }
  void mark_pause() override {
    q_.mark_pause();
    pauses_.fetch_add(1);
  }
  uint64_t pauses() const { return pauses_.load(); }
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
  std::atomic<uint64_t> pauses_{0};
};

// Plays (renders) whatever the engine hands over until it is idle and the device queue is empty. Renders
// only when a period's worth is queued (or the end is reached), so it never races ahead of the engine.
inline uint64_t play_until_idle(StreamEngine& eng, ManualDeviceSink& sink, std::size_t period) {
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

inline bool any_sound(const std::vector<float>& v, std::size_t from = 0) {
  for (std::size_t i = from; i < v.size(); ++i)
    if (v[i] != 0.0f) return true;
  return false;
}

// Barge-in: stop(); the output thread flushes on its own (even while the vocoder is stuck), after which only
// the fade-out may sound and the next 20 periods are silent.
inline void stop_and_expect_silence(StreamEngine& eng, ManualDeviceSink& sink, std::size_t period) {
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

inline const Engine& engine() {
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

// A frontend that never cuts a first segment at a comma (first_segment_max_words 0): every sentence is whole.
inline std::shared_ptr<const Frontend> whole_sentence_frontend() {
  static const std::shared_ptr<const Frontend> f = [] {
    FrontendOptions fo;
    fo.assets_dir = find_assets_dir();
    fo.first_segment_max_words = 0;
    return std::make_shared<const Frontend>(fo);
  }();
  return f;
}

inline constexpr const char* kText = "The lamp flickered twice. Then it went dark.";

// The offline synthesis of `text`, segment by segment, as the engine's frontend (or `frontend`) splits it.
inline std::vector<float> offline_audio(const Engine& e, const std::string& text, uint64_t seed, size_t* segments = nullptr,
                                        const Frontend* frontend = nullptr) {
  const Vocab vocab = Vocab::from_config(e.synth->model().config(), e.synth->model().path());
  std::vector<float> all;
  size_t n = 0;
  for (const Segment& seg : (frontend ? frontend : e.frontend.get())->segment(text)) {
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

// After a barge-in that interrupted the only utterance so far (the vocoder let go again): it is reported
// interrupted, and the next one ("Yes?") plays normally and whole, the device playing exactly its samples.
inline void expect_interrupted_then_next_plays_whole(const Engine& e, StreamEngine& eng, ManualDeviceSink& sink,
                                                     const ReportLog& log, std::size_t period) {
  {
    const std::vector<UtteranceReport> reports = log.reports();
    ASSERT_EQ(reports.size(), 1u);
    EXPECT_TRUE(reports[0].interrupted);
  }
  const std::vector<float> want = offline_audio(e, "Yes?", 0);
  const SinkStats before = sink.stats();
  eng.say("Yes?");
  play_until_idle(eng, sink, period);
  EXPECT_EQ(sink.stats().frames_played - before.frames_played, want.size());
  EXPECT_EQ(sink.stats().underruns, before.underruns);
  const std::vector<UtteranceReport> reports = log.reports();
  ASSERT_EQ(reports.size(), 2u);
  EXPECT_FALSE(reports[1].interrupted);
}

}  // namespace kokoro::stream_test
