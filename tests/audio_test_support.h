// Helpers for the tests that drive real audio back-ends: a private jackd (dummy driver) per test, a JACK
// capture client that records what reaches its ports, an ALSA configuration whose devices are the null
// PCM and the file plugin, and signal checks (the watchdog is in test_util.h).
#pragma once
#include <gtest/gtest.h>
#include <jack/jack.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/file.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <iterator>
#include <map>
#include <fstream>
#include <memory>
#include <mutex>
#include <sstream>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "realtime/audio_sink.h"
#include "realtime/jack_sink.h"
#include "realtime/resampler.h"
#include "ringbuffer/spsc_ring.h"
#include "test_util.h"

extern char** environ;

namespace kokoro::test {

// jackd's own account of its xruns. "JackEngine::XRun: client = X was not finished, state = S" and
// "JackEngine::XRun: client X finished after current callback" blame client X; "JackTimedDriver::Process
// XRun = N usec" is the dummy driver's timer waking late (the VM did not schedule jackd itself), which every
// client then sees as an xrun although none of them was late. Adjacent xrun lines of the log form one event.
// An event that includes the driver's late wake-up, or in which the test's own capture client
// ("kokoro-capture", whose callback only copies one buffer) was late too, is a whole-graph stall: the VM did
// not run the real-time threads (seen: a 3.8 ms freeze; two clients late together). Its blamed lines count
// as `stalled`. The other blamed lines are a client late alone: `not_started` when its state was still
// "Triggered" (woken, but its thread never ran in that cycle, so no code of the client's had a part in it),
// else `late_alone`, by client (its callback was running or finished late).
struct XrunAccount {
  unsigned driver_late = 0, stalled = 0, not_started = 0;
  std::map<std::string, unsigned> late_alone;  // client name -> lines blaming its running callback, alone
  unsigned late_alone_total() const {
    unsigned n = 0;
    for (const auto& [client, count] : late_alone) n += count;
    return n;
  }
  unsigned logged() const { return driver_late + stalled + not_started + late_alone_total(); }
  std::string lines;  // the xrun lines, for failure messages
};
// The client a "JackEngine::XRun" line blames ("" if none).
inline std::string blamed_jack_client(const std::string& line) {
  static const std::string not_finished = "client = ", late_finish = "JackEngine::XRun: client ";
  std::size_t at = line.find(not_finished);
  if (at != std::string::npos && line.find(" was not finished") != std::string::npos) {
    at += not_finished.size();
    return line.substr(at, line.find(" was not finished", at) - at);
  }
  at = line.find(late_finish);
  if (at != std::string::npos && line.find(" finished after current callback") != std::string::npos) {
    at += late_finish.size();
    return line.substr(at, line.find(" finished after current callback", at) - at);
  }
  return "";
}
inline XrunAccount classify_jack_xruns(const std::string& jackd_log) {
  XrunAccount a;
  std::istringstream in(jackd_log);
  std::string line;
  std::vector<std::pair<std::string, bool>> event_clients;  // blamed client, its thread had not started
  bool event_is_stall = false;
  const auto close_event = [&] {
    for (const auto& [client, unstarted] : event_clients) {
      if (event_is_stall) {
        ++a.stalled;
      } else if (unstarted) {
        ++a.not_started;
      } else {
        ++a.late_alone[client];
      }
    }
    event_clients.clear();
    event_is_stall = false;
  };
  while (std::getline(in, line)) {
    const bool driver = line.find("JackTimedDriver::Process XRun") != std::string::npos;
    const std::string client = driver ? "" : blamed_jack_client(line);
    if (!driver && client.empty()) {
      close_event();
      if (line.find("XRun") != std::string::npos || line.find("xrun") != std::string::npos) a.lines += line + "\n";
      continue;
    }
    a.lines += line + "\n";
    if (driver) {
      ++a.driver_late;
      event_is_stall = true;
    } else {
      event_clients.emplace_back(client, line.find("state = Triggered") != std::string::npos);
      if (client == "kokoro-capture") event_is_stall = true;
    }
  }
  close_event();
  if (a.lines.empty()) a.lines = "(jackd logged no xruns)\n";
  return a;
}

// CPU time the hypervisor gave to other guests (the "steal" column of /proc/stat), in ms since boot: the
// evidence, printed beside an xrun, that the machine rather than a client stalled.
inline double cpu_steal_ms() {
  std::ifstream in("/proc/stat");
  std::string cpu;
  unsigned long long v[8] = {};
  in >> cpu;
  for (auto& x : v) in >> x;
  const long hz = ::sysconf(_SC_CLK_TCK);
  return cpu == "cpu" && hz > 0 ? 1e3 * double(v[7]) / double(hz) : -1.0;
}

// `jackd -n kokoro-test-<slot> -d dummy -r <rate> -p <period>` as a child process. Sets JACK_DEFAULT_SERVER
// so that clients of this process (ours and PortAudio's) find it, and JACK_NO_START_SERVER so nothing starts
// another server by accident.
//
// Why slots: JACK2 keeps at most 8 servers in a per-user registry in /dev/shm and reclaims the entry of a
// dead server only when a server of the same name starts again. Unique names per run would fill the registry
// with the entries of servers we kill on purpose. So names come from 4 slots, each held through an flock on
// /tmp/kokoro-jack-test-<slot>.lock for the server's lifetime (released by the kernel if the test dies):
// concurrent test processes never share a name, and a slot's stale entry is reclaimed by its next user.
class JackTestServer {
 public:
  static constexpr int kSlots = 4;

  explicit JackTestServer(int rate = 48000, int period = 256) {
    acquire_slot();
    name_ = "kokoro-test-" + std::to_string(slot_);
    log_path_ = dir_.file("jackd.log");
    ::setenv("JACK_DEFAULT_SERVER", name_.c_str(), 1);
    ::setenv("JACK_NO_START_SERVER", "1", 1);
    route_libjack_messages_to_spdlog();

    const std::string r = std::to_string(rate), p = std::to_string(period);
    std::vector<std::string> args = {"jackd", "-n", name_, "-d", "dummy", "-r", r, "-p", p};
    std::vector<char*> argv;
    for (auto& a : args) argv.push_back(a.data());
    argv.push_back(nullptr);
    const int log_fd = ::open(log_path_.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    // fork + exec rather than posix_spawn for PR_SET_PDEATHSIG: the server dies with this process even if a
    // test aborts, so no orphan can hold the slot's name. Only async-signal-safe calls in the child.
    pid_ = ::fork();
    if (pid_ == 0) {
      ::prctl(PR_SET_PDEATHSIG, SIGKILL);
      if (::getppid() == 1) ::_exit(127);  // the parent is already gone
      ::dup2(log_fd, 1);
      ::dup2(log_fd, 2);
      ::execvp("jackd", argv.data());
      ::_exit(127);
    }
    ::close(log_fd);
    if (pid_ < 0) {
      release_slot();
      throw std::runtime_error(std::string("cannot fork for jackd: ") + strerror(errno));
    }
    try {
      wait_until_ready();
    } catch (...) {
      stop();
      release_slot();
      throw;
    }
  }
  ~JackTestServer() {
    stop();
    release_slot();
  }
  JackTestServer(const JackTestServer&) = delete;
  JackTestServer& operator=(const JackTestServer&) = delete;

  const std::string& name() const { return name_; }
  pid_t pid() const { return pid_; }
  void kill(int sig) { ::kill(pid_, sig); }
  // Reaps the server; true if it exited within `seconds`.
  bool wait_exit(double seconds) {
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(seconds);
    while (std::chrono::steady_clock::now() < deadline) {
      int status = 0;
      if (::waitpid(pid_, &status, WNOHANG) == pid_) {
        pid_ = -1;
        return true;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    return false;
  }
  std::string log() const {
    std::ifstream in(log_path_);
    std::stringstream ss;
    ss << in.rdbuf();
    return ss.str();
  }

  // jackd's own account of its xruns (classify_jack_xruns below).
  XrunAccount xrun_account() const { return classify_jack_xruns(log()); }
  // CPU time stolen from this machine by its hypervisor since the server started (cpu_steal_ms).
  double steal_ms_since_start() const { return cpu_steal_ms() - steal_at_start_ms_; }

 private:
  void stop() {
    if (pid_ <= 0) return;
    ::kill(pid_, SIGTERM);
    if (!wait_exit(5.0)) {
      ::kill(pid_, SIGKILL);
      wait_exit(5.0);
    }
  }
  void acquire_slot() {
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(120);
    for (;;) {
      for (int slot = 0; slot < kSlots; ++slot) {
        const std::string path = "/tmp/kokoro-jack-test-" + std::to_string(slot) + ".lock";
        const int fd = ::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0666);
        if (fd < 0) continue;
        if (::flock(fd, LOCK_EX | LOCK_NB) == 0) {
          // A server answering under this name is an orphan from elsewhere: never mistake it for ours.
          if (!server_answers("kokoro-test-" + std::to_string(slot))) {
            slot_ = slot;
            lock_fd_ = fd;
            return;
          }
          std::fprintf(stderr, "JackTestServer: a foreign jackd holds the name kokoro-test-%d; using another slot\n", slot);
        }
        ::close(fd);
      }
      if (std::chrono::steady_clock::now() > deadline)
        throw std::runtime_error("all " + std::to_string(kSlots) + " JACK test server slots stayed busy for 120 s");
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
  }
  void release_slot() {
    if (lock_fd_ >= 0) ::close(lock_fd_);  // closing drops the flock
    lock_fd_ = -1;
  }
  static bool server_answers(const std::string& name) {
    jack_status_t st{};
    jack_client_t* probe =
        jack_client_open("kokoro-probe", static_cast<jack_options_t>(JackNoStartServer | JackServerName), &st, name.c_str());
    if (probe) jack_client_close(probe);
    return probe != nullptr;
  }
  void wait_until_ready() {
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(15);
    while (std::chrono::steady_clock::now() < deadline) {
      int status = 0;
      if (::waitpid(pid_, &status, WNOHANG) == pid_) {
        pid_ = -1;
        throw std::runtime_error("jackd exited during start-up:\n" + log());
      }
      if (server_answers(name_)) return;
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
    throw std::runtime_error("jackd did not become ready within 15 s:\n" + log());
  }

  TempDir dir_;
  std::string name_;
  std::string log_path_;
  pid_t pid_ = -1;
  double steal_at_start_ms_ = cpu_steal_ms();
  int slot_ = -1;
  int lock_fd_ = -1;
};

// A JACK client with `channels` input ports whose process callback copies every period into a lock-free
// ring per channel (so it never blocks); the test thread collects the audio with collect().
class JackCapture {
 public:
  explicit JackCapture(const std::string& server, int channels = 1, const std::string& name = "kokoro-capture") {
    jack_status_t st{};
    client_ = jack_client_open(name.c_str(), static_cast<jack_options_t>(JackNoStartServer | JackServerName), &st, server.c_str());
    if (!client_) throw std::runtime_error("capture client: cannot open on server " + server);
    for (int c = 0; c < channels; ++c) {
      const std::string port = "in_" + std::to_string(c + 1);
      ports_.push_back(jack_port_register(client_, port.c_str(), JACK_DEFAULT_AUDIO_TYPE, JackPortIsInput, 0));
      rings_.push_back(std::make_unique<SpscRing<float>>(std::size_t{1} << 22));  // 87 s at 48 kHz
      captured_.emplace_back();
    }
    jack_set_process_callback(client_, &JackCapture::process, this);
    jack_set_xrun_callback(client_, &JackCapture::xrun, this);
    if (jack_activate(client_)) throw std::runtime_error("capture client: cannot activate");
  }
  ~JackCapture() {
    if (client_) jack_client_close(client_);
  }

  jack_client_t* client() const { return client_; }
  std::string port(int channel) const { return jack_port_name(ports_.at(channel - 1)); }
  bool connect(const std::string& source, int channel) {
    return jack_connect(client_, source.c_str(), port(channel).c_str()) == 0;
  }
  // Moves what the callback captured so far into captured(channel).
  void collect() {
    std::vector<float> chunk(1 << 16);
    for (std::size_t c = 0; c < rings_.size(); ++c)
      while (std::size_t n = rings_[c]->read(chunk.data(), chunk.size())) captured_[c].insert(captured_[c].end(), chunk.begin(), chunk.begin() + n);
  }
  const std::vector<float>& captured(int channel) const { return captured_.at(channel - 1); }
  uint64_t xruns() const { return xruns_.load(); }
  uint64_t overflows() const { return overflows_.load(); }
  double worst_callback_us() const { return worst_callback_ns_.load() / 1e3; }
  double period_us() const { return 1e6 * jack_get_buffer_size(client_) / jack_get_sample_rate(client_); }

 private:
  static int process(jack_nframes_t n, void* arg) {
    auto* self = static_cast<JackCapture*>(arg);
    const auto start = std::chrono::steady_clock::now();
    for (std::size_t c = 0; c < self->ports_.size(); ++c) {
      const auto* in = static_cast<const float*>(jack_port_get_buffer(self->ports_[c], n));
      if (self->rings_[c]->write(in, n) != n) self->overflows_.fetch_add(1);
    }
    const auto ns = static_cast<uint64_t>(
        std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now() - start).count());
    if (ns > self->worst_callback_ns_.load(std::memory_order_relaxed))
      self->worst_callback_ns_.store(ns, std::memory_order_relaxed);  // the only writer: the process thread
    return 0;
  }
  static int xrun(void* arg) {
    static_cast<JackCapture*>(arg)->xruns_.fetch_add(1);
    return 0;
  }

  jack_client_t* client_ = nullptr;
  std::vector<jack_port_t*> ports_;
  std::vector<std::unique_ptr<SpscRing<float>>> rings_;
  std::vector<std::vector<float>> captured_;
  std::atomic<uint64_t> xruns_{0};
  std::atomic<uint64_t> overflows_{0};
  std::atomic<uint64_t> worst_callback_ns_{0};
};

// A private, self-contained ALSA configuration for this process (ALSA_CONFIG_PATH replaces the system's
// alsa.conf, so neither the machine's plugins such as pulse or jack nor anybody's ~/.asoundrc take part):
// "default" is the null PCM (discards audio, not clocked), "kokoro_file" is the file plugin writing raw
// samples to <dir>/alsa-out.raw in front of the null PCM. ALSA reads its configuration once per process,
// so this must run before the first PortAudio/ALSA call.
class AlsaNullConfig {
 public:
  AlsaNullConfig() {
    raw_path_ = dir_.file("alsa-out.raw");
    const std::string conf = dir_.file("asound.conf");
    std::ofstream rc(conf);
    rc << "pcm.null { type null }\n"
       << "pcm.!default { type plug slave.pcm \"null\" }\n"
       << "pcm.kokoro_file { type file slave.pcm \"null\" file \"" << raw_path_ << "\" format \"raw\" }\n";
    rc.close();
    ::setenv("ALSA_CONFIG_PATH", conf.c_str(), 1);
    ::setenv("JACK_NO_START_SERVER", "1", 1);
  }
  const std::string& raw_path() const { return raw_path_; }
  std::vector<float> read_raw() const {
    std::ifstream in(raw_path_, std::ios::binary);
    std::vector<char> bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    std::vector<float> v(bytes.size() / sizeof(float));
    std::memcpy(v.data(), bytes.data(), v.size() * sizeof(float));
    return v;
  }

 private:
  TempDir dir_;
  std::string raw_path_;
};

// ---- signals

inline std::vector<float> sine_wave(double freq, double rate, std::size_t n, double amp = 0.5) {
  std::vector<float> v(n);
  for (std::size_t i = 0; i < n; ++i) v[i] = static_cast<float>(amp * std::sin(2 * M_PI * freq * i / rate));
  return v;
}

// What a device sink plays for `input`: the same libsamplerate conversion in one go (the unit tests show
// chunked conversion is sample-identical).
inline std::vector<float> expected_output(const std::vector<float>& input, int in_rate, int out_rate, ResampleQuality q) {
  StreamResampler r(in_rate, out_rate, q);
  std::vector<float> out;
  r.process(input.data(), input.size(), out);
  r.finish(out);
  return out;
}

inline std::size_t first_above(const std::vector<float>& v, float threshold, std::size_t from = 0) {
  for (std::size_t i = from; i < v.size(); ++i)
    if (std::fabs(v[i]) > threshold) return i;
  return v.size();
}

struct Match {
  bool found = false;
  std::size_t offset = 0;       // where expected[0] sits in the capture
  std::size_t mismatches = 0;   // samples differing by more than 1e-7
  std::size_t compared = 0;
};

// Aligns `expected` to `captured` by their first clearly non-zero samples and compares sample by sample.
inline Match match_signal(const std::vector<float>& captured, const std::vector<float>& expected, std::size_t from = 0) {
  Match m;
  const std::size_t e0 = first_above(expected, 1e-4f);
  const std::size_t c0 = first_above(captured, 1e-4f, from);
  if (e0 == expected.size() || c0 == captured.size() || c0 < e0) return m;
  m.offset = c0 - e0;
  m.found = true;
  for (std::size_t k = 0; k < expected.size(); ++k) {
    if (m.offset + k >= captured.size()) {
      m.mismatches += expected.size() - k;
      break;
    }
    ++m.compared;
    if (std::fabs(captured[m.offset + k] - expected[k]) > 1e-7f) ++m.mismatches;
  }
  return m;
}

inline double rms(const float* v, std::size_t n) {
  double e = 0;
  for (std::size_t i = 0; i < n; ++i) e += double(v[i]) * v[i];
  return n ? std::sqrt(e / n) : 0.0;
}

// Frequency from rising zero crossings (with linear interpolation) over v[0, n).
inline double zero_crossing_frequency(const float* v, std::size_t n, double rate) {
  double first = -1, last = -1;
  int count = 0;
  for (std::size_t i = 1; i < n; ++i)
    if (v[i - 1] < 0 && v[i] >= 0) {
      const double t = (i - 1) + v[i - 1] / (v[i - 1] - v[i]);
      if (first < 0) first = t;
      last = t;
      ++count;
    }
  return count > 1 ? (count - 1) * rate / (last - first) : 0.0;
}


// A client of the test whose callbacks were timed: its JACK name, its longest callback, the period.
struct TimedClient {
  std::string name;
  double worst_callback_us = -1;
  double period_us = 0;
  bool fast() const { return worst_callback_us >= 0 && period_us > 0 && worst_callback_us < period_us / 4; }
};

// The "xruns = 0" rule of the JACK tests, for `observed`, the xruns one client counted, on a machine whose
// hypervisor took `steal_ms` of its CPU time meanwhile; returns what breaks the rule (empty: nothing):
// * every one of them must be an xrun jackd logged (no xrun without a cause);
// * a client jackd blames alone while its callback ran must be one of `timed` with its longest callback
//   below a quarter of the period (then its callbacks did their work in time and the delay was elsewhere),
//   or the hypervisor must have paused the machine meanwhile (steal_ms >= 1): a pause that falls inside a
//   callback makes it late and long without any fault of the code. A client late because its thread was
//   never run in that cycle ("Triggered") is the scheduler's doing, never its code's;
// * if anything was late, the timed callbacks must have been fast, unless the machine was paused.
// The callbacks' freedom from allocation, locks and syscalls is proven by the real-time safety tests. On an
// idle machine all of these counts are 0; on one that was not paused, a slow callback always fails.
inline std::vector<std::string> xrun_faults(unsigned long long observed, const XrunAccount& a,
                                            const std::vector<TimedClient>& timed, double steal_ms) {
  std::vector<std::string> faults;
  const bool paused = steal_ms >= 1.0;
  if (observed > a.logged())
    faults.push_back(std::to_string(observed) + " xruns, of which jackd logged " + std::to_string(a.driver_late) +
                     " late driver wake-up(s), " + std::to_string(a.stalled) + " client(s) late in whole-graph stalls, " +
                     std::to_string(a.not_started) + " client(s) never run in their cycle and " +
                     std::to_string(a.late_alone_total()) + " running late alone");
  for (const auto& [client, count] : a.late_alone) {
    const auto t = std::find_if(timed.begin(), timed.end(), [&](const TimedClient& c) { return c.name == client; });
    if (paused || (t != timed.end() && t->fast())) continue;
    faults.push_back("jackd says client " + client + " missed its deadline " + std::to_string(count) +
                     " time(s) while its callback ran, on a machine that was not paused, " +
                     (t == timed.end() ? std::string("and its callback time is unknown")
                                       : "and its longest callback took " + std::to_string(t->worst_callback_us) +
                                             " us of a " + std::to_string(t->period_us) + " us period"));
  }
  if (a.logged() > 0 && !paused)
    for (const auto& t : timed)
      if (!t.fast())
        faults.push_back("xruns on a machine that was not paused, and " + t.name + "'s longest callback took " +
                         std::to_string(t.worst_callback_us) + " us of a " + std::to_string(t.period_us) +
                         " us period (at most a quarter is allowed)");
  return faults;
}

inline void expect_no_client_xruns(unsigned long long observed, const JackTestServer& server, const char* who,
                                   const std::vector<TimedClient>& timed = {}) {
  const XrunAccount a = server.xrun_account();
  const double steal_ms = server.steal_ms_since_start();
  for (const auto& fault : xrun_faults(observed, a, timed, steal_ms))
    ADD_FAILURE() << who << ": " << fault << "\n" << a.lines;
  if (observed > 0 || a.logged() > 0) {
    std::printf("[measured] %s: %llu xrun(s); jackd: %u late driver wake-up(s), %u client(s) late in whole-graph "
                "stalls, %u never run in their cycle, %u running late alone; CPU steal since jackd started %.0f ms; "
                "longest callbacks:", who, observed, a.driver_late, a.stalled, a.not_started, a.late_alone_total(),
                steal_ms);
    for (const auto& t : timed) std::printf(" %s %.1f us of %.0f", t.name.c_str(), t.worst_callback_us, t.period_us);
    std::printf("\n%s", a.lines.c_str());
  }
}

}  // namespace kokoro::test
