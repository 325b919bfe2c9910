// kokoro.lv2 in a lilv host (lv2_test_host.h): the plugin found on LV2_PATH (the build tree's bundle, or an
// installed one: tests/test_lv2_bundle.sh runs the speech test against `cmake --install`'s), 256-frame blocks
// at 48 kHz. Speech is checked as the other audio tests check it: its non-silent samples against the
// engine's own audio for the same sentence (through the C API, resampled with the engine's resampler),
// and the speech band. run() executes inside a RealtimeSection with the malloc/lock/syscall trap linked in
// (rt_trap.h), so any allocation, lock or system call it makes fails the test.
//
// Needs the model (fails without it, except the test that removes it on purpose): label lv2.
#include <dlfcn.h>
#include <gtest/gtest.h>
#include <lilv/lilv.h>

#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <algorithm>
#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "kokoro.h"
#include "lv2/playback.h"
#include "lv2/uris.h"
#include "lv2_test_host.h"
#include "realtime/resampler.h"
#include "rt_trap.h"
#include "speech_checks.h"
#include "test_util.h"

namespace kokoro {
namespace {

using test::Lv2TestHost;
using Mode = Lv2TestHost::Mode;
constexpr double kRate = 48000;
constexpr uint32_t kBlock = 256;
const std::string kNs = Lv2TestHost::kNs;
constexpr uint32_t kFade = lv2::Playback::kFadeFrames;  // a cut speech fades out over these frames

// The engine's audio for `text` as the plugin asks for it (the voice's name, speed, default mode and
// seed), resampled chunk by chunk to the host's rate with the engine's resampler, as the plugin does.
class EngineReference {
 public:
  EngineReference() : engine_(kokoro_open(nullptr)) {
    if (!engine_) throw std::runtime_error(std::string("kokoro_open: ") + kokoro_last_error());
  }
  ~EngineReference() { kokoro_close(engine_); }
  std::vector<float> speak(const std::string& text, const char* voice = "af_heart", float speed = 1.0f,
                           double rate = kRate) {
    struct Out {
      explicit Out(double rate) : resampler(KOKORO_SAMPLE_RATE, rate, ResampleQuality::medium) {}
      StreamResampler resampler;
      std::vector<float> audio;
      std::chrono::steady_clock::time_point start = std::chrono::steady_clock::now(), first{};
    } out(rate);
    kokoro_speak_options o{};
    o.size = sizeof o;
    o.voice = voice;
    o.speed = speed;
    const int rc = kokoro_speak(
        engine_, text.c_str(), &o,
        [](const float* s, size_t n, void* u) {
          auto* out = static_cast<Out*>(u);
          if (out->audio.empty()) out->first = std::chrono::steady_clock::now();
          out->resampler.process(s, n, out->audio);
          return 0;
        },
        nullptr, &out);
    if (rc != KOKORO_OK) throw std::runtime_error(std::string("kokoro_speak: ") + kokoro_last_error());
    out.resampler.finish(out.audio);
    last_ttfa_ms = std::chrono::duration<double, std::milli>(out.first - out.start).count();
    return out.audio;
  }
  double last_ttfa_ms = 0;  // kokoro_speak to its first audio callback, for the same sentence as the plugin's

 private:
  kokoro_engine* engine_;
};

// The plugin's non-silent output in [from, to) is the engine's speech `wanted` (same length within 2 ms,
// correlation > 0.99) and most of its energy lies in the speech band.
void expect_engine_speech(const std::vector<float>& out, uint64_t from, uint64_t to, const std::vector<float>& wanted,
                          const std::string& what, double rate = kRate) {
  const auto heard = test::nonzero_samples(out.data() + from, std::min<uint64_t>(to, out.size()) - from);
  const auto expected = test::nonzero_samples(wanted.data(), wanted.size());
  ASSERT_FALSE(heard.empty()) << what << ": no audio";
  EXPECT_NEAR(double(heard.size()) / rate, double(expected.size()) / rate, 0.002) << what << ": duration differs";
  const std::size_t n = std::min(heard.size(), expected.size());
  const double corr = test::correlation(heard.data(), expected.data(), n);
  EXPECT_GT(corr, 0.99) << what << ": not the engine's speech";
  const double band = test::band_energy_fraction(heard, rate, 80, 5000);
  EXPECT_GT(band, 0.9) << what << ": energy outside the speech band";
  std::printf("[measured] %s: %.2f s of speech, correlation with the engine %.6f, energy in 80-5000 Hz %.3f\n",
              what.c_str(), double(heard.size()) / rate, corr, band);
}

// The last block ended in sound: speech is playing (not paused by an underrun).
bool sounding(const Lv2TestHost& host) {
  const auto& a = host.audio();
  float p = 0;
  for (std::size_t i = a.size() >= 32 ? a.size() - 32 : 0; i < a.size(); ++i) p = std::max(p, std::fabs(a[i]));
  return p > 0.0f;
}

uint64_t first_nonzero(const std::vector<float>& v, uint64_t from) {
  for (uint64_t i = from; i < v.size(); ++i)
    if (v[i] != 0.0f) return i;
  return v.size();
}

std::string words_of(const Lv2TestHost& host, uint64_t from = 0, uint64_t to = UINT64_MAX) {
  std::string s;
  for (const auto& w : host.notifications_of("#Word"))
    if (w.sample >= from && w.sample < to) s += (s.empty() ? "" : " ") + w.strings.at("http://www.w3.org/2000/01/rdf-schema#label");
  return s;
}

// The voice port's value for `name` (voices.txt's order, as the plugin's TTL lists it).
int voice_index(const std::string& name) {
  static const std::vector<std::string> voices = [] {
    std::vector<std::string> v;
    std::ifstream in(std::string(KOKORO_SOURCE_DIR) + "/lv2/voices.txt");
    for (std::string line; std::getline(in, line);)
      if (!line.empty() && line[0] != '#') v.push_back(line);
    return v;
  }();
  const auto it = std::find(voices.begin(), voices.end(), name);
  if (it == voices.end()) throw std::runtime_error("no voice " + name + " in lv2/voices.txt");
  return static_cast<int>(it - voices.begin());
}

// What the plugin logged, one line each (for failure messages).
std::string log_of(const Lv2TestHost& host) {
  std::string s;
  for (const auto& l : host.log()) s += "  " + l + "\n";
  return s.empty() ? "  (nothing logged)\n" : s;
}

TEST(Lv2Plugin, NoteOnSpeaksTheNextSentenceAndRunIsRealtimeSafe) {
  const std::string first = "Hello from the plugin.", second = "A second line follows.";
  EngineReference reference;
  const auto wanted = reference.speak(first);
  const double engine_ttfa1 = reference.last_ttfa_ms;
  const auto wanted_second = reference.speak(second);
  const double engine_ttfa2 = reference.last_ttfa_ms;
  test::Watchdog watchdog(180, "plugin speech test");
  Lv2TestHost host(kRate, kBlock);
  Dl_info libkokoro{};
  dladdr(reinterpret_cast<void*>(&kokoro_session_speak), &libkokoro);
  std::printf("plugin binary: %s\nlibkokoro: %s\n", host.binary_path().c_str(), libkokoro.dli_fname);
  test::rt_trap::reset();

  host.set_property(0, "text", first + " " + second);
  host.run_blocks(4, Mode::realtime);  // the worker takes the text
  const uint64_t note = host.samples() + 100;
  host.note_on(100);
  ASSERT_TRUE(host.run_until_utterance_ends(20, Mode::realtime)) << log_of(host);
  host.run_blocks(10, Mode::realtime);
  const uint64_t second_note = host.samples() + 10;
  host.note_on(10);
  ASSERT_TRUE(host.run_until_utterance_ends(20, Mode::realtime)) << log_of(host);
  host.run_blocks(10, Mode::realtime);

  EXPECT_EQ(test::rt_trap::violations(), 0u) << "run() was not real-time safe: " << test::rt_trap::report();
  const auto& out = host.audio();
  const uint64_t onset = first_nonzero(out, 0);
  EXPECT_GE(onset, note) << "audio before the note-on";
  expect_engine_speech(out, note, second_note, wanted, "first note-on: \"" + first + "\"");
  expect_engine_speech(out, second_note, out.size(), wanted_second, "second note-on: \"" + second + "\"");

  const auto starts = host.notifications_of("#UtteranceStart");
  const auto ends = host.notifications_of("#UtteranceEnd");
  ASSERT_EQ(starts.size(), 2u);
  ASSERT_EQ(ends.size(), 2u);
  EXPECT_EQ(starts[0].numbers.at(kNs + "cue"), 0);
  EXPECT_EQ(starts[1].numbers.at(kNs + "cue"), 1);
  EXPECT_EQ(ends[0].strings.at(kNs + "status"), "spoken");
  EXPECT_EQ(ends[1].strings.at(kNs + "status"), "spoken");
  EXPECT_EQ(words_of(host, 0, second_note), "Hello from the plugin");
  EXPECT_EQ(words_of(host, second_note), "A second line follows");
  // Word events come at the frame their audio plays, inside the utterance.
  for (const auto& w : host.notifications_of("#Word")) {
    const bool in_first = w.sample >= starts[0].sample && w.sample <= ends[0].sample;
    const bool in_second = w.sample >= starts[1].sample && w.sample <= ends[1].sample;
    EXPECT_TRUE(in_first || in_second) << "word event at sample " << w.sample;
  }
  // Offsets point into the whole text: "A" of the second sentence.
  const auto words = host.notifications_of("#Word");
  EXPECT_EQ(words.back().numbers.at(kNs + "textBegin"), static_cast<int64_t>(first.size() + 1 + second.find("follows")));
  const double ttfa1 = 1e3 * double(onset - note) / kRate;
  const double ttfa2 = 1e3 * double(first_nonzero(out, second_note) - second_note) / kRate;
  std::printf("[measured] note-on to first audio: %.0f ms (first note of the instance), %.0f ms (second); the "
              "engine alone (kokoro_speak, same sentences, just before): %.0f ms, %.0f ms; underrun frames %lld, %lld\n",
              ttfa1, ttfa2, engine_ttfa1, engine_ttfa2, static_cast<long long>(ends[0].numbers.at(kNs + "underrunFrames")),
              static_cast<long long>(ends[1].numbers.at(kNs + "underrunFrames")));
}

TEST(Lv2Plugin, SecondNoteOnStopsTheFirstWithinOneBlock) {
  const std::string first =
      "This first sentence is long on purpose, so that there is plenty of it left to cut when the second note "
      "arrives in the middle of it.";
  const std::string second = "Cut in.";
  EngineReference reference;
  const auto wanted_second = reference.speak(second);
  test::Watchdog watchdog(180, "plugin barge-in test");
  Lv2TestHost host(kRate, kBlock);
  test::rt_trap::reset();
  host.set_property(0, "text", first + " " + second + " " + first);
  host.run_blocks(4, Mode::realtime);
  host.note_on(0);
  // One second into its audio, with the block before sounding (not an underrun of a loaded machine), a
  // note-on at frame 128 of a block.
  ASSERT_TRUE(host.run_until([&] { return first_nonzero(host.audio(), 0) + 48000 < host.samples() && sounding(host); },
                             20, Mode::realtime))
      << log_of(host);
  const uint64_t block_start = host.samples();
  constexpr uint32_t kAt = 128;
  host.note_on(kAt);
  host.run_block(Mode::realtime);
  const auto& out = host.audio();
  const uint64_t cut = block_start + kAt;
  for (uint64_t i = cut + kFade; i < block_start + kBlock; ++i)
    ASSERT_EQ(out[i], 0.0f) << "sample " << i - block_start << " of the block: the first speech went on after the note-on";
  ASSERT_TRUE(host.run_until_utterance_ends(20, Mode::realtime)) << log_of(host);
  host.run_blocks(10, Mode::realtime);
  const auto ends = host.notifications_of("#UtteranceEnd");
  ASSERT_EQ(ends.size(), 2u);
  EXPECT_EQ(ends[0].strings.at(kNs + "status"), "stopped");
  EXPECT_EQ(ends[0].sample, cut) << "the stop is reported at the note-on's frame";
  EXPECT_EQ(ends[0].numbers.at(kNs + "cue"), 0) << "the cue that was stopped";
  EXPECT_EQ(ends[1].strings.at(kNs + "status"), "spoken");
  // Nothing of the first sentence after the cut: what follows is the second sentence alone.
  expect_engine_speech(host.audio(), block_start + kBlock, host.samples(), wanted_second, "after the barge-in");
  const uint64_t resumed = first_nonzero(host.audio(), block_start + kBlock);
  std::printf("[measured] barge-in: silent from frame %u + %u of the block; the new sentence after %.0f ms\n", kAt,
              kFade, 1e3 * double(resumed - cut) / kRate);

  // All notes off (CC 123) stops too, within the block.
  const uint64_t third_note = host.samples();
  host.note_on(0);
  ASSERT_TRUE(host.run_until(
      [&] { return first_nonzero(host.audio(), third_note) + 24000 < host.samples() && sounding(host); }, 20,
      Mode::realtime))
      << log_of(host);
  const uint64_t off_block = host.samples();
  host.all_notes_off(64);
  host.run_blocks(3, Mode::realtime);
  for (uint64_t i = off_block + 64 + kFade; i < host.samples(); ++i)
    ASSERT_EQ(host.audio()[i], 0.0f) << "sound after all-notes-off";
  EXPECT_EQ(host.notifications_of("#UtteranceEnd").back().strings.at(kNs + "status"), "stopped");
  EXPECT_EQ(test::rt_trap::violations(), 0u) << test::rt_trap::report();
}


TEST(Lv2Plugin, FreewheelRendersWhatRealTimePlays) {
  const std::string text = "Offline export must sound exactly like the live take. Nothing is dropped.";
  test::Watchdog watchdog(180, "plugin freewheel test");
  Lv2TestHost host(kRate, kBlock);
  host.set_property(0, "text", text);
  host.run_blocks(4, Mode::realtime);
  const uint64_t live_note = host.samples();
  host.note_on(0);
  ASSERT_TRUE(host.run_until_utterance_ends(20, Mode::realtime)) << log_of(host);
  host.run_blocks(4, Mode::realtime);
  const uint64_t live_end = host.samples();

  // Program change 0: the next note-on speaks the first sentence again, now offline.
  host.midi(0, {0xC0, 0});
  host.run_block(Mode::realtime);
  const uint64_t offline_note = host.samples() + 37;
  host.note_on(37);
  const auto offline_start = std::chrono::steady_clock::now();
  ASSERT_TRUE(host.run_until_utterance_ends(20, Mode::freewheel)) << log_of(host);
  const double offline_wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - offline_start).count();
  host.run_blocks(4, Mode::freewheel);

  const auto& out = host.audio();
  const auto live = test::nonzero_samples(out.data() + live_note, live_end - live_note);
  const auto offline = test::nonzero_samples(out.data() + offline_note, out.size() - offline_note);
  ASSERT_FALSE(live.empty());
  ASSERT_EQ(live.size(), offline.size()) << "offline and live renders differ in length";
  std::size_t differing = 0;
  for (std::size_t i = 0; i < live.size(); ++i) differing += live[i] != offline[i];
  EXPECT_EQ(differing, 0u) << "samples differ between the live and the offline render";
  const auto ends = host.notifications_of("#UtteranceEnd");
  ASSERT_EQ(ends.size(), 2u);
  EXPECT_EQ(ends[1].numbers.at(kNs + "underrunFrames"), 0) << "freewheel inserted silence";
  // Offline, the speech starts at the note-on's frame (the engine's first samples are not exact zeros).
  const uint64_t onset = first_nonzero(out, offline_note);
  EXPECT_LE(onset - offline_note, 2u) << "offline speech starts late";
  // Offline the speech is contiguous: from its first to its last sample it is the live speech's samples.
  uint64_t last = out.size();
  while (last > onset && out[last - 1] == 0.0f) --last;
  std::printf("[measured] live take: %zu samples of speech, %lld underrun frames; offline: identical, starts at the "
              "note-on frame +%llu, spans %llu samples, rendered in %.2f s (%.2fx real time)\n",
              live.size(), static_cast<long long>(ends[0].numbers.at(kNs + "underrunFrames")),
              static_cast<unsigned long long>(onset - offline_note), static_cast<unsigned long long>(last - onset),
              offline_wall, double(last - offline_note) / kRate / offline_wall);
}

TEST(Lv2Plugin, StateRoundTripsTextFileVoiceAndSpeed) {
  test::TempDir dir;
  const std::string path = dir.file("lines.txt");
  std::ofstream(path) << "Read from the file.\nIts second line.\n";
  EngineReference reference;
  const auto wanted = reference.speak("Read from the file.", "bf_emma", 1.25f);
  test::Watchdog watchdog(180, "plugin state test");

  Lv2TestHost a(kRate, kBlock);
  a.set_property(0, "text", "The text property.");
  a.set_property(0, "file", path);
  a.set_control("voice", static_cast<float>(voice_index("bf_emma")));
  a.set_control("speed", 1.25f);
  a.run_blocks(2, Mode::realtime);
  a.get_properties(0);
  ASSERT_TRUE(a.run_until([&] { return a.notifications_of("#Set").size() >= 2; }, 2, Mode::realtime)) << log_of(a);
  const std::string state = a.save_state();
  EXPECT_NE(state.find("The text property."), std::string::npos) << state;
  EXPECT_NE(state.find("lines.txt"), std::string::npos) << state;

  Lv2TestHost b(kRate, kBlock);
  b.restore_state(state);
  EXPECT_EQ(b.control("voice"), static_cast<float>(voice_index("bf_emma")));
  EXPECT_EQ(b.control("speed"), 1.25f);
  b.get_properties(0);
  ASSERT_TRUE(b.run_until([&] { return b.notifications_of("#Set").size() >= 2; }, 2, Mode::realtime)) << log_of(b);
  std::map<std::string, std::string> restored;
  for (const auto& s : b.notifications_of("#Set"))
    restored[s.strings.at("http://lv2plug.in/ns/ext/patch#property")] = s.strings.at("http://lv2plug.in/ns/ext/patch#value");
  EXPECT_EQ(restored[kNs + "text"], "The text property.");
  EXPECT_EQ(restored[kNs + "file"], path);

  // Both instances now speak the file's first line with bf_emma at 1.25: the same samples.
  for (Lv2TestHost* h : {&a, &b}) {
    h->note_on(0);
    ASSERT_TRUE(h->run_until_utterance_ends(20, Mode::freewheel)) << log_of(*h);
  }
  const auto heard_a = test::nonzero_samples(a.audio().data(), a.audio().size());
  const auto heard_b = test::nonzero_samples(b.audio().data(), b.audio().size());
  EXPECT_TRUE(heard_a == heard_b) << "the restored instance speaks differently (" << heard_a.size() << " vs "
                                  << heard_b.size() << " samples)";
  expect_engine_speech(b.audio(), 0, b.audio().size(), wanted, "restored instance, file line 1, bf_emma x1.25");
  EXPECT_EQ(words_of(b), "Read from the file");

  // With the file cleared, note-ons speak the text property again.
  b.set_property(0, "file", "");
  b.run_blocks(2, Mode::realtime);
  const uint64_t from = b.samples();
  b.note_on(0);
  ASSERT_TRUE(b.run_until_utterance_ends(20, Mode::freewheel)) << log_of(b);
  EXPECT_EQ(words_of(b, from), "The text property");
}

TEST(Lv2Plugin, MissingModelInstantiatesSilentWithOneMessage) {
  struct ModelElsewhere {  // set for this test only (several tests may share a process)
    ModelElsewhere() { ::setenv("KOKORO_MODEL", "/nonexistent/kokoro-v1_0.kokoro", 1); }
    ~ModelElsewhere() { ::unsetenv("KOKORO_MODEL"); }
  } model_elsewhere;
  test::Watchdog watchdog(60, "plugin missing-model test");
  Lv2TestHost host(kRate, kBlock);
  test::rt_trap::reset();
  host.set_property(0, "text", "Nothing can be said.");
  host.run_blocks(4, Mode::realtime);
  host.note_on(0);
  ASSERT_TRUE(host.run_until_utterance_ends(5, Mode::realtime)) << "the note-on was not answered\n" << log_of(host);
  host.run_blocks(50, Mode::realtime);
  EXPECT_EQ(test::rt_trap::violations(), 0u) << test::rt_trap::report();
  for (float s : host.audio()) ASSERT_EQ(s, 0.0f) << "sound without a model";
  const auto log = host.log();
  ASSERT_EQ(log.size(), 1u) << "one clear message, not one per note:\n" << log_of(host);
  EXPECT_NE(log[0].find("#Error"), std::string::npos) << log[0];
  EXPECT_NE(log[0].find("no model"), std::string::npos) << log[0];
  EXPECT_NE(log[0].find("/nonexistent/kokoro-v1_0.kokoro"), std::string::npos) << "the message names the file: " << log[0];
  const auto messages = host.notifications_of("#Message");
  ASSERT_EQ(messages.size(), 1u);
  EXPECT_NE(messages[0].strings.at("http://www.w3.org/2000/01/rdf-schema#comment").find("no model"), std::string::npos);
  EXPECT_EQ(host.notifications_of("#UtteranceEnd")[0].strings.at(kNs + "status"), "error");
  std::printf("[measured] without a model: %s\n", log[0].c_str());
}

TEST(Lv2Plugin, BadInputIsReportedNotFatal) {
  test::TempDir dir;
  test::Watchdog watchdog(120, "plugin bad-input test");
  Lv2TestHost host(kRate, kBlock);
  test::rt_trap::reset();
  std::size_t logged = 0;
  // Each step: what the host sends, then the reason the plugin must log; nothing may sound.
  const auto expect_logged = [&](const std::string& what, const std::string& reason) {
    host.run_blocks(8, Mode::realtime);
    ASSERT_TRUE(host.wait_for_log(logged + 1, 5)) << what << ": nothing logged\n" << log_of(host);
    host.run_blocks(2, Mode::realtime);
    const auto log = host.log();
    EXPECT_NE(log[logged].find(reason), std::string::npos) << what << ": logged \"" << log[logged] << "\"";
    logged = log.size();
  };
  host.note_on(0);
  expect_logged("a note before any text", "no text to speak");
  host.set_property(0, "text", std::string("caf\xC3 \xFF\xFE"));
  expect_logged("invalid UTF-8", "not valid UTF-8 (invalid UTF-8 at byte 3)");
  host.note_on(0);
  expect_logged("a note after the invalid text (kept the empty one)", "no text to speak");
  host.set_property(0, "text", "   \n\n  ");
  host.run_blocks(4, Mode::realtime);
  host.note_on(0);
  expect_logged("blank text", "no text to speak");
  host.set_property(0, "file", "/nonexistent/lines.txt");
  expect_logged("a missing file", "cannot read the file /nonexistent/lines.txt");
  host.note_on(0);
  expect_logged("a note with the file missing", "cannot read the file /nonexistent/lines.txt");
  const std::string huge = dir.file("huge.txt");
  {
    std::ofstream f(huge);
    const std::string line(1023, 'a');
    for (int i = 0; i < 9 * 1024; ++i) f << line << "\n";
  }
  host.set_property(0, "file", huge);
  expect_logged("a 9 MiB file", "more than the 8388608 this plugin reads");
  host.set_property(0, "file", dir.path());
  expect_logged("a directory as the file", "is not a regular file");
  EXPECT_EQ(test::rt_trap::violations(), 0u) << test::rt_trap::report();
  for (float s : host.audio()) ASSERT_EQ(s, 0.0f) << "sound from bad input";
  EXPECT_EQ(host.notifications_of("#Message").size(), logged) << "each logged reason is also a notification";

  // A long text that fits the port (60 kB) is taken: the next note-on speaks its first sentence.
  std::string longer;
  while (longer.size() < 60000) longer += "One more sentence of a long script. ";
  host.set_property(0, "file", "");
  host.set_property(0, "text", longer);
  host.run_blocks(4, Mode::realtime);
  host.note_on(0);
  ASSERT_TRUE(host.run_until_utterance_ends(20, Mode::realtime)) << log_of(host);
  EXPECT_EQ(words_of(host), "One more sentence of a long script");
  EXPECT_EQ(test::rt_trap::violations(), 0u) << test::rt_trap::report();
}

TEST(Lv2Plugin, ContinuousSpeaksTheWholeTextAndSsmlMarksArrive) {
  test::Watchdog watchdog(120, "plugin continuous/SSML test");
  Lv2TestHost host(kRate, kBlock);
  host.set_control("continuous", 1.0f);
  host.set_property(0, "text", "First sentence here. Second one follows.");
  host.run_blocks(2, Mode::realtime);
  host.note_on(0);
  ASSERT_TRUE(host.run_until_utterance_ends(20, Mode::freewheel)) << log_of(host);
  EXPECT_EQ(words_of(host), "First sentence here Second one follows");
  EXPECT_EQ(host.notifications_of("#UtteranceStart")[0].numbers.at(kNs + "cue"), -1) << "the whole text, no cue";
  ASSERT_FALSE(host.notifications_of("#SegmentEnd").empty());
  EXPECT_EQ(host.notifications_of("#SegmentStart")[0].numbers.at(kNs + "textBegin"), 0);

  // SSML: one cue however many sentences it holds; its <mark> arrives where it is in the audio.
  host.set_control("continuous", 0.0f);
  const std::string ssml = "<speak>Before the mark. <mark name=\"cue-b\"/>After it.</speak>";
  host.set_property(0, "text", ssml);
  host.run_blocks(2, Mode::realtime);
  const uint64_t from = host.samples();
  host.note_on(0);
  ASSERT_TRUE(host.run_until_utterance_ends(20, Mode::freewheel)) << log_of(host);
  EXPECT_EQ(words_of(host, from), "Before the mark After it");
  const auto marks = host.notifications_of("#Mark");
  ASSERT_EQ(marks.size(), 1u);
  EXPECT_EQ(marks[0].strings.at("http://www.w3.org/2000/01/rdf-schema#label"), "cue-b");
  uint64_t mark_word = 0, after_word = 0;
  for (const auto& w : host.notifications_of("#Word")) {
    const auto& label = w.strings.at("http://www.w3.org/2000/01/rdf-schema#label");
    if (w.sample >= from && label == "mark") mark_word = w.sample;
    if (w.sample >= from && label == "After") after_word = w.sample;
  }
  EXPECT_GT(marks[0].sample, mark_word);
  EXPECT_LE(marks[0].sample, after_word);
  EXPECT_EQ(host.notifications_of("#Word").back().numbers.at(kNs + "textBegin"),
            static_cast<int64_t>(ssml.find("it.</speak>"))) << "offsets point into the SSML source";
}

TEST(Lv2Plugin, SpeaksAtTheHostsRate) {
  const std::string line = "Any sample rate will do.";
  EngineReference reference;
  test::Watchdog watchdog(120, "plugin sample-rate test");
  for (const double rate : {44100.0, 96000.0, 24000.0}) {
    const auto wanted = reference.speak(line, "af_heart", 1.0f, rate);
    Lv2TestHost host(rate, 512);
    host.set_property(0, "text", line);
    host.run_blocks(2, Mode::realtime);
    host.note_on(0);
    ASSERT_TRUE(host.run_until_utterance_ends(20, Mode::freewheel)) << log_of(host);
    expect_engine_speech(host.audio(), 0, host.samples(), wanted,
                         "at " + std::to_string(static_cast<int>(rate)) + " Hz, 512-frame blocks", rate);
  }
}

TEST(Lv2Plugin, VoicePortOffersEveryVoiceOfTheEngine) {
  Lv2TestHost host(kRate, kBlock);
  const auto points = host.scale_points("voice");
  kokoro_engine* engine = kokoro_open(nullptr);
  ASSERT_NE(engine, nullptr) << kokoro_last_error();
  const char* const* names = nullptr;
  size_t count = 0;
  ASSERT_EQ(kokoro_list_voices(engine, &names, &count), KOKORO_OK);
  std::set<std::string> engine_voices(names, names + count);
  kokoro_close(engine);
  ASSERT_EQ(points.size(), engine_voices.size()) << "every voice of the assets is a scale point";
  for (std::size_t i = 0; i < points.size(); ++i) {
    EXPECT_EQ(points[i].first, static_cast<float>(i)) << "scale point values are 0..N-1 in voices.txt's order";
    EXPECT_TRUE(engine_voices.count(points[i].second)) << points[i].second << " is not a voice of the engine";
  }
  EXPECT_EQ(host.control("voice"), static_cast<float>(voice_index("af_heart"))) << "af_heart is the default";
}

}  // namespace
}  // namespace kokoro
