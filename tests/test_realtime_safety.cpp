// Proof that the device callbacks are real-time safe: with malloc/free/locks/waits/syscall wrappers
// interposed (rt_trap.cpp), drive the JACK process callback and the PortAudio stream callback over many
// periods, both by calling them directly and under running servers/streams, through every path (audio,
// underrun, flush with fade, end of utterance, xrun flags, real-time log records), and require zero calls.
#include <gtest/gtest.h>
#include <pa_jack.h>

#include <cstdio>
#include <cstring>
#include <mutex>
#include <thread>

#include "audio_test_support.h"
#include "realtime/jack_sink.h"
#include "realtime/portaudio_sink.h"
#include "realtime/rt_section.h"
#include "rt_trap.h"

namespace kokoro {
namespace {

namespace rt_trap = test::rt_trap;

test::AlsaNullConfig& alsa() {
  static test::AlsaNullConfig config;
  return config;
}
[[maybe_unused]] const bool kAlsaReady = (alsa(), true);

constexpr int kPeriods = 20000;

// The producer side of a realistic session, interleaved with `run_periods(n)` that lets the device take n
// periods: speech, a gap mid-utterance (underrun), end of utterance, more speech, a barge-in flush while
// audio is queued, and the next utterance.
template <typename RunPeriods>
void speak_session(AudioSink& sink, RunPeriods run_periods) {
  const auto speech = test::sine_wave(440, 24000, 2400);  // 100 ms
  sink.write(speech);
  run_periods(4);
  run_periods(40);  // the 100 ms run out mid-utterance: underrun
  sink.write(speech);
  sink.end_utterance();
  run_periods(40);  // end of utterance: silence, not an underrun
  sink.write(speech);
  sink.write(speech);
  run_periods(2);
  sink.interrupt();
  sink.flush();  // queued audio dropped with a fade
  run_periods(2);
  sink.write(speech);
  sink.end_utterance();
  run_periods(40);
}

TEST(RealtimeTrap, CountsCallsInsideARealtimeSectionOnly) {
  rt_trap::reset();
  void* outside = std::malloc(64);
  std::free(outside);
  std::mutex m;
  { std::lock_guard<std::mutex> lock(m); }
  EXPECT_EQ(rt_trap::violations(), 0u) << rt_trap::report();
  {
    rt::RealtimeSection section;
    void* p = std::malloc(64);
    asm volatile("" : : "r"(p) : "memory");  // keep the call
    std::free(p);
    auto* q = new int[4];
    asm volatile("" : : "r"(q) : "memory");  // the compiler may otherwise elide the new/delete pair
    delete[] q;
    { std::lock_guard<std::mutex> lock(m); }
    std::this_thread::sleep_for(std::chrono::microseconds(1));
    [[maybe_unused]] const ssize_t ignored = ::write(2, "", 0);
  }
  const std::string report = rt_trap::report();
  EXPECT_NE(report.find("malloc x2"), std::string::npos) << report;  // malloc and operator new[]
  EXPECT_NE(report.find("free x2"), std::string::npos) << report;
  EXPECT_NE(report.find("pthread_mutex_lock x1"), std::string::npos) << report;
  EXPECT_NE(report.find("nanosleep"), std::string::npos) << report;
  EXPECT_NE(report.find("write x1"), std::string::npos) << report;
  rt_trap::reset();
}

TEST(RealtimeSafety, JackProcessCallbackCalledDirectly) {
  test::JackTestServer server(48000, 256);
  SinkOptions o;
  o.kind = SinkKind::jack;
  o.stereo = true;
  JackSink sink(o);  // not activated: this thread is the only caller of the process callback
  int periods = 0;
  rt_trap::reset();
  auto run = [&](int n) {
    for (int i = 0; i < n; ++i, ++periods) ASSERT_EQ(JackSink::process_callback(256, &sink), 0);
  };
  while (periods < kPeriods) speak_session(sink, run);
  EXPECT_EQ(rt_trap::violations(), 0u) << rt_trap::report();
  const SinkStats s = sink.stats();
  EXPECT_GE(s.callbacks, static_cast<uint64_t>(kPeriods));
  EXPECT_GT(s.frames_played, 0u);
  EXPECT_GT(s.underruns, 0u);  // the underrun path ran
  EXPECT_GT(s.flushes, 0u);    // the flush path ran
  std::printf("[measured] JACK process called directly: %llu periods, worst %.1f us, violations %llu\n",
              static_cast<unsigned long long>(s.callbacks), s.worst_callback_ns / 1000.0,
              static_cast<unsigned long long>(rt_trap::violations()));
}

TEST(RealtimeSafety, PortAudioCallbackCalledDirectly) {
  SinkOptions o;
  o.kind = SinkKind::portaudio;
  o.device_rate = 48000;
  PortAudioSink sink(o);  // stream opened on ALSA null but not started
  std::vector<float> out(256);
  PaStreamCallbackTimeInfo time{};
  int periods = 0;
  rt_trap::reset();
  auto run = [&](int n) {
    for (int i = 0; i < n; ++i, ++periods) {
      const PaStreamCallbackFlags flags = periods % 1000 == 0 ? paOutputUnderflow : 0;  // the xrun path too
      ASSERT_EQ(PortAudioSink::stream_callback(nullptr, out.data(), out.size(), &time, flags, &sink), paContinue);
    }
  };
  while (periods < kPeriods) speak_session(sink, run);
  EXPECT_EQ(rt_trap::violations(), 0u) << rt_trap::report();
  const SinkStats s = sink.stats();
  EXPECT_GE(s.callbacks, static_cast<uint64_t>(kPeriods));
  EXPECT_GT(s.underruns, 0u);
  EXPECT_GT(s.flushes, 0u);
  EXPECT_GT(s.xruns, 0u);
}

// Under a running server the callback runs on JACK's real-time thread; the producer runs here.
TEST(RealtimeSafety, JackSinkUnderARunningServer) {
  test::JackTestServer server(48000, 256);
  SinkOptions o;
  o.kind = SinkKind::jack;
  o.stereo = true;
  JackSink sink(o);
  rt_trap::reset();
  sink.start();
  auto wait_periods = [&](int n) { std::this_thread::sleep_for(std::chrono::microseconds(n * 5333)); };
  const auto t0 = std::chrono::steady_clock::now();
  while (std::chrono::steady_clock::now() - t0 < std::chrono::seconds(6)) speak_session(sink, wait_periods);
  sink.drain(5.0);
  const SinkStats s = sink.stats();
  EXPECT_EQ(rt_trap::violations(), 0u) << rt_trap::report();
  EXPECT_GE(s.callbacks, 1000u);
  EXPECT_GT(s.flushes, 0u);
  std::printf("[measured] JACK sink under jackd (48 kHz/256): %llu periods, worst %.1f us, xruns %llu, violations %llu\n",
              static_cast<unsigned long long>(s.callbacks), s.worst_callback_ns / 1000.0,
              static_cast<unsigned long long>(s.xruns), static_cast<unsigned long long>(rt_trap::violations()));
}

// A running PortAudio stream on ALSA's null PCM (unpaced: hundreds of thousands of callbacks).
TEST(RealtimeSafety, PortAudioStreamOnAlsa) {
  SinkOptions o;
  o.kind = SinkKind::portaudio;
  o.period_frames = 256;
  PortAudioSink sink(o);
  rt_trap::reset();
  sink.start();
  auto wait_periods = [&](int n) { std::this_thread::sleep_for(std::chrono::microseconds(n * 500)); };
  for (int i = 0; i < 20; ++i) speak_session(sink, wait_periods);
  sink.drain(5.0);
  sink.stop();
  const SinkStats s = sink.stats();
  EXPECT_EQ(rt_trap::violations(), 0u) << rt_trap::report();
  EXPECT_GE(s.callbacks, static_cast<uint64_t>(kPeriods));
  EXPECT_GT(s.flushes, 0u);
  std::printf("[measured] PortAudio stream on ALSA null: %llu periods, worst %.1f us, violations %llu\n",
              static_cast<unsigned long long>(s.callbacks), s.worst_callback_ns / 1000.0,
              static_cast<unsigned long long>(rt_trap::violations()));
}

// PortAudio's JACK host API: our PortAudio callback inside JACK's real-time cycle.
TEST(RealtimeSafety, PortAudioStreamThroughJack) {
  test::JackTestServer server(48000, 256);
  ASSERT_EQ(PaJack_SetClientName("kokoro-pa"), paNoError);
  SinkOptions o;
  o.kind = SinkKind::portaudio;
  o.device = "system";
  PortAudioSink sink(o);
  rt_trap::reset();
  sink.start();
  auto wait_periods = [&](int n) { std::this_thread::sleep_for(std::chrono::microseconds(n * 5333)); };
  const auto t0 = std::chrono::steady_clock::now();
  while (std::chrono::steady_clock::now() - t0 < std::chrono::seconds(6)) speak_session(sink, wait_periods);
  sink.drain(5.0);
  sink.stop();
  const SinkStats s = sink.stats();
  EXPECT_EQ(rt_trap::violations(), 0u) << rt_trap::report();
  EXPECT_GE(s.callbacks, 1000u);
  std::printf("[measured] PortAudio via JACK (48 kHz/256): %llu periods, worst %.1f us, xruns %llu, violations %llu\n",
              static_cast<unsigned long long>(s.callbacks), s.worst_callback_ns / 1000.0,
              static_cast<unsigned long long>(s.xruns), static_cast<unsigned long long>(rt_trap::violations()));
}

}  // namespace
}  // namespace kokoro
