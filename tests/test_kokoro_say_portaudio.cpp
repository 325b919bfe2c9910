// kokoro-say --output portaudio driven for real through ALSA without a sound card: the child runs with a
// private ALSA configuration (ALSA_CONFIG_PATH, as in test_portaudio_sink) whose "kokoro_file" device is
// ALSA's file plugin in front of the null PCM, so every sample PortAudio plays lands in a raw file. The
// speech in that file must be the engine's speech for the text, resampled to the device rate.
//
// The null PCM is not clocked: while kokoro-say synthesizes, PortAudio's callback runs as fast as it can
// and the file fills with silence (tens of MB for the short sentence used here; the temporary directory
// is removed at the end). Label portaudio.
#include <gtest/gtest.h>

#include <regex>

#include "app_test_support.h"
#include "audio_test_support.h"

namespace kokoro {
namespace {

using test::ChildProcess;

TEST(KokoroSayPortAudio, SpeechReachesTheAlsaFileDevice) {
  const std::string text = "Hello through PortAudio.";
  const test::ReferenceSpeech reference;
  const auto speech = reference.speak(text);

  test::TempDir dir;
  const std::string raw = dir.file("alsa-out.raw"), conf = dir.file("asound.conf");
  std::ofstream(conf) << "pcm.null { type null }\n"
                      << "pcm.!default { type plug slave.pcm \"null\" }\n"
                      << "pcm.kokoro_file { type file slave.pcm \"null\" file \"" << raw << "\" format \"raw\" }\n";
  const auto r = test::run_to_end({KOKORO_SAY_BIN, "--output", "portaudio", "--device", "kokoro_file", "--mode", "exact", "--precision", "fp32", text}, "", 60,
                                  {"ALSA_CONFIG_PATH=" + conf, "JACK_NO_START_SERVER=1"});
  ASSERT_EQ(r.code(), 0) << r.err;
  std::smatch m;
  ASSERT_TRUE(std::regex_search(r.err, m, std::regex(R"(output PortAudio device 'kokoro_file' \(ALSA\), (\d+) Hz)"))) << r.err;
  const int rate = std::stoi(m[1]);
  EXPECT_NE(r.err.find("[spoken]"), std::string::npos) << r.err;

  const std::vector<char> bytes = test::read_bytes(raw);
  std::vector<float> played(bytes.size() / sizeof(float));
  std::memcpy(played.data(), bytes.data(), played.size() * sizeof(float));
  const auto expected = test::expected_output(speech, 24000, rate, ResampleQuality::medium);
  const auto heard = test::nonzero_samples(played.data(), played.size());
  const auto wanted = test::nonzero_samples(expected.data(), expected.size());
  ASSERT_FALSE(heard.empty()) << "no audio reached the ALSA device";
  EXPECT_NEAR(double(heard.size()) / rate, double(wanted.size()) / rate, 0.002);
  const std::size_t n = std::min(heard.size(), wanted.size());
  const double corr = test::correlation(heard.data(), wanted.data(), n);
  EXPECT_GT(corr, 0.99) << "what PortAudio played is not the engine's speech";
  std::printf("[measured] PortAudio/ALSA %d Hz: %.2f s of speech in the file (engine: %.2f s), correlation %.6f, "
              "file %.1f MB\n", rate, double(heard.size()) / rate, double(wanted.size()) / rate, corr,
              bytes.size() / 1e6);
}

}  // namespace
}  // namespace kokoro
