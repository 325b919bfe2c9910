// kokoro-jack: a long-running JACK client that speaks every line it reads, from standard input and from a
// named pipe, and prints one status line per utterance.
//
//   kokoro-jack --fifo /tmp/kokoro.fifo &            then, from anywhere:  echo "Hello." > /tmp/kokoro.fifo
//   some-program | kokoro-jack --voice bf_emma --no-autoconnect --name announcer
//
// The pipe is created if missing and reopened after each writer closes it, so any number of writers can
// take turns. Without --fifo, the end of standard input ends the program once everything is spoken; with
// --fifo it runs until SIGINT/SIGTERM. If the JACK server goes away, kokoro-jack says so and exits with
// status 3, or with --reconnect waits for the server to come back (retrying every second).
#include <spdlog/spdlog.h>
#include <CLI/CLI.hpp>
#include <fcntl.h>
#include <poll.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "apps/common/line_reader.h"
#include "apps/common/report.h"
#include "apps/common/shutdown.h"
#include "apps/common/speech_options.h"
#include "core/error.h"
#include "engine/speaker.h"
#include "realtime/audio_sink.h"
#include "apps/common/malloc_tuning.h"

namespace {

constexpr int kExitServerLost = 3;
constexpr const char* kApp = "kokoro-jack";

std::atomic<int> g_quit_signal{0};
void on_quit_signal(int sig) { g_quit_signal.store(sig); }

struct Options {
  kokoro::app::SpeechOptions speech;
  std::string client_name = "kokoro", server, fifo;
  bool autoconnect = true, stereo = false, reconnect = false, interrupt = false, quiet = false, verbose = false;
};

// A named pipe read without blocking; reopened whenever its last writer has closed it.
class Fifo {
 public:
  explicit Fifo(std::string path) : path_(std::move(path)) {
    if (::mkfifo(path_.c_str(), 0666) != 0 && errno != EEXIST)
      throw kokoro::Error("cannot create the named pipe " + path_ + ": " + std::strerror(errno));
    struct stat st {};
    if (::stat(path_.c_str(), &st) != 0 || !S_ISFIFO(st.st_mode))
      throw kokoro::Error(path_ + " exists and is not a named pipe");
    open();
  }
  ~Fifo() {
    if (fd_ >= 0) ::close(fd_);
  }
  int fd() const { return fd_; }
  const std::string& path() const { return path_; }
  // Reads what is there; when all writers have gone, reopens so that the next writer is heard.
  void read(std::vector<kokoro::app::InputLine>& lines) {
    if (!reader_.read_available(fd_, "named pipe " + path_, lines)) {
      ::close(fd_);
      open();
    }
  }

 private:
  void open() {
    // O_NONBLOCK: opening for reading returns at once even without a writer; poll() then reports nothing
    // until a writer has written or closed.
    fd_ = ::open(path_.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC);
    if (fd_ < 0) throw kokoro::Error("cannot open the named pipe " + path_ + ": " + std::strerror(errno));
  }
  std::string path_;
  int fd_ = -1;
  kokoro::app::LineReader reader_;
};

// The JACK client and the speaker feeding it; both are replaced after a reconnect.
struct Connection {
  std::unique_ptr<kokoro::AudioSink> sink;
  std::unique_ptr<kokoro::Speaker> speaker;
  std::shared_ptr<std::atomic<uint64_t>> utterances = std::make_shared<std::atomic<uint64_t>>(0);
};

Connection connect(const Options& o, const kokoro::app::SpeechEngine& engine, bool quiet) {
  kokoro::SinkOptions so;
  so.kind = kokoro::SinkKind::jack;
  so.client_name = o.client_name;
  so.server_name = o.server;
  so.autoconnect = o.autoconnect;
  so.stereo = o.stereo;
  so.quality = kokoro::parse_resample_quality(o.speech.resample);
  Connection c;
  c.sink = kokoro::open_sink(so);
  c.speaker = std::make_unique<kokoro::Speaker>(engine.synthesizer, engine.frontend, engine.voice, *c.sink,
                                                kokoro::app::speaker_options(o.speech, engine));
  // Status lines go to stdout (one per utterance); underruns are counted per utterance as the difference
  // since the previous report (utterances are spoken one after the other).
  auto* sink = c.sink.get();
  auto last_underruns = std::make_shared<uint64_t>(0);
  auto utterances = c.utterances;
  c.speaker->on_report([sink, last_underruns, utterances, quiet](const kokoro::UtteranceReport& r) {
    utterances->fetch_add(1);
    const kokoro::SinkStats s = sink->stats();
    if (!r.error.empty() && !s.error.empty()) return;  // the server is gone: the main loop says so once
    kokoro::app::SinkCounters counters{s.xruns, s.underruns - *last_underruns, s.worst_callback_ns / 1e3};
    *last_underruns = s.underruns;
    if (!r.error.empty()) {
      std::fprintf(stderr, "%s: %s\n", kApp, kokoro::app::format_report(r, counters, true).c_str());
    } else if (!quiet) {
      std::printf("%s\n", kokoro::app::format_report(r, counters, true).c_str());
      std::fflush(stdout);
    }
  });
  return c;
}

// One line on how the JACK client fared, for the record (stderr).
void print_summary(const Connection& c) {
  const kokoro::SinkStats s = c.sink->stats();
  const double budget_us = s.output_rate > 0 ? 1e6 * s.period_frames / s.output_rate : 0;
  std::fprintf(stderr,
               "%s: %llu utterance%s; JACK: %llu xruns, %llu underruns, %llu callbacks, worst callback %.1f us "
               "(period %d frames = %.0f us)\n",
               kApp, static_cast<unsigned long long>(c.utterances->load()), c.utterances->load() == 1 ? "" : "s",
               static_cast<unsigned long long>(s.xruns), static_cast<unsigned long long>(s.underruns),
               static_cast<unsigned long long>(s.callbacks), s.worst_callback_ns / 1e3, s.period_frames, budget_us);
}

// Ends the connection: stops speaking, prints the summary and closes the client. A worker still
// synthesizing after 2 s is not waited for (the process exits with exit_code).
void disconnect(Connection& c, int exit_code, bool quiet) {
  if (!c.speaker) return;
  if (!quiet) print_summary(c);
  kokoro::app::stop_speaker_or_exit(*c.speaker, 2.0, exit_code, kApp);
  c.speaker.reset();
  c.sink.reset();
}

std::string sources_text(bool stdin_open, const Fifo* fifo) {
  std::string s = stdin_open ? "standard input" : "";
  if (fifo) s += (s.empty() ? "" : " and ") + fifo->path();
  return s;
}

int run(const Options& o) {
  const kokoro::app::SpeechEngine engine = kokoro::app::load_speech_engine(o.speech);
  // A long-running client: the first line should start as fast as the later ones (see warm_up).
  spdlog::debug("warm-up: {:.0f} ms", kokoro::app::warm_up(engine));
  kokoro::app::persist_prepared_weights(engine);
  std::unique_ptr<Fifo> fifo;
  if (!o.fifo.empty()) fifo = std::make_unique<Fifo>(o.fifo);
  const std::string server = o.server.empty() ? (std::getenv("JACK_DEFAULT_SERVER") ? std::getenv("JACK_DEFAULT_SERVER") : "default") : o.server;

  Connection conn;
  auto next_attempt = std::chrono::steady_clock::now();
  bool waiting_reported = false;
  bool stdin_open = true;
  kokoro::app::LineReader stdin_reader;

  auto try_connect = [&]() {
    try {
      conn = connect(o, engine, o.quiet);
      std::fprintf(stderr, "%s: %s %s; voice %s; reading %s\n", kApp, waiting_reported ? "reconnected," : "ready,",
                   conn.sink->describe().c_str(), engine.voice.name().c_str(), sources_text(stdin_open, fifo.get()).c_str());
      waiting_reported = false;
    } catch (const kokoro::Error& e) {
      if (!o.reconnect) throw;
      if (!waiting_reported)
        std::fprintf(stderr, "%s: waiting for JACK server '%s' (retrying every second): %s\n", kApp, server.c_str(), e.what());
      waiting_reported = true;
      next_attempt = std::chrono::steady_clock::now() + std::chrono::seconds(1);
    }
  };
  try_connect();

  for (;;) {
    if (const int sig = g_quit_signal.load()) {
      if (!o.quiet) std::fprintf(stderr, "%s: %s, exiting\n", kApp, sig == SIGTERM ? "terminated" : "interrupted");
      disconnect(conn, 0, o.quiet);
      return 0;
    }
    if (conn.sink) {
      const std::string error = conn.sink->stats().error;
      if (!error.empty()) {
        std::fprintf(stderr, "%s: lost the JACK server: %s%s\n", kApp, error.c_str(),
                     o.reconnect ? "" : " (exiting; --reconnect waits for the server instead)");
        disconnect(conn, kExitServerLost, o.quiet);
        if (!o.reconnect) return kExitServerLost;
        next_attempt = std::chrono::steady_clock::now() + std::chrono::seconds(1);
        waiting_reported = true;
        std::fprintf(stderr, "%s: waiting for JACK server '%s' (retrying every second)\n", kApp, server.c_str());
      }
    }
    if (!conn.sink && std::chrono::steady_clock::now() >= next_attempt) try_connect();

    // Without a fifo, the end of standard input is the end of the work: finish speaking, then exit.
    if (!stdin_open && !fifo) {
      if (!conn.speaker) return kExitServerLost;
      if (conn.speaker->wait_idle(0.1)) {
        conn.sink->drain(10.0);
        disconnect(conn, 0, o.quiet);
        return 0;
      }
      continue;
    }

    pollfd fds[2];
    nfds_t n = 0;
    if (stdin_open) fds[n++] = {STDIN_FILENO, POLLIN, 0};
    if (fifo) fds[n++] = {fifo->fd(), POLLIN, 0};
    if (::poll(fds, n, 100) <= 0) continue;  // timeout or a signal: look at the flags again

    std::vector<kokoro::app::InputLine> lines;
    for (nfds_t i = 0; i < n; ++i) {
      if (!(fds[i].revents & (POLLIN | POLLHUP | POLLERR))) continue;
      if (fds[i].fd == STDIN_FILENO) {
        stdin_open = stdin_reader.read_available(STDIN_FILENO, "standard input", lines);
      } else {
        fifo->read(lines);
      }
    }
    for (const auto& line : lines) {
      if (line.text.find_first_not_of(" \t\r\f\v") == std::string::npos) continue;
      if (!conn.speaker) {
        std::fprintf(stderr, "%s: not connected to JACK, dropped: \"%s\"\n", kApp, kokoro::app::excerpt(line.text).c_str());
        continue;
      }
      if (o.interrupt && !line.continued) conn.speaker->stop();
      conn.speaker->say(line.text);
    }
  }
}

}  // namespace

int main(int argc, char** argv) {
  kokoro::app::tune_malloc_for_tensors();  // before any allocation worth tuning
  CLI::App app{"kokoro-jack: a JACK client that speaks each line it reads (standard input and --fifo) with the\n"
               "Kokoro-82M voice, printing one status line per utterance."};
  app.footer(
      "Status lines (stdout): [spoken] seconds of speech, time to first audio (from reading the line to the\n"
      "first samples handed to JACK), synthesis time, xruns reported by the server so far, underruns, the longest\n"
      "audio callback so far.\n"
      "Exit status: 0 after end of input (without --fifo) or SIGINT/SIGTERM; 1 on a start-up error (model,\n"
      "voice, no JACK server, pipe); 3 when the JACK server went away (without --reconnect).");
  Options o;
  kokoro::app::add_speech_options(app, o.speech);
  app.add_option("--fifo", o.fifo, "Also read lines from this named pipe (created if missing)");
  app.add_option("-n,--name", o.client_name, "JACK client name")->capture_default_str();
  app.add_option("--server", o.server, "JACK server name (default: $JACK_DEFAULT_SERVER or the default server)");
  app.add_flag("--autoconnect,!--no-autoconnect", o.autoconnect,
               "Connect the output to system:playback_* (default: on)");
  app.add_flag("--stereo", o.stereo, "Register out_2 as well (a copy of out_1)");
  app.add_flag("--reconnect", o.reconnect, "When the JACK server is missing or goes away, wait for it (retry every second)");
  app.add_flag("--interrupt", o.interrupt, "A new line interrupts the one being spoken (default: queue it)");
  app.add_flag("-q,--quiet", o.quiet, "No status lines");
  app.add_flag("-v,--verbose", o.verbose, "Debug logging");
  CLI11_PARSE(app, argc, argv);
  kokoro::app::setup_logging(kApp, o.verbose);
  std::setvbuf(stdout, nullptr, _IOLBF, 0);

  struct sigaction sa {};
  sa.sa_handler = on_quit_signal;  // no SA_RESTART: poll() returns at once
  sigaction(SIGINT, &sa, nullptr);
  sigaction(SIGTERM, &sa, nullptr);
  std::signal(SIGPIPE, SIG_IGN);

  try {
    return run(o);
  } catch (const kokoro::Error& e) {
    std::fprintf(stderr, "%s: %s\n", kApp, e.what());
    return 1;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "%s: unexpected error: %s\n", kApp, e.what());
    return 1;
  }
}
