// The PortAudio sink driven for real through ALSA, with no sound card: a private ALSA configuration
// (ALSA_CONFIG_PATH, this process only) makes "default" ALSA's null PCM and adds "kokoro_file", the ALSA
// file plugin writing the raw float samples in front of the null PCM. The file lets the test check that
// exactly the expected samples went through PortAudio and ALSA.
//
// ALSA's null PCM is not paced by a clock: it takes samples as fast as the callback produces them, so the
// callback runs far faster than real time here. The tests therefore queue the whole utterance before
// starting the stream; paced PortAudio runs are in test_jack_sink (PortAudio's JACK host API).
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>

#include "audio_test_support.h"
#include "core/error.h"
#include "realtime/portaudio_sink.h"

namespace kokoro {
namespace {

// Set up before main() so that no test can touch ALSA before ALSA_CONFIG_PATH points at the private file.
test::AlsaNullConfig& alsa() {
  static test::AlsaNullConfig config;
  return config;
}
[[maybe_unused]] const bool kAlsaReady = (alsa(), true);

TEST(PortAudioDevices, ListsTheAlsaDevicesOfTheConfiguration) {
  const auto devices = PortAudioSink::list_devices();
  auto find = [&](const std::string& name) {
    return std::find_if(devices.begin(), devices.end(), [&](const AudioDeviceInfo& d) { return d.name == name; });
  };
  ASSERT_NE(find("kokoro_file"), devices.end());
  ASSERT_NE(find("default"), devices.end());
  EXPECT_EQ(find("default")->host_api, "ALSA");
  EXPECT_GT(find("kokoro_file")->max_output_channels, 0);
  EXPECT_EQ(std::count_if(devices.begin(), devices.end(), [](const AudioDeviceInfo& d) { return d.is_default; }), 1);
}

TEST(PortAudioDevices, UnknownDeviceNamesItAndListsTheOutputs) {
  SinkOptions o;
  o.kind = SinkKind::portaudio;
  o.device = "no-such-device-xyz";
  try {
    open_sink(o);
    FAIL() << "an unknown device must fail";
  } catch (const Error& e) {
    const std::string msg = e.what();
    EXPECT_NE(msg.find("no output device 'no-such-device-xyz'"), std::string::npos) << msg;
    EXPECT_NE(msg.find("'kokoro_file'"), std::string::npos) << msg;
  }
}

TEST(PortAudioDevices, DefaultExactAndUniqueSubstringSelectADevice) {
  SinkOptions o;
  o.kind = SinkKind::portaudio;
  EXPECT_EQ(PortAudioSink(o).device_name(), "default");
  o.device = "kokoro_";  // a unique substring selects kokoro_file
  EXPECT_EQ(PortAudioSink(o).device_name(), "kokoro_file");
  o.device = std::string(1, 'f');  // in both "default" and "kokoro_file" (not = "f": GCC 12 -Wrestrict false positive)
  try {
    PortAudioSink sink(o);
    FAIL() << "an ambiguous device name must fail";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("output device 'f' is ambiguous"), std::string::npos) << e.what();
  }
}

TEST(PortAudioSink, PlaysSampleExactThroughTheAlsaFilePlugin) {
  SinkOptions o;
  o.kind = SinkKind::portaudio;
  o.device = "kokoro_file";
  o.device_rate = 48000;
  o.latency_seconds = 0.05;
  const auto signal = test::sine_wave(440, 24000, 12000);  // 0.5 s
  const auto expected = test::expected_output(signal, 24000, 48000, ResampleQuality::medium);
  SinkStats stats;
  {
    PortAudioSink sink(o);
    EXPECT_GT(sink.output_latency(), 0.0);
    EXPECT_NE(sink.describe().find("PortAudio device 'kokoro_file' (ALSA), 48000 Hz"), std::string::npos) << sink.describe();
    ASSERT_EQ(sink.write(signal), signal.size());  // queued before the unpaced device starts
    sink.end_utterance();
    sink.start();
    sink.drain(10.0);
    sink.stop();
    stats = sink.stats();
  }
  const auto raw = alsa().read_raw();
  const auto m = test::match_signal(raw, expected);
  ASSERT_TRUE(m.found) << "no audio in " << alsa().raw_path() << " (" << raw.size() << " samples)";
  EXPECT_EQ(m.compared, expected.size());
  EXPECT_EQ(m.mismatches, 0u);
  EXPECT_EQ(stats.underruns, 0u);
  EXPECT_EQ(stats.frames_played, expected.size());
  EXPECT_GT(stats.callbacks, 0u);
  EXPECT_TRUE(stats.error.empty()) << stats.error;
  std::printf("[measured] PortAudio on ALSA file/null (unpaced): %llu callbacks of %d frames, worst %.1f us\n",
              static_cast<unsigned long long>(stats.callbacks), stats.period_frames, stats.worst_callback_ns / 1000.0);
}

TEST(PortAudioSink, DefaultDevicePlaysAndFlushes) {
  SinkOptions o;
  o.kind = SinkKind::portaudio;  // default device: the null PCM
  o.period_frames = 256;
  auto sink = std::make_unique<PortAudioSink>(o);
  const auto speech = test::sine_wave(440, 24000, 4800);
  sink->write(speech);
  sink->end_utterance();
  sink->start();
  sink->drain(10.0);
  const SinkStats s = sink->stats();
  EXPECT_EQ(s.period_frames, 256);
  EXPECT_EQ(s.frames_played, s.output_rate * 4800u / 24000u);
  EXPECT_EQ(s.underruns, 0u);
  // Barge-in on a running stream: flush() is applied by the callback, then new audio plays.
  sink->flush();
  sink->write(speech);
  sink->end_utterance();
  sink->drain(10.0);
  EXPECT_EQ(sink->stats().flushes, 1u);
  sink->stop();
  sink.reset();
}

}  // namespace
}  // namespace kokoro
