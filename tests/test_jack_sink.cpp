// The JACK sink as a user runs it: a real jackd (dummy driver, 48 kHz, 256-frame periods) started per
// test, our sink connected to a capture client of the test, a 440 Hz sine written at 24 kHz. Checks that
// every sample arrives (bit-exact against the same resampling done offline), underruns stay 0 and no
// client is late through a fault of its own (test::expect_no_client_xruns: every xrun is one jackd logged,
// and a client it blames must have timed callbacks far shorter than the period: the machine stalled),
// buffer-size changes are followed, barge-in silences within one period, and a killed server gives a
// clean error instead of a hang. Also PortAudio through its JACK host API against the same kind of server.
#include <gtest/gtest.h>
#include <pa_jack.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <thread>

#include "audio_test_support.h"
#include "core/error.h"
#include "realtime/jack_sink.h"
#include "realtime/portaudio_sink.h"

namespace kokoro {
namespace {

using test::JackCapture;
using test::JackTestServer;
using test::Watchdog;
using test::expect_no_client_xruns;

constexpr int kRate = 48000;
constexpr int kPeriod = 256;

SinkOptions jack_options(bool stereo = false) {
  SinkOptions o;
  o.kind = SinkKind::jack;
  o.stereo = stereo;
  o.autoconnect = true;
  return o;
}

// Writes `signal` the way the vocoder worker does: 25 ms chunks, then end_utterance().
void write_in_chunks(AudioSink& sink, const std::vector<float>& signal, std::size_t chunk = 600) {
  for (std::size_t i = 0; i < signal.size(); i += chunk)
    ASSERT_EQ(sink.write(signal.data() + i, std::min(chunk, signal.size() - i)), std::min(chunk, signal.size() - i));
  sink.end_utterance();
}

void wait_for_tail(JackCapture& capture, double seconds = 0.2) {
  std::this_thread::sleep_for(std::chrono::duration<double>(seconds));
  capture.collect();
}

void print_measurements(const char* what, const SinkStats& s) {
  std::printf("[measured] %s: callbacks %llu, worst callback %.1f us, xruns %llu, underruns %llu, period %d\n", what,
              static_cast<unsigned long long>(s.callbacks), s.worst_callback_ns / 1000.0,
              static_cast<unsigned long long>(s.xruns), static_cast<unsigned long long>(s.underruns), s.period_frames);
}

// The clients of these tests whose callbacks are timed: our sink (JACK name `ours`) and the capture client.
std::vector<test::TimedClient> timed_clients(const std::string& ours, const SinkStats& s, const JackCapture& capture) {
  return {{ours, s.worst_callback_ns / 1e3, 1e6 * s.period_frames / kRate},
          {"kokoro-capture", capture.worst_callback_us(), capture.period_us()}};
}

TEST(JackSink, SineArrivesSampleExactOnBothPortsWithoutXruns) {
  Watchdog watchdog(120, "JACK sine test");
  JackTestServer server(kRate, kPeriod);
  JackSink sink(jack_options(/*stereo=*/true));
  sink.start();
  EXPECT_NE(sink.describe().find("48000 Hz, 256 frames per period, stereo"), std::string::npos) << sink.describe();

  // Auto-connect: out_1 -> system:playback_1, out_2 -> system:playback_2.
  JackCapture capture(server.name(), 2);
  jack_port_t* out1 = jack_port_by_name(capture.client(), sink.port_name(1).c_str());
  jack_port_t* out2 = jack_port_by_name(capture.client(), sink.port_name(2).c_str());
  ASSERT_NE(out1, nullptr);
  ASSERT_NE(out2, nullptr);
  EXPECT_TRUE(jack_port_connected_to(out1, "system:playback_1"));
  EXPECT_TRUE(jack_port_connected_to(out2, "system:playback_2"));
  ASSERT_TRUE(capture.connect(sink.port_name(1), 1));
  ASSERT_TRUE(capture.connect(sink.port_name(2), 2));

  const auto signal = test::sine_wave(440, 24000, 3 * 24000);  // 3 s
  const auto expected = test::expected_output(signal, 24000, kRate, ResampleQuality::medium);
  write_in_chunks(sink, signal);
  sink.drain(10.0);
  wait_for_tail(capture);

  const auto& left = capture.captured(1);
  const auto& right = capture.captured(2);
  const auto m = test::match_signal(left, expected);
  ASSERT_TRUE(m.found) << "no audio reached the capture client (" << left.size() << " samples captured)";
  EXPECT_EQ(m.compared, expected.size());
  EXPECT_EQ(m.mismatches, 0u) << "samples lost, duplicated or altered on the way through JACK";
  for (std::size_t i = m.offset + expected.size(); i < left.size(); ++i) ASSERT_EQ(left[i], 0.0f) << "after the end, at " << i;
  // The two channels are collected one after the other, so one may hold a period more than the other.
  const std::size_t common = std::min(left.size(), right.size());
  ASSERT_GE(common, m.offset + expected.size());
  EXPECT_TRUE(std::equal(left.begin(), left.begin() + common, right.begin())) << "out_2 must duplicate out_1";

  // The audio itself: 440 Hz at the level written (0.5 peak).
  const float* body = left.data() + m.offset + 4800;
  const std::size_t body_n = expected.size() - 9600;
  EXPECT_NEAR(test::zero_crossing_frequency(body, body_n, kRate), 440.0, 0.5);
  EXPECT_NEAR(test::rms(body, body_n), 0.5 / std::sqrt(2.0), 0.002);

  const SinkStats s = sink.stats();
  const auto timed = timed_clients(sink.client_name(), s, capture);
  expect_no_client_xruns(s.xruns, server, "JackSink", timed);
  expect_no_client_xruns(capture.xruns(), server, "capture client", timed);
  EXPECT_EQ(s.underruns, 0u);
  EXPECT_EQ(s.frames_written, signal.size());
  EXPECT_EQ(s.frames_played, expected.size());
  EXPECT_EQ(s.output_rate, kRate);
  EXPECT_EQ(s.period_frames, kPeriod);
  EXPECT_TRUE(s.error.empty()) << s.error;
  print_measurements("JACK sink, 48 kHz / 256 frames, 3 s sine", s);
}

TEST(JackSink, FollowsBufferSizeChanges) {
  Watchdog watchdog(120, "JACK buffer-size test");
  JackTestServer server(kRate, kPeriod);
  SinkOptions o = jack_options();
  o.client_name = "kokoro-bufsize";
  JackSink sink(o);
  sink.start();
  JackCapture capture(server.name(), 1);
  ASSERT_TRUE(capture.connect(sink.port_name(1), 1));
  EXPECT_EQ(sink.client_name(), "kokoro-bufsize");

  ASSERT_EQ(jack_set_buffer_size(capture.client(), 1024), 0);
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  while (sink.stats().period_frames != 1024 && std::chrono::steady_clock::now() < deadline)
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  ASSERT_EQ(sink.stats().period_frames, 1024);

  capture.collect();
  const std::size_t start = capture.captured(1).size();
  const auto signal = test::sine_wave(440, 24000, 24000);
  const auto expected = test::expected_output(signal, 24000, kRate, ResampleQuality::medium);
  write_in_chunks(sink, signal);
  sink.drain(10.0);
  wait_for_tail(capture, 0.3);
  const auto m = test::match_signal(capture.captured(1), expected, start);
  ASSERT_TRUE(m.found);
  EXPECT_EQ(m.mismatches, 0u);
  EXPECT_EQ(sink.stats().underruns, 0u);
  print_measurements("JACK sink after a change to 1024-frame periods", sink.stats());
}

// Barge-in while speaking: after flush() at most one period (plus the fade) of the old audio plays, and
// the new audio follows sample-exact.
TEST(JackSink, FlushSilencesWithinOnePeriodAndPlaysTheNextUtterance) {
  Watchdog watchdog(120, "JACK flush test");
  JackTestServer server(kRate, kPeriod);
  JackSink sink(jack_options());
  sink.start();
  JackCapture capture(server.name(), 1);
  ASSERT_TRUE(capture.connect(sink.port_name(1), 1));
  // Mono auto-connect feeds both speakers.
  jack_port_t* out1 = jack_port_by_name(capture.client(), sink.port_name(1).c_str());
  ASSERT_NE(out1, nullptr);
  EXPECT_TRUE(jack_port_connected_to(out1, "system:playback_1"));
  EXPECT_TRUE(jack_port_connected_to(out1, "system:playback_2"));
  EXPECT_EQ(jack_port_by_name(capture.client(), sink.port_name(2).c_str()), nullptr);  // no out_2 in mono

  const auto old_speech = test::sine_wave(440, 24000, 2 * 24000);
  for (std::size_t i = 0; i < old_speech.size(); i += 600) sink.write(old_speech.data() + i, 600);
  std::this_thread::sleep_for(std::chrono::milliseconds(300));  // playing, with ~1.7 s still queued
  sink.interrupt();
  sink.flush();
  const uint64_t played_at_flush = sink.stats().frames_played;
  const auto new_speech = test::sine_wave(1000, 24000, 12000, 0.25);
  const auto expected_new = test::expected_output(new_speech, 24000, kRate, ResampleQuality::medium);
  write_in_chunks(sink, new_speech);
  sink.drain(10.0);
  wait_for_tail(capture);

  const auto& got = capture.captured(1);
  const auto expected_old = test::expected_output(old_speech, 24000, kRate, ResampleQuality::medium);
  const auto old_match = test::match_signal(got, expected_old);
  ASSERT_TRUE(old_match.found);
  // Old audio that played: a prefix of expected_old, then the fade, then silence until the new utterance.
  std::size_t old_played = 0;
  while (old_played < expected_old.size() && got[old_match.offset + old_played] == expected_old[old_played]) ++old_played;
  EXPECT_GT(old_played, 0u);
  EXPECT_LT(old_played, expected_old.size() / 2);
  EXPECT_LE(old_played + kFlushFadeFrames, played_at_flush + kPeriod + kFlushFadeFrames)
      << "more than one period of stale audio played after flush()";
  const std::size_t fade_end = old_match.offset + old_played + kFlushFadeFrames;
  for (std::size_t i = old_match.offset + old_played; i < fade_end; ++i)
    ASSERT_LE(std::fabs(got[i]), 0.5f) << "fade must not be louder than the signal, at " << i;
  const auto new_match = test::match_signal(got, expected_new, fade_end);
  ASSERT_TRUE(new_match.found);
  EXPECT_EQ(new_match.mismatches, 0u);
  for (std::size_t i = fade_end; i < new_match.offset; ++i) ASSERT_EQ(got[i], 0.0f) << "silence between utterances, at " << i;
  const SinkStats s = sink.stats();
  EXPECT_EQ(s.flushes, 1u);
  EXPECT_EQ(s.underruns, 0u);
  expect_no_client_xruns(s.xruns, server, "JackSink", timed_clients(sink.client_name(), s, capture));
}

// The classification the xrun checks rely on, on log lines as jackd 1.9.21 writes them.
TEST(JackXrunAccount, ALateClientAloneIsBlamedAStallOfTheWholeGraphIsNot) {
  const std::string late = "JackEngine::XRun: client = kokoro was not finished, state = Running\n";
  const std::string canary = "JackEngine::XRun: client = kokoro-capture was not finished, state = Triggered\n";
  const std::string driver = "JackTimedDriver::Process XRun = 3812 usec\n";
  auto a = test::classify_jack_xruns("Jack: starting\n" + late + "other line\n");
  EXPECT_EQ(a.late_alone["kokoro"], 1u);
  EXPECT_EQ(a.stalled + a.not_started, 0u);
  a = test::classify_jack_xruns(late + driver);  // the server itself woke 3.8 ms late in that cycle
  EXPECT_EQ(a.late_alone_total(), 0u);
  EXPECT_EQ(a.stalled, 1u);
  EXPECT_EQ(a.driver_late, 1u);
  a = test::classify_jack_xruns(late + canary);  // even the copy-only capture client was late
  EXPECT_EQ(a.late_alone_total(), 0u);
  EXPECT_EQ(a.stalled, 2u);
  a = test::classify_jack_xruns(late + "other line\n" + canary);  // two separate events: ours was late alone
  EXPECT_EQ(a.late_alone_total(), 1u);
  EXPECT_EQ(a.stalled, 1u);
  EXPECT_EQ(a.logged(), 2u);
  a = test::classify_jack_xruns("Jack: nothing happened\n");
  EXPECT_EQ(a.logged(), 0u);
  // Woken but never run in its cycle: the scheduler's doing, counted apart.
  a = test::classify_jack_xruns("JackEngine::XRun: client = kj-test was not finished, state = Triggered\n");
  EXPECT_EQ(a.not_started, 1u);
  EXPECT_EQ(a.late_alone_total(), 0u);
  // A client that finished after the cycle's end is blamed too (by name, alone or in a stall).
  const std::string finished_late = "JackEngine::XRun: client kokoro-capture finished after current callback\n";
  a = test::classify_jack_xruns(late + "other line\n" + late);
  EXPECT_EQ(a.late_alone["kokoro"], 2u);
  a = test::classify_jack_xruns(late + finished_late);
  EXPECT_EQ(a.late_alone_total(), 0u);
  EXPECT_EQ(a.stalled, 2u);
  EXPECT_EQ(test::blamed_jack_client(finished_late), "kokoro-capture");
  EXPECT_EQ(test::blamed_jack_client(canary), "kokoro-capture");
  EXPECT_EQ(test::blamed_jack_client(driver), "");
}

// When a late client is excused, on logs like those of CI runs on a machine that paused (jackd 1.9.21).
TEST(JackXrunAccount, ALateCallbackIsExcusedOnlyByItsOwnSpeedOrAPausedMachine) {
  const std::string pa_late = "JackEngine::XRun: client = kokoro-pa was not finished, state = Running\n";
  const test::TimedClient pa_fast{"kokoro-pa", 19.9, 5333}, pa_slow{"kokoro-pa", 2000, 5333};
  const test::TimedClient capture{"kokoro-capture", 3.1, 5333};
  // Alone while running, machine not paused: excused with its own fast callback only.
  auto a = test::classify_jack_xruns(pa_late);
  EXPECT_TRUE(test::xrun_faults(1, a, {pa_fast, capture}, 0).empty());
  EXPECT_EQ(test::xrun_faults(1, a, {}, 0).size(), 1u);
  EXPECT_EQ(test::xrun_faults(1, a, {capture}, 0).size(), 1u);
  EXPECT_EQ(test::xrun_faults(1, a, {pa_slow, capture}, 0).size(), 2u);  // blamed, and slow
  // The hypervisor took 40 ms meanwhile: a pause inside the callback explains both.
  EXPECT_TRUE(test::xrun_faults(1, a, {pa_slow, capture}, 40).empty());
  // Never run in its cycle ("Triggered"): excused whatever is known of its callbacks, but a slow timed
  // callback on a machine that was not paused still fails.
  a = test::classify_jack_xruns("JackEngine::XRun: client = kj-test was not finished, state = Triggered\n");
  EXPECT_TRUE(test::xrun_faults(1, a, {capture}, 0).empty());
  EXPECT_EQ(test::xrun_faults(1, a, {{"kj-test", 1400, 5333}, capture}, 0).size(), 1u);
  // More xruns counted than jackd logged is a fault whatever the machine did.
  EXPECT_EQ(test::xrun_faults(2, a, {capture}, 40).size(), 1u);
  // No xruns at all: nothing to excuse, so a slow callback is not judged by this rule.
  EXPECT_TRUE(test::xrun_faults(0, test::classify_jack_xruns("Jack: started\n"), {pa_slow}, 0).empty());
}

// The server dies while we speak: write() must throw a clear error quickly, and closing must not hang.
void kill_server_mid_stream(int sig) {
  Watchdog watchdog(60, "JACK server-kill test");
  JackTestServer server(kRate, kPeriod);
  auto sink = std::make_unique<JackSink>(jack_options());
  sink->start();
  const auto chunk = test::sine_wave(440, 24000, 600);

  std::atomic<int64_t> killed_at_ns{0};
  std::thread killer([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(1500));  // mid-stream: the ring is full and playing
    killed_at_ns = std::chrono::steady_clock::now().time_since_epoch().count();
    server.kill(sig);
  });
  std::string error;
  const auto t0 = std::chrono::steady_clock::now();
  try {
    // Back-pressure paces this loop at real time once the ring is full.
    while (std::chrono::steady_clock::now() - t0 < std::chrono::seconds(30)) sink->write(chunk.data(), chunk.size());
  } catch (const Error& e) {
    error = e.what();
  }
  const auto failed_at = std::chrono::steady_clock::now();
  killer.join();
  ASSERT_FALSE(error.empty()) << "write() kept succeeding for 30 s after the server was killed";
  EXPECT_NE(error.find("JACK client kokoro"), std::string::npos) << error;
  EXPECT_NE(error.find("JACK server shut down"), std::string::npos) << error;
  const double reaction =
      std::chrono::duration<double>(failed_at - std::chrono::steady_clock::time_point(std::chrono::nanoseconds(killed_at_ns.load()))).count();
  EXPECT_GT(killed_at_ns.load(), 0) << "write() failed before the server was killed: " << error;
  EXPECT_LT(reaction, 5.0) << "error came " << reaction << " s after the kill";
  EXPECT_EQ(sink->stats().error.rfind("JACK server shut down", 0), 0u) << sink->stats().error;
  EXPECT_THROW(sink->drain(1.0), Error);
  const auto close_start = std::chrono::steady_clock::now();
  sink.reset();  // must return
  const double close_time = std::chrono::duration<double>(std::chrono::steady_clock::now() - close_start).count();
  EXPECT_LT(close_time, 5.0);
  EXPECT_TRUE(server.wait_exit(10.0));
  std::printf("[measured] server killed with signal %d: error after %.3f s, close took %.3f s: %s\n", sig, reaction,
              close_time, error.c_str());
}

TEST(JackSink, ServerKilledMidStreamGivesACleanError) { kill_server_mid_stream(SIGKILL); }
TEST(JackSink, ServerStoppedMidStreamGivesACleanError) { kill_server_mid_stream(SIGTERM); }

// PortAudio's JACK host API runs our PortAudio callback inside JACK's process cycle: the same sine must
// arrive sample-exact, paced by the dummy driver in real time.
TEST(PortAudioThroughJack, SineArrivesSampleExactWithoutUnderruns) {
  Watchdog watchdog(120, "PortAudio via JACK test");
  JackTestServer server(kRate, kPeriod);
  ASSERT_EQ(PaJack_SetClientName("kokoro-pa"), paNoError);
  SinkOptions o;
  o.kind = SinkKind::portaudio;
  o.device = "system";  // PortAudio's name for the JACK server's physical ports
  PortAudioSink sink(o);
  EXPECT_NE(sink.describe().find("JACK Audio Connection Kit"), std::string::npos) << sink.describe();
  JackCapture capture(server.name(), 1);
  sink.start();
  const char** ports = jack_get_ports(capture.client(), "^kokoro-pa:", JACK_DEFAULT_AUDIO_TYPE, JackPortIsOutput);
  ASSERT_TRUE(ports && ports[0]) << "PortAudio's JACK client has no output port";
  ASSERT_TRUE(capture.connect(ports[0], 1)) << ports[0];
  jack_free(ports);

  const auto signal = test::sine_wave(440, 24000, 2 * 24000);
  const auto expected = test::expected_output(signal, 24000, kRate, ResampleQuality::medium);
  write_in_chunks(sink, signal);
  sink.drain(10.0);
  wait_for_tail(capture);
  const auto m = test::match_signal(capture.captured(1), expected);
  ASSERT_TRUE(m.found);
  EXPECT_EQ(m.compared, expected.size());
  EXPECT_EQ(m.mismatches, 0u);
  const SinkStats s = sink.stats();
  EXPECT_EQ(s.underruns, 0u);
  const auto timed = timed_clients("kokoro-pa", s, capture);
  expect_no_client_xruns(s.xruns, server, "PortAudio sink", timed);
  expect_no_client_xruns(capture.xruns(), server, "capture client", timed);
  print_measurements("PortAudio (JACK host API), 48 kHz / 256 frames", s);
}

}  // namespace
}  // namespace kokoro
