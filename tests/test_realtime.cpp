// realtime/ without devices: resampling against the analytic signal, the playback queue's callback logic
// (underruns, end marks, flush/barge-in, back-pressure, stalls, failures) driven from the test thread, the
// real-time log queue, WAV and null sinks, and the errors users see.
#include <gtest/gtest.h>
#include <sndfile.h>
#include <spdlog/sinks/ringbuffer_sink.h>
#include <spdlog/spdlog.h>

#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <future>
#include <numeric>
#include <string>
#include <thread>
#include <vector>

#include "core/error.h"
#include "realtime/audio_sink.h"
#include "realtime/null_sink.h"
#include "realtime/playback_queue.h"
#include "realtime/resampler.h"
#include "realtime/rt_log.h"
#include "realtime/wav_sink.h"
#include "test_util.h"

namespace kokoro {
namespace {

std::vector<float> sine(double freq, double rate, std::size_t n, double amp = 0.5) {
  std::vector<float> v(n);
  for (std::size_t i = 0; i < n; ++i) v[i] = static_cast<float>(amp * std::sin(2 * M_PI * freq * i / rate));
  return v;
}

std::vector<float> ramp(std::size_t n, float start = 1.0f) {
  std::vector<float> v(n);
  std::iota(v.begin(), v.end(), start);
  return v;
}

// ---------------------------------------------------------------- resampler

struct ResampleCase {
  ResampleQuality quality;
  int out_rate;
  double tolerance;
};

class ResamplerVsAnalytic : public ::testing::TestWithParam<ResampleCase> {};

// A 440 Hz sine at 24 kHz resampled must match the same sine evaluated at the output rate (libsamplerate
// compensates its filter delay), away from the first and last filter lengths.
TEST_P(ResamplerVsAnalytic, SineMatchesTheAnalyticSignal) {
  const auto c = GetParam();
  const auto in = sine(440, 24000, 24000);
  StreamResampler r(24000, c.out_rate, c.quality);
  std::vector<float> out;
  r.process(in.data(), in.size(), out);
  r.finish(out);
  ASSERT_EQ(out.size(), static_cast<std::size_t>(c.out_rate));  // exactly one second
  const auto ref = sine(440, c.out_rate, out.size());
  double worst = 0;
  for (std::size_t k = 2000; k + 2000 < out.size(); ++k) worst = std::max(worst, double(std::fabs(out[k] - ref[k])));
  EXPECT_LT(worst, c.tolerance) << to_string(c.quality) << " to " << c.out_rate;
}

INSTANTIATE_TEST_SUITE_P(Qualities, ResamplerVsAnalytic,
                         ::testing::Values(ResampleCase{ResampleQuality::best, 48000, 1e-6},
                                           ResampleCase{ResampleQuality::medium, 48000, 1e-6},
                                           ResampleCase{ResampleQuality::fastest, 48000, 1e-5},
                                           ResampleCase{ResampleQuality::medium, 44100, 1e-5}));

TEST(StreamResampler, ChunkedInputGivesTheSameSamplesAsOneCall) {
  const auto in = sine(440, 24000, 12000);
  StreamResampler whole(24000, 48000, ResampleQuality::medium), chunked(24000, 48000, ResampleQuality::medium);
  std::vector<float> a, b;
  whole.process(in.data(), in.size(), a);
  whole.finish(a);
  for (std::size_t i = 0; i < in.size(); i += 333) chunked.process(in.data() + i, std::min<std::size_t>(333, in.size() - i), b);
  chunked.finish(b);
  EXPECT_EQ(a, b);
}

TEST(StreamResampler, FinishStartsAFreshStream) {
  const auto in = sine(440, 24000, 4800);
  StreamResampler r(24000, 48000, ResampleQuality::fastest);
  std::vector<float> first, second;
  r.process(in.data(), in.size(), first);
  r.finish(first);
  r.process(in.data(), in.size(), second);
  r.finish(second);
  EXPECT_EQ(first, second);
}

TEST(StreamResampler, LinearQualityKeepsLengthAndLevel) {
  const auto in = sine(440, 24000, 24000);
  StreamResampler r(24000, 48000, ResampleQuality::linear);
  std::vector<float> out;
  r.process(in.data(), in.size(), out);
  r.finish(out);
  ASSERT_EQ(out.size(), 48000u);
  double energy = 0;
  for (float v : out) energy += double(v) * v;
  EXPECT_NEAR(std::sqrt(energy / out.size()), 0.5 / std::sqrt(2.0), 0.005);
}

TEST(StreamResampler, EqualRatesPassSamplesThroughUntouched) {
  const auto in = ramp(1000);
  StreamResampler r(24000, 24000, ResampleQuality::best);
  EXPECT_TRUE(r.passthrough());
  std::vector<float> out;
  r.process(in.data(), in.size(), out);
  r.finish(out);
  EXPECT_EQ(out, in);
}

TEST(StreamResampler, RateChangeTakesEffect) {
  StreamResampler r(24000, 24000, ResampleQuality::medium);
  r.set_output_rate(48000);
  EXPECT_FALSE(r.passthrough());
  const auto in = sine(440, 24000, 2400);
  std::vector<float> out;
  r.process(in.data(), in.size(), out);
  r.finish(out);
  EXPECT_EQ(out.size(), 4800u);
}

TEST(StreamResampler, RejectsImpossibleRates) {
  EXPECT_THROW(StreamResampler(24000, 0, ResampleQuality::medium), Error);
  EXPECT_THROW(StreamResampler(-1, 48000, ResampleQuality::medium), Error);
  EXPECT_THROW(StreamResampler(24000, 24000.0 * 1000, ResampleQuality::medium), Error);
}

// ---------------------------------------------------------------- playback queue (callback logic)

SinkOptions queue_options(double stall = 2.0) {
  SinkOptions o;
  o.buffer_seconds = 0.1;  // 8192 frames minimum
  o.stall_timeout_seconds = stall;
  return o;
}

// Equal rates, so what comes out of render() is exactly what went into write().
struct QueueFixture : ::testing::Test {
  PlaybackQueue q{"test queue", 24000, 24000, queue_options()};
  std::vector<float> period = std::vector<float>(256, -99.0f);
  void render() { q.render(period.data(), period.size()); }
};

TEST_F(QueueFixture, SilenceBeforeAnyAudioIsNotAnUnderrun) {
  for (int i = 0; i < 10; ++i) render();
  for (float v : period) ASSERT_EQ(v, 0.0f);
  EXPECT_EQ(q.stats().underruns, 0u);
}

TEST_F(QueueFixture, AudioComesOutInOrderThenSilenceAtTheEndMark) {
  const auto in = ramp(1000);
  ASSERT_EQ(q.write(in.data(), in.size()), in.size());
  q.end_utterance();
  std::vector<float> played;
  for (int i = 0; i < 5; ++i) {
    render();
    played.insert(played.end(), period.begin(), period.end());
  }
  for (std::size_t i = 0; i < 1000; ++i) ASSERT_EQ(played[i], in[i]) << i;
  for (std::size_t i = 1000; i < played.size(); ++i) ASSERT_EQ(played[i], 0.0f) << i;
  const SinkStats s = q.stats();
  EXPECT_EQ(s.underruns, 0u);  // ran dry exactly at the end of the utterance
  EXPECT_EQ(s.frames_written, 1000u);
  EXPECT_EQ(s.frames_played, 1000u);
}

TEST_F(QueueFixture, RunningDryMidUtteranceCountsOneUnderrunAndResumes) {
  const auto a = ramp(300);
  q.write(a.data(), a.size());
  render();
  render();  // 44 samples then dry: underrun
  render();  // still dry: the same underrun
  EXPECT_EQ(q.stats().underruns, 1u);
  EXPECT_EQ(period[0], 0.0f);
  const auto b = ramp(256, 1000);
  q.write(b.data(), b.size());
  render();  // resumes with exactly the new audio
  EXPECT_EQ(period[0], 1000.0f);
  EXPECT_EQ(period[255], 1255.0f);
  render();  // dry again, still mid-utterance: a second underrun
  EXPECT_EQ(q.stats().underruns, 2u);
  q.end_utterance();
  render();
  EXPECT_EQ(q.stats().underruns, 2u);
}

// Text that streams in: the engine marks a pause where it waits for the next sentence's text. Running dry at
// the mark is that wait, not an underrun; the audio after it plays on, and running dry inside it is one.
TEST_F(QueueFixture, RunningDryAtAPauseMarkIsNotAnUnderrunButLaterIs) {
  const auto a = ramp(300);
  q.write(a.data(), a.size());
  q.mark_pause();
  render();
  render();  // 44 samples then dry at the mark
  render();
  EXPECT_EQ(q.stats().underruns, 0u);
  const auto b = ramp(300, 1000);
  q.write(b.data(), b.size());
  render();  // the next sentence, from its first sample
  EXPECT_EQ(period[0], 1000.0f);
  render();  // dry inside it (no mark): an underrun
  EXPECT_EQ(q.stats().underruns, 1u);
}

TEST_F(QueueFixture, FlushFadesOutWithinOnePeriodAndKeepsLaterAudio) {
  const auto stale = std::vector<float>(4000, 1.0f);
  q.write(stale.data(), stale.size());
  render();  // playing the stale utterance
  EXPECT_EQ(period[0], 1.0f);
  q.flush();
  const auto fresh = ramp(512, 500);
  q.write(fresh.data(), fresh.size());
  render();  // the flush period: a fade from < 1 down to near 0 over 128 samples, then silence
  EXPECT_LT(period[0], 1.0f);
  for (std::size_t i = 1; i < kFlushFadeFrames; ++i) ASSERT_LT(period[i], period[i - 1]) << i;
  EXPECT_LT(period[kFlushFadeFrames - 1], 0.01f);
  for (std::size_t i = kFlushFadeFrames; i < period.size(); ++i) ASSERT_EQ(period[i], 0.0f) << i;
  render();  // fresh audio, from its first sample
  EXPECT_EQ(period[0], 500.0f);
  render();
  EXPECT_EQ(period[255], 1011.0f);
  const SinkStats s = q.stats();
  EXPECT_EQ(s.flushes, 1u);
  EXPECT_EQ(s.underruns, 0u);
}

TEST_F(QueueFixture, FlushWithNothingQueuedIsSilentAndNotAnUnderrun) {
  const auto a = ramp(256);
  q.write(a.data(), a.size());
  render();
  q.flush();
  render();
  for (float v : period) ASSERT_EQ(v, 0.0f);
  render();
  EXPECT_EQ(q.stats().underruns, 0u);
  EXPECT_EQ(q.stats().flushes, 1u);
}

// The callback's records reach spdlog through the queue's monitor thread (the only consumer of its RtLog).
TEST_F(QueueFixture, RenderLogsReachSpdlogOutsideTheCallback) {
  auto captured = std::make_shared<spdlog::sinks::ringbuffer_sink_mt>(64);  // thread-safe to read back
  auto previous = spdlog::default_logger();
  spdlog::set_default_logger(std::make_shared<spdlog::logger>("capture", captured));
  const auto a = ramp(100);
  q.write(a.data(), a.size());
  render();  // underrun -> one warning record
  const std::string expected = "test queue: underrun: ran out of audio 100 samples into a period of 256; playing silence";
  auto logged = [&] {
    std::string all;
    for (const auto& line : captured->last_formatted()) all += line;
    return all;
  };
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(5);
  while (logged().find(expected) == std::string::npos && std::chrono::steady_clock::now() < deadline)
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  spdlog::set_default_logger(previous);
  EXPECT_NE(logged().find(expected), std::string::npos) << logged();
  EXPECT_NE(logged().find("[warning]"), std::string::npos) << logged();
}

TEST(PlaybackQueue, ResamplesToTheDeviceRateAndFollowsRateChanges) {
  PlaybackQueue q("test queue", 24000, 48000, queue_options());
  const auto in = sine(440, 24000, 2400);
  q.write(in.data(), in.size());
  q.end_utterance();
  EXPECT_EQ(q.queued(), 4800u);
  q.set_output_rate(24000);
  q.write(in.data(), in.size());
  q.end_utterance();
  EXPECT_EQ(q.queued(), 4800u + 2400u);
  EXPECT_EQ(q.stats().output_rate, 24000);
}

TEST(PlaybackQueue, FullRingBlocksUntilInterrupted) {
  PlaybackQueue q("test queue", 24000, 24000, queue_options(30.0));
  const auto big = std::vector<float>(q.capacity() * 2, 0.25f);
  auto writer = std::async(std::launch::async, [&] { return q.write(big.data(), big.size()); });
  EXPECT_EQ(writer.wait_for(std::chrono::milliseconds(200)), std::future_status::timeout);  // blocked: ring full
  q.interrupt();
  ASSERT_EQ(writer.wait_for(std::chrono::seconds(5)), std::future_status::ready);
  EXPECT_LT(writer.get(), big.size());
  // flush() re-arms write()
  q.flush();
  std::vector<float> period(256);
  q.render(period.data(), period.size());
  EXPECT_EQ(q.write(big.data(), 100), 100u);
}

TEST(PlaybackQueue, BackPressureLetsAConsumerDrainEverything) {
  PlaybackQueue q("test queue", 24000, 24000, queue_options());
  std::atomic<bool> stop{false};
  std::atomic<uint64_t> consumed{0};
  std::atomic<bool> in_order{true};
  std::thread consumer([&] {
    std::vector<float> period(512);
    float next = 1.0f;
    while (!stop.load()) {
      q.render(period.data(), period.size());
      for (float v : period)
        if (v != 0.0f) {
          if (v != next) in_order = false;
          next = v + 1.0f;
          ++consumed;
        }
      std::this_thread::sleep_for(std::chrono::microseconds(200));
    }
  });
  const auto in = ramp(3 * q.capacity());  // more than fits: write() must wait for the consumer
  ASSERT_EQ(q.write(in.data(), in.size()), in.size());
  q.end_utterance();
  q.drain(10.0);
  stop = true;
  consumer.join();
  EXPECT_EQ(consumed.load(), in.size());
  EXPECT_TRUE(in_order.load());
}

TEST(PlaybackQueue, AStalledDeviceGivesAnErrorNotAHang) {
  PlaybackQueue q("stalled device", 24000, 24000, queue_options(0.3));
  const auto big = std::vector<float>(q.capacity() + 10, 0.5f);
  const auto t0 = std::chrono::steady_clock::now();
  try {
    q.write(big.data(), big.size());
    FAIL() << "write into a ring nobody drains must fail";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("stalled device: the audio device stopped taking audio"), std::string::npos)
        << e.what();
  }
  EXPECT_LT(std::chrono::steady_clock::now() - t0, std::chrono::seconds(5));
  EXPECT_THROW(q.drain(10.0), Error);
}

TEST(PlaybackQueue, DrainTimesOut) {
  PlaybackQueue q("slow device", 24000, 24000, queue_options(30.0));
  const auto a = ramp(1000);
  q.write(a.data(), a.size());
  try {
    q.drain(0.1);
    FAIL() << "drain with nobody playing must time out";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("drain timed out"), std::string::npos) << e.what();
  }
}

TEST(PlaybackQueue, FailureIsReportedToTheProducer) {
  PlaybackQueue q("JACK client test", 24000, 24000, queue_options());
  q.fail("JACK server shut down (killed)");
  q.fail("a second reason is ignored");
  const auto a = ramp(10);
  try {
    q.write(a.data(), a.size());
    FAIL() << "write after a failure must throw";
  } catch (const Error& e) {
    EXPECT_EQ(std::string(e.what()), "JACK client test: JACK server shut down (killed)");
  }
  EXPECT_EQ(q.stats().error, "JACK server shut down (killed)");
  EXPECT_THROW(q.end_utterance(), Error);
}

TEST(PlaybackQueue, CallbackScopeRecordsCountPeriodAndDuration) {
  PlaybackQueue q("test queue", 24000, 24000, queue_options());
  {
    PlaybackQueue::CallbackScope scope(q, 128);
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
  }
  const SinkStats s = q.stats();
  EXPECT_EQ(s.callbacks, 1u);
  EXPECT_EQ(s.period_frames, 128);
  EXPECT_GE(s.worst_callback_ns, 2'000'000u);
}

TEST(PlaybackQueue, RejectsBadBufferSizes) {
  SinkOptions o;
  o.buffer_seconds = 0;
  EXPECT_THROW(PlaybackQueue("q", 24000, 48000, o), Error);
  o.buffer_seconds = 1;
  o.stall_timeout_seconds = 0;
  EXPECT_THROW(PlaybackQueue("q", 24000, 48000, o), Error);
}

// ---------------------------------------------------------------- real-time log

TEST(RtLog, RecordsAreFormattedInOrderAndOverflowIsCounted) {
  rt::RtLog log(4);
  log.log(rt::RtLogLevel::warn, "underrun at {} of {}", 3, 256);
  log.log(rt::RtLogLevel::info, "no arguments");
  for (int i = 0; i < 5; ++i) log.log(rt::RtLogLevel::debug, "n={}", i);
  std::vector<std::string> got;
  EXPECT_EQ(log.drain([&](const rt::RtLogRecord& r) { got.push_back(rt::RtLog::format(r)); }), 4u);
  ASSERT_EQ(got.size(), 4u);
  EXPECT_EQ(got[0], "underrun at 3 of 256");
  EXPECT_EQ(got[1], "no arguments");
  EXPECT_EQ(got[2], "n=0");
  EXPECT_EQ(got[3], "n=1");
  EXPECT_EQ(log.dropped(), 3u);
  EXPECT_EQ(rt::RtLog::format(rt::RtLogRecord{"bad {", 1, 2, rt::RtLogLevel::info}), "bad {");
}

// ---------------------------------------------------------------- WAV and null sinks

std::vector<float> read_wav(const std::string& path, SF_INFO& info) {
  info = SF_INFO{};
  SNDFILE* f = sf_open(path.c_str(), SFM_READ, &info);
  EXPECT_NE(f, nullptr) << path;
  if (!f) return {};
  std::vector<float> data(static_cast<std::size_t>(info.frames));
  sf_readf_float(f, data.data(), info.frames);
  sf_close(f);
  return data;
}

TEST(WavSink, Float32RoundTripsExactly) {
  test::TempDir dir;
  SinkOptions o;
  o.kind = SinkKind::wav;
  o.path = dir.file("out.wav");
  const auto a = sine(440, 24000, 2400, 0.9);
  {
    auto sink = open_sink(o);
    EXPECT_EQ(sink->write(a.data(), 1000), 1000u);
    EXPECT_EQ(sink->write(a.data() + 1000, 1400), 1400u);
    EXPECT_EQ(sink->stats().frames_written, 2400u);
    EXPECT_NE(sink->describe().find("float32"), std::string::npos);
  }
  SF_INFO info;
  const auto back = read_wav(o.path, info);
  EXPECT_EQ(info.samplerate, 24000);
  EXPECT_EQ(info.channels, 1);
  EXPECT_EQ(info.format, SF_FORMAT_WAVEX | SF_FORMAT_FLOAT);  // the extensible header sox expects for float
  EXPECT_EQ(back, a);
}

TEST(WavSink, Pcm16QuantisesAndClips) {
  test::TempDir dir;
  SinkOptions o;
  o.kind = SinkKind::wav;
  o.wav_format = WavFormat::pcm16;
  o.path = dir.file("out16.wav");
  std::vector<float> a = sine(440, 24000, 2400, 0.7);
  a.push_back(1.5f);
  a.push_back(-1.5f);
  {
    WavSink sink(o);
    sink.write(a.data(), a.size());
    sink.close();
  }
  SF_INFO info;
  const auto back = read_wav(o.path, info);
  EXPECT_EQ(info.format, SF_FORMAT_WAV | SF_FORMAT_PCM_16);
  ASSERT_EQ(back.size(), a.size());
  for (std::size_t i = 0; i + 2 < a.size(); ++i) ASSERT_NEAR(back[i], a[i], 1.0 / 32768 + 1e-7) << i;
  EXPECT_NEAR(back[a.size() - 2], 1.0f, 1.0 / 32768);  // clipped, not wrapped to negative
  EXPECT_NEAR(back[a.size() - 1], -1.0f, 1.0 / 32768);
}

TEST(WavSink, UnwritablePathNamesThePath) {
  SinkOptions o;
  o.kind = SinkKind::wav;
  o.path = "/nonexistent-dir-kokoro/out.wav";
  try {
    open_sink(o);
    FAIL() << "opening a WAV file in a missing directory must fail";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("/nonexistent-dir-kokoro/out.wav"), std::string::npos) << e.what();
  }
  o.path.clear();
  EXPECT_THROW(open_sink(o), Error);
}

TEST(NullSink, CountsSamplesAndNeverBlocks) {
  SinkOptions o;
  auto sink = open_sink(o);
  const std::vector<float> a(100000, 0.1f);
  for (int i = 0; i < 10; ++i) EXPECT_EQ(sink->write(a.data(), a.size()), a.size());
  sink->end_utterance();
  sink->drain(0.0);
  EXPECT_EQ(sink->stats().frames_written, 1000000u);
  EXPECT_EQ(sink->input_rate(), 24000);
}

// ---------------------------------------------------------------- options and errors

TEST(SinkOptions, ParsersAcceptTheDocumentedNamesAndListThemOnError) {
  EXPECT_EQ(parse_sink_kind("jack"), SinkKind::jack);
  EXPECT_EQ(parse_sink_kind("portaudio"), SinkKind::portaudio);
  EXPECT_EQ(parse_sink_kind("wav"), SinkKind::wav);
  EXPECT_EQ(parse_sink_kind("null"), SinkKind::null);
  EXPECT_EQ(parse_resample_quality("best"), ResampleQuality::best);
  EXPECT_EQ(parse_resample_quality("linear"), ResampleQuality::linear);
  EXPECT_EQ(parse_wav_format("pcm16"), WavFormat::pcm16);
  EXPECT_EQ(parse_wav_format("float"), WavFormat::float32);
  try {
    parse_sink_kind("alsa");
    FAIL();
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("jack, portaudio, wav or null"), std::string::npos);
  }
  EXPECT_THROW(parse_resample_quality("great"), Error);
  EXPECT_THROW(parse_wav_format("mp3"), Error);
  EXPECT_STREQ(to_string(ResampleQuality::medium), "medium");
  EXPECT_STREQ(to_string(SinkKind::jack), "jack");
}

TEST(JackSinkErrors, NoServerGivesAClearErrorQuickly) {
  SinkOptions o;
  o.kind = SinkKind::jack;
  o.server_name = "kokoro-no-such-server-" + std::to_string(::getpid());
  const auto t0 = std::chrono::steady_clock::now();
  try {
    open_sink(o);
    FAIL() << "a JACK sink without a server must fail";
  } catch (const Error& e) {
    const std::string msg = e.what();
    EXPECT_NE(msg.find("cannot open client 'kokoro' on server '" + o.server_name + "'"), std::string::npos) << msg;
    EXPECT_NE(msg.find("is jackd running?"), std::string::npos) << msg;
  }
  EXPECT_LT(std::chrono::steady_clock::now() - t0, std::chrono::seconds(10));
}

}  // namespace
}  // namespace kokoro
