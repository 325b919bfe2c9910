// kokoro-jack and kokoro-say on a real JACK server, run as a user runs them: a private `jackd -d dummy`
// (48 kHz, 256-frame periods), the app as a child process, and a capture client of the test connected to
// the app's port. Text goes in through the named pipe and standard input (or a tmux terminal for
// kokoro-say); what arrives at the capture client is compared with what the engine produces for the same
// text. Label jack: these run one at a time (they assert xruns == 0).
//
// Timings (time to first audio through JACK, callback times) are printed as [measured] lines, not asserted.
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <regex>

#include "app_test_support.h"
#include "audio_test_support.h"

namespace kokoro {
namespace {

using test::ChildProcess;

constexpr int kRate = 48000;
constexpr int kPeriod = 256;

const std::string kJack = KOKORO_JACK_BIN;
const std::string kSay = KOKORO_SAY_BIN;

// The speech the engine produces for each text, computed once for the whole binary (model loading and
// synthesis take a few seconds) and before any server runs, so that it cannot cause xruns.
const test::ReferenceSpeech& reference() {
  static const test::ReferenceSpeech r;
  return r;
}

// Writes one line into the named pipe as a separate writer (open, write, close), like `echo ... > fifo`.
void write_fifo(const std::string& path, const std::string& line) {
  const int fd = ::open(path.c_str(), O_WRONLY | O_CLOEXEC);  // blocks until kokoro-jack has it open
  ASSERT_GE(fd, 0) << "cannot open " << path;
  const std::string text = line + "\n";
  ASSERT_EQ(::write(fd, text.data(), text.size()), static_cast<ssize_t>(text.size()));
  ::close(fd);
}

// Collects the capture until `quiet_seconds` of exact silence follow some audio after `from`.
bool wait_until_speech_ends(test::JackCapture& capture, std::size_t from, double quiet_seconds, double timeout) {
  const std::size_t quiet = static_cast<std::size_t>(quiet_seconds * kRate);
  return test::wait_until(timeout, [&] {
    capture.collect();
    const auto& v = capture.captured(1);
    if (test::first_above(v, 0.0f, from) == v.size() || v.size() < from + quiet) return false;
    for (std::size_t i = v.size() - quiet; i < v.size(); ++i)
      if (v[i] != 0.0f) return false;
    return true;
  });
}

// Waits until sound is playing right now (the newest captured period is not silent), after `from`.
bool wait_audible(test::JackCapture& capture, std::size_t from, double timeout) {
  return test::wait_until(timeout, [&] {
    capture.collect();
    const auto& v = capture.captured(1);
    if (v.size() < from + kPeriod) return false;
    for (std::size_t i = v.size() - kPeriod; i < v.size(); ++i)
      if (v[i] != 0.0f) return true;
    return false;
  });
}

struct UtteranceCheck {
  double ttfa_ms = 0;  // from handing the line over to the first sample at the capture port
};

// Checks one utterance captured in [from, to): it arrived, its non-silent samples are the engine's speech
// for `text` resampled to 48 kHz (same length within 2 ms, correlation > 0.99), most of its energy lies in
// the speech band. `from` is the capture position when the line was handed over.
UtteranceCheck check_utterance(const std::vector<float>& captured, std::size_t from, std::size_t to,
                               const std::string& text) {
  UtteranceCheck c;
  const std::size_t onset = test::first_above(captured, 0.0f, from);
  EXPECT_LT(onset, to) << "no audio arrived for \"" << text << "\"";
  if (onset >= to) return c;
  c.ttfa_ms = 1e3 * double(onset - from) / kRate;

  const auto expected = test::expected_output(reference().speak(text), 24000, kRate, ResampleQuality::medium);
  const auto heard = test::nonzero_samples(captured.data() + onset, to - onset);
  const auto wanted = test::nonzero_samples(expected.data(), expected.size());
  EXPECT_NEAR(double(heard.size()) / kRate, double(wanted.size()) / kRate, 0.002)
      << "duration of \"" << text << "\" differs from the engine's";
  const std::size_t n = std::min(heard.size(), wanted.size());
  const double corr = test::correlation(heard.data(), wanted.data(), n);
  EXPECT_GT(corr, 0.99) << "the audio of \"" << text << "\" is not the engine's speech";
  const double speech_band = test::band_energy_fraction(heard, kRate, 80, 5000);
  EXPECT_GT(speech_band, 0.9) << "energy outside the speech band";
  std::printf("[measured] \"%s\": %.2f s, TTFA through JACK %.0f ms, correlation with the engine %.6f, "
              "energy in 80-5000 Hz %.3f\n", text.c_str(), double(heard.size()) / kRate, c.ttfa_ms, corr, speech_band);
  return c;
}

// "xruns N so far, underruns M, worst callback W us" from each status line.
struct StatusCounters {
  int xruns = 0, underruns = 0;
  double worst_callback_us = -1;
};
std::vector<StatusCounters> status_counters(const std::string& out) {
  std::vector<StatusCounters> v;
  static const std::regex re(R"(xruns (\d+) so far, underruns (\d+)(, worst callback (\d+) us)?)");
  for (auto it = std::sregex_iterator(out.begin(), out.end(), re); it != std::sregex_iterator(); ++it)
    v.push_back({std::stoi((*it)[1]), std::stoi((*it)[2]), (*it)[4].matched ? std::stod((*it)[4]) : -1.0});
  return v;
}

TEST(KokoroJack, SpeaksLinesFromTheFifoAndStdinIntoJack) {
  const std::vector<std::string> lines = {"Hello from the named pipe.", "Standard input works too.",
                                          "A second writer, after the first one closed."};
  for (const auto& l : lines) reference().speak(l);  // warm: synthesize before the server runs
  test::Watchdog watchdog(120, "kokoro-jack fifo/stdin test");
  test::JackTestServer server(kRate, kPeriod);
  test::TempDir dir;
  const std::string fifo = dir.file("kokoro.fifo");
  ChildProcess app({kJack, "--fifo", fifo, "--name", "kj-test", "--mode", "exact", "--precision", "fp32"});
  ASSERT_TRUE(app.wait_output("kokoro-jack: ready", 30, true)) << app.describe();
  struct stat st {};
  ASSERT_EQ(::stat(fifo.c_str(), &st), 0);
  EXPECT_TRUE(S_ISFIFO(st.st_mode)) << "the named pipe must be created";

  test::JackCapture capture(server.name(), 1);
  ASSERT_TRUE(capture.connect("kj-test:out_1", 1));
  std::vector<std::size_t> starts;
  for (std::size_t i = 0; i < lines.size(); ++i) {
    capture.collect();
    starts.push_back(capture.captured(1).size());
    if (i == 1) {
      app.write_stdin(lines[i] + "\n");
    } else {
      write_fifo(fifo, lines[i]);  // the second fifo line comes from a new writer: the pipe was reopened
    }
    ASSERT_TRUE(app.wait_output("[spoken]", 30, false, static_cast<int>(i + 1))) << app.describe();
    ASSERT_TRUE(wait_until_speech_ends(capture, starts.back(), 0.3, 10)) << app.describe();
  }
  capture.collect();
  starts.push_back(capture.captured(1).size());
  const std::string out = app.out();
  std::vector<int> status_ttfa;
  static const std::regex ttfa_re(R"(first audio after (\d+) ms)");
  for (auto it = std::sregex_iterator(out.begin(), out.end(), ttfa_re); it != std::sregex_iterator(); ++it)
    status_ttfa.push_back(std::stoi((*it)[1]));
  for (std::size_t i = 0; i < lines.size(); ++i) {
    const UtteranceCheck c = check_utterance(capture.captured(1), starts[i], starts[i + 1], lines[i]);
    if (i < status_ttfa.size())
      std::printf("[measured] TTFA at the capture port %.0f ms, in kokoro-jack's status line %d ms\n", c.ttfa_ms,
                  status_ttfa[i]);
  }

  // One status line per utterance, in order, with the text and the counters.
  for (const auto& l : lines) EXPECT_NE(out.find("\"" + l + "\""), std::string::npos) << out;
  const auto counters = status_counters(out);
  ASSERT_EQ(counters.size(), lines.size()) << out;
  // kokoro-jack's counters are the server's since start: the last status line holds them all.
  EXPECT_GE(counters.back().worst_callback_us, 0) << "the status line must give the longest callback\n" << out;
  const double period_us = 1e6 * kPeriod / kRate;
  const std::vector<test::TimedClient> timed = {{"kj-test", counters.back().worst_callback_us, period_us},
                                                {"kokoro-capture", capture.worst_callback_us(), period_us}};
  test::expect_no_client_xruns(static_cast<unsigned long long>(counters.back().xruns), server, "kokoro-jack", timed);
  test::expect_no_client_xruns(capture.xruns(), server, "capture client", timed);
  std::printf("[measured] kokoro-jack's longest callback %.0f us (period %.0f us); underruns per utterance "
              "(synthesis slower than playback on a busy machine):", counters.back().worst_callback_us, period_us);
  for (const auto& c : counters) std::printf(" %d", c.underruns);
  std::printf("\n");

  // Mono auto-connect (the default) went to the dummy driver's playback ports.
  jack_port_t* out1 = jack_port_by_name(capture.client(), "kj-test:out_1");
  ASSERT_NE(out1, nullptr);
  EXPECT_TRUE(jack_port_connected_to(out1, "system:playback_1"));

  app.signal(SIGTERM);
  const auto status = app.wait_exit(5);
  ASSERT_TRUE(status) << "kokoro-jack did not exit within 5 s of SIGTERM\n" << app.describe();
  EXPECT_EQ(ChildProcess::exit_code(*status), 0) << app.describe();
  EXPECT_NE(app.err().find("terminated, exiting"), std::string::npos) << app.describe();
}

// The server dies in the middle of an utterance: kokoro-jack says so and exits with status 3, quickly.
TEST(KokoroJack, ServerKilledMidSpeechGivesACleanErrorExit) {
  test::Watchdog watchdog(60, "kokoro-jack server-kill test");
  test::JackTestServer server(kRate, kPeriod);
  ChildProcess app({kJack, "--name", "kj-kill", "--no-autoconnect"});
  ASSERT_TRUE(app.wait_output("kokoro-jack: ready", 30, true)) << app.describe();
  auto capture = std::make_unique<test::JackCapture>(server.name(), 1);
  ASSERT_TRUE(capture->connect("kj-kill:out_1", 1));
  app.write_stdin("This sentence is long enough to be still playing when the audio server goes away without warning.\n");
  ASSERT_TRUE(test::wait_until(30, [&] {
    capture->collect();
    return test::first_above(capture->captured(1), 0.0f) < capture->captured(1).size();
  })) << "no audio arrived\n" << app.describe();

  server.kill(SIGKILL);
  const auto killed = std::chrono::steady_clock::now();
  ASSERT_TRUE(server.wait_exit(5));
  const auto status = app.wait_exit(10);
  const double exit_s = test::seconds_since(killed);
  ASSERT_TRUE(status) << "kokoro-jack still running 10 s after the server died (a hang)\n" << app.describe();
  EXPECT_EQ(ChildProcess::exit_code(*status), 3) << app.describe();
  const std::string err = app.err();
  EXPECT_NE(err.find("lost the JACK server"), std::string::npos) << err;
  EXPECT_NE(err.find("JACK server shut down"), std::string::npos) << err;
  EXPECT_EQ(err.find("unexpected"), std::string::npos) << err;
  std::printf("[measured] kokoro-jack exited %.0f ms after the server was killed\n", exit_s * 1e3);
  capture.reset();  // a zombie client of the dead server: closing it must not hang either (watchdog)
}

// `jackd` started by hand under a given name (the test server's, after that one was killed), for the
// reconnect test; killed by the destructor.
class ManualJackd {
 public:
  explicit ManualJackd(const std::string& name)
      : name_(name), proc_({"jackd", "-n", name, "-d", "dummy", "-r", std::to_string(kRate), "-p", std::to_string(kPeriod)}) {
    proc_.close_stdin();
  }
  ~ManualJackd() {
    proc_.signal(SIGTERM);
    if (!proc_.wait_exit(5)) proc_.signal(SIGKILL);
  }
  bool wait_ready(double seconds) {
    return test::wait_until(seconds, [&] {
      jack_status_t st{};
      jack_client_t* c = jack_client_open("kokoro-probe", static_cast<jack_options_t>(JackNoStartServer | JackServerName),
                                          &st, name_.c_str());
      if (c) jack_client_close(c);
      return c != nullptr;
    });
  }

 private:
  std::string name_;
  ChildProcess proc_;
};

TEST(KokoroJack, ReconnectWaitsForTheServerAndSpeaksAgain) {
  const std::string line = "Back again.";
  reference().speak(line);
  test::Watchdog watchdog(90, "kokoro-jack reconnect test");
  test::JackTestServer server(kRate, kPeriod);
  ChildProcess app({kJack, "--name", "kj-re", "--no-autoconnect", "--reconnect", "--mode", "exact", "--precision", "fp32"});
  ASSERT_TRUE(app.wait_output("kokoro-jack: ready", 30, true)) << app.describe();

  server.kill(SIGKILL);
  ASSERT_TRUE(server.wait_exit(5));
  ASSERT_TRUE(app.wait_output("waiting for JACK server", 10, true)) << app.describe();
  EXPECT_TRUE(app.running()) << app.describe();

  ManualJackd restarted(server.name());  // same name, so the client finds it again
  ASSERT_TRUE(restarted.wait_ready(15));
  ASSERT_TRUE(app.wait_output("kokoro-jack: reconnected", 15, true)) << app.describe();
  test::JackCapture capture(server.name(), 1);
  ASSERT_TRUE(capture.connect("kj-re:out_1", 1));
  capture.collect();
  const std::size_t from = capture.captured(1).size();
  app.write_stdin(line + "\n");
  ASSERT_TRUE(app.wait_output("[spoken]", 30)) << app.describe();
  ASSERT_TRUE(wait_until_speech_ends(capture, from, 0.3, 10)) << app.describe();
  capture.collect();
  check_utterance(capture.captured(1), from, capture.captured(1).size(), line);

  app.signal(SIGINT);
  const auto status = app.wait_exit(5);
  ASSERT_TRUE(status) << app.describe();
  EXPECT_EQ(ChildProcess::exit_code(*status), 0) << app.describe();
  EXPECT_NE(app.err().find("interrupted, exiting"), std::string::npos) << app.describe();
}

// kokoro-say in a terminal (tmux) on JACK: a typed line is heard, Ctrl-C silences the line being spoken,
// the prompt keeps working, and a second Ctrl-C exits with status 130.
TEST(KokoroSayOnJack, InteractiveLineCtrlCStopsSecondCtrlCExits) {
  const std::string first = "Hello there.";
  reference().speak(first);
  test::Watchdog watchdog(120, "kokoro-say tmux test");
  test::JackTestServer server(kRate, kPeriod);
  test::TmuxSession tmux(test::shell_quote(kSay) + " --output jack --jack-name ks-tty --mode exact --precision fp32",
                         {"JACK_DEFAULT_SERVER=" + server.name(), "JACK_NO_START_SERVER=1"});
  ASSERT_TRUE(tmux.wait_screen("Type a line and press Enter", 30)) << tmux.screen();
  ASSERT_NE(tmux.screen().find("output JACK client ks-tty"), std::string::npos) << tmux.screen();
  test::JackCapture capture(server.name(), 1);
  ASSERT_TRUE(capture.connect("ks-tty:out_1", 1));

  // A line, spoken as soon as Enter is pressed.
  capture.collect();
  const std::size_t from = capture.captured(1).size();
  tmux.type_line(first);
  ASSERT_TRUE(tmux.wait_screen("[spoken]", 30)) << tmux.screen();
  ASSERT_TRUE(wait_until_speech_ends(capture, from, 0.3, 10)) << tmux.screen();
  capture.collect();
  check_utterance(capture.captured(1), from, capture.captured(1).size(), first);

  // A long line; Ctrl-C once it is audible stops it.
  capture.collect();
  const std::size_t long_from = capture.captured(1).size();
  tmux.type_line("This is a long sentence, and it goes on and on, so that there is plenty of time to stop it "
                 "with control C long before it would have ended by itself.");
  ASSERT_TRUE(wait_audible(capture, long_from, 30)) << tmux.screen();
  capture.collect();
  const std::size_t at_ctrl_c = capture.captured(1).size();  // before sending: kokoro-say reacts within ms
  tmux.send_keys({"C-c"});
  ASSERT_TRUE(tmux.wait_screen("(stopped; Ctrl-C again to exit)", 10)) << tmux.screen();
  ASSERT_TRUE(tmux.wait_screen("[stopped]", 30)) << tmux.screen();
  ASSERT_TRUE(wait_until_speech_ends(capture, long_from, 1.0, 10)) << "the audio did not stop\n" << tmux.screen();
  capture.collect();
  const auto& v = capture.captured(1);
  std::size_t last_sound = v.size();
  while (last_sound > at_ctrl_c && v[last_sound - 1] == 0.0f) --last_sound;
  const double stop_ms = 1e3 * double(last_sound - at_ctrl_c) / kRate;
  std::printf("[measured] kokoro-say: sound ended %.0f ms after Ctrl-C was sent to tmux\n", stop_ms);
  EXPECT_LT(stop_ms, 1000) << "Ctrl-C must silence the utterance, not let it run on";
  EXPECT_TRUE(tmux.wait_exit(0.2) == std::nullopt) << "one Ctrl-C while speaking must not exit";

  // Another long line, and Ctrl-C twice in a row: the second exits even while the segment under synthesis
  // is not finished yet.
  capture.collect();
  const std::size_t again_from = capture.captured(1).size();
  tmux.type_line("Once more, a sentence that is long enough to be interrupted twice in a row by the impatient user.");
  ASSERT_TRUE(wait_audible(capture, again_from, 30)) << tmux.screen();
  tmux.send_keys({"C-c"});
  ASSERT_TRUE(tmux.wait_screen("(stopped; Ctrl-C again to exit)", 10, 2)) << tmux.screen();
  tmux.send_keys({"C-c"});
  const auto status = tmux.wait_exit(10);
  ASSERT_TRUE(status) << "kokoro-say did not exit on the second Ctrl-C\n" << tmux.screen();
  EXPECT_EQ(*status, 130) << tmux.screen();
  // kokoro-say's status lines carry the JACK counters like kokoro-jack's: the last one has them all.
  const auto counters = status_counters(tmux.screen());
  ASSERT_FALSE(counters.empty()) << "kokoro-say on JACK must report its xruns and longest callback\n" << tmux.screen();
  const double period_us = 1e6 * kPeriod / kRate;
  const std::vector<test::TimedClient> timed = {{"ks-tty", counters.back().worst_callback_us, period_us},
                                                {"kokoro-capture", capture.worst_callback_us(), period_us}};
  test::expect_no_client_xruns(static_cast<unsigned long long>(counters.back().xruns), server, "kokoro-say", timed);
  test::expect_no_client_xruns(capture.xruns(), server, "capture client", timed);
}

// kokoro-say speaking on JACK when the server dies: a clear message and status 1, no hang.
TEST(KokoroSayOnJack, ServerKilledMidSpeechGivesAClearMessage) {
  test::Watchdog watchdog(60, "kokoro-say server-kill test");
  test::JackTestServer server(kRate, kPeriod);
  ChildProcess app({kSay, "--output", "jack", "--jack-name", "ks-kill",
                    "This sentence is long enough to be still playing when the audio server goes away."});
  ASSERT_TRUE(app.wait_output("output JACK client ks-kill", 30, true)) << app.describe();
  test::JackCapture capture(server.name(), 1);
  ASSERT_TRUE(capture.connect("ks-kill:out_1", 1));
  ASSERT_TRUE(test::wait_until(30, [&] {
    capture.collect();
    return test::first_above(capture.captured(1), 0.0f) < capture.captured(1).size();
  })) << app.describe();
  server.kill(SIGKILL);
  const auto status = app.wait_exit(10);
  ASSERT_TRUE(status) << "kokoro-say still running 10 s after the server died\n" << app.describe();
  EXPECT_EQ(ChildProcess::exit_code(*status), 1) << app.describe();
  EXPECT_NE(app.err().find("JACK server shut down"), std::string::npos) << app.describe();
}

}  // namespace
}  // namespace kokoro
