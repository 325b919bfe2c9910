// Helpers for the tests that run the apps (kokoro-say, kokoro-jack) as a user does: a child process with a
// pipe on its standard input and its output in files, a private tmux server for terminal sessions, the
// speech the engine produces for a text (to compare with what reached a device); the speech measures are
// in speech_checks.h. JACK servers and capture clients come from audio_test_support.h.
#pragma once
#include <gtest/gtest.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <map>
#include <optional>
#include <regex>
#include <sstream>
#include <stdexcept>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "core/assets.h"
#include "core/model_file.h"
#include "engine/synthesizer.h"
#include "frontend/frontend.h"
#include "frontend/vocab.h"
#include "speech_checks.h"
#include "test_util.h"

extern char** environ;

namespace kokoro::test {

inline std::string read_text(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

inline double seconds_since(std::chrono::steady_clock::time_point t) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t).count();
}

// Polls `done` every `interval` seconds for up to `seconds`; true once it holds.
template <typename Pred>
bool wait_until(double seconds, Pred done, double interval = 0.01) {
  const auto start = std::chrono::steady_clock::now();
  for (;;) {
    if (done()) return true;
    if (seconds_since(start) > seconds) return false;
    std::this_thread::sleep_for(std::chrono::duration<double>(interval));
  }
}

// A program run as a child: stdin is a pipe the test writes to, stdout and stderr go to files. The child
// gets PR_SET_PDEATHSIG so it dies with an aborted test; the destructor kills what is still running.
class ChildProcess {
 public:
  // `env` entries ("NAME=value") are added to (or replace) this process's environment.
  explicit ChildProcess(std::vector<std::string> args, std::vector<std::string> env = {}) : args_(std::move(args)) {
    out_path_ = dir_.file("stdout.txt");
    err_path_ = dir_.file("stderr.txt");
    int in_pipe[2];
    if (::pipe2(in_pipe, O_CLOEXEC) != 0) throw std::runtime_error("pipe2 failed");
    const int out_fd = ::open(out_path_.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    const int err_fd = ::open(err_path_.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    std::vector<char*> argv;
    for (auto& a : args_) argv.push_back(a.data());
    argv.push_back(nullptr);
    // The environment is built before fork(): the child may only make async-signal-safe calls.
    for (char** e = environ; *e; ++e) {
      const std::string entry = *e;
      const std::string name = entry.substr(0, entry.find('='));
      bool replaced = false;
      for (const auto& extra : env) replaced |= extra.substr(0, extra.find('=')) == name;
      if (!replaced) env_.push_back(entry);
    }
    for (auto& e : env) env_.push_back(std::move(e));
    std::vector<char*> envp;
    for (auto& e : env_) envp.push_back(e.data());
    envp.push_back(nullptr);
    // vfork: the child borrows this process's memory until exec, so no page tables are copied. A fork()
    // of a test process holding the model (hundreds of MB) takes the memory-map lock for milliseconds,
    // long enough to make the test's own JACK capture client miss its deadline (xruns). The child only
    // makes system calls before exec.
    pid_ = ::vfork();
    if (pid_ == 0) {
      ::prctl(PR_SET_PDEATHSIG, SIGKILL);
      if (::getppid() == 1) ::_exit(127);
      ::dup2(in_pipe[0], 0);
      ::dup2(out_fd, 1);
      ::dup2(err_fd, 2);
      ::execvpe(argv[0], argv.data(), envp.data());
      ::_exit(127);
    }
    ::close(in_pipe[0]);
    ::close(out_fd);
    ::close(err_fd);
    stdin_fd_ = in_pipe[1];
    if (pid_ < 0) throw std::runtime_error("fork failed");
  }
  ~ChildProcess() {
    close_stdin();
    if (running()) {
      ::kill(pid_, SIGKILL);
      wait_exit(10);
    }
  }
  ChildProcess(const ChildProcess&) = delete;
  ChildProcess& operator=(const ChildProcess&) = delete;

  pid_t pid() const { return pid_; }
  void write_stdin(const std::string& text) {
    std::size_t done = 0;
    while (done < text.size()) {
      const ssize_t n = ::write(stdin_fd_, text.data() + done, text.size() - done);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) throw std::runtime_error("cannot write to the child's stdin");
      done += static_cast<std::size_t>(n);
    }
  }
  void close_stdin() {
    if (stdin_fd_ >= 0) ::close(stdin_fd_);
    stdin_fd_ = -1;
  }
  void signal(int sig) { ::kill(pid_, sig); }
  bool running() {
    if (status_) return false;
    int st = 0;
    if (::waitpid(pid_, &st, WNOHANG) == pid_) status_ = st;
    return !status_;
  }
  // The wait status once the child has exited within `seconds`; nullopt if it is still running.
  std::optional<int> wait_exit(double seconds) {
    wait_until(seconds, [&] { return !running(); });
    return status_;
  }
  // Exit code of a child that exited normally, -1 if it was killed by a signal (test failure material).
  static int exit_code(int status) { return WIFEXITED(status) ? WEXITSTATUS(status) : -1; }
  std::string out() const { return read_text(out_path_); }
  std::string err() const { return read_text(err_path_); }
  // Waits until stdout (or stderr) contains `needle` at least `count` times.
  bool wait_output(const std::string& needle, double seconds, bool on_stderr = false, int count = 1) {
    return wait_until(seconds, [&] { return occurrences(on_stderr ? err() : out(), needle) >= count; });
  }
  static int occurrences(const std::string& text, const std::string& needle) {
    int n = 0;
    for (std::size_t p = text.find(needle); p != std::string::npos; p = text.find(needle, p + needle.size())) ++n;
    return n;
  }
  std::string describe() { return "stdout:\n" + out() + "\nstderr:\n" + err(); }

 private:
  TempDir dir_;
  std::vector<std::string> args_;
  std::vector<std::string> env_;
  std::string out_path_, err_path_;
  pid_t pid_ = -1;
  int stdin_fd_ = -1;
  std::optional<int> status_;
};

// Runs a program to completion (with `input` on stdin) and returns {wait status, stdout, stderr}; fails the
// test if it does not finish within `seconds`.
struct RunResult {
  int status = -1;
  std::string out, err;
  int code() const { return ChildProcess::exit_code(status); }
};
inline RunResult run_to_end(std::vector<std::string> args, const std::string& input, double seconds,
                            std::vector<std::string> env = {}) {
  ChildProcess p(std::move(args), std::move(env));
  if (!input.empty()) p.write_stdin(input);
  p.close_stdin();
  RunResult r;
  const auto st = p.wait_exit(seconds);
  r.out = p.out();
  r.err = p.err();
  if (!st) {
    ADD_FAILURE() << "still running after " << seconds << " s (a hang)\n" << p.describe();
    return r;
  }
  r.status = *st;
  return r;
}

// A tmux server of our own (private socket, no configuration file) with one session running `command` in
// a 160x40 terminal. remain-on-exit keeps the pane after the program ends so its exit status can be read.
class TmuxSession {
 public:
  TmuxSession(const std::string& command, const std::vector<std::string>& env) {
    socket_ = "kokoro-test-" + std::to_string(::getpid());
    std::vector<std::string> args = {"new-session", "-d", "-s", "t", "-x", "160", "-y", "40"};
    for (const auto& e : env) args.insert(args.end(), {"-e", e});
    args.push_back(command);
    tmux(args);
    tmux({"set-option", "-t", "t", "remain-on-exit", "on"});
    server_pid_ = std::atoi(tmux({"display-message", "-p", "-t", "t", "#{pid}"}).c_str());
  }
  ~TmuxSession() { tmux({"kill-server"}, /*check=*/false); }

  void send_keys(const std::vector<std::string>& keys) {
    std::vector<std::string> args = {"send-keys", "-t", "t"};
    args.insert(args.end(), keys.begin(), keys.end());
    tmux(args);
  }
  // Literal text (no key names), then Enter.
  void type_line(const std::string& text) {
    tmux({"send-keys", "-t", "t", "-l", text});
    send_keys({"Enter"});
  }
  std::string screen() { return tmux({"capture-pane", "-p", "-J", "-t", "t", "-S", "-200"}); }
  bool wait_screen(const std::string& needle, double seconds, int count = 1) {
    return wait_until(seconds, [&] { return ChildProcess::occurrences(screen(), needle) >= count; }, 0.05);
  }
  // The exit status of the program once its pane is dead (-N if killed by signal N), within `seconds`.
  std::optional<int> wait_exit(double seconds) {
    std::optional<int> status;
    wait_until(seconds, [&] {
      // "dead:status:signal"; a program killed by a signal has no status: report -signal.
      const std::string s = tmux({"display-message", "-p", "-t", "t", "#{pane_dead}:#{pane_dead_status}:#{pane_dead_signal}"});
      if (s.rfind("1:", 0) != 0) return false;
      // tmux marks the pane dead when its terminal closes and fills in the status once it has reaped the
      // process: until then both fields are empty.
      const std::string code = s.substr(2, s.find(':', 2) - 2);
      const int sig = std::atoi(s.substr(s.find(':', 2) + 1).c_str());
      if (code.empty() && sig == 0) {
        // Debian's tmux can miss the SIGCHLD of a pane's process (libutempter installs its own handler
        // for a moment; tmux/tmux#311) and then never reaps it: remind our tmux server.
        if (server_pid_ > 0) ::kill(server_pid_, SIGCHLD);
        return false;
      }
      status = !code.empty() ? std::atoi(code.c_str()) : -sig;
      return true;
    }, 0.05);
    return status;
  }

 private:
  std::string tmux(std::vector<std::string> args, bool check = true) {
    args.insert(args.begin(), {"tmux", "-L", socket_, "-f", "/dev/null"});
    ChildProcess p(std::move(args));
    p.close_stdin();
    const auto st = p.wait_exit(10);
    if (check && (!st || ChildProcess::exit_code(*st) != 0))
      throw std::runtime_error("tmux command failed:\n" + p.describe());
    return p.out();
  }
  std::string socket_;
  pid_t server_pid_ = -1;
};

// Single-quotes an argument for the shell tmux runs the command with.
inline std::string shell_quote(const std::string& s) {
  std::string q = "'";
  for (char c : s) q += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return q + "'";
}

// What the apps produce for a line of text in exact mode (af_heart, speed 1, en-us, whole sentences, noise
// seed 0): the Speaker's segmentation and synthesis done here, segment by segment,
// concatenated. Loads the model (fails loudly if it is missing).
class ReferenceSpeech {
 public:
  ReferenceSpeech() : synth_(ModelFile::open(default_model_path())) {
    const std::string assets = find_assets_dir();
    FrontendOptions fo;
    fo.assets_dir = assets;
    fo.first_segment_max_words = 0;
    frontend_ = std::make_unique<Frontend>(fo);
    voice_ = VoicePack::resolve("af_heart", assets);
    vocab_ = Vocab::from_config(synth_.model().config(), synth_.model().path());
  }
  // Cached: tests ask again while a JACK server runs, and synthesis there would compete for the CPU.
  const std::vector<float>& speak(const std::string& text) const {
    if (auto it = cache_.find(text); it != cache_.end()) return it->second;
    SeededNoise noise(0);
    std::vector<float> audio;
    for (const Segment& seg : frontend_->segment(text)) {
      const auto ids = tokenize(seg.phonemes, vocab_);
      if (ids.empty()) continue;
      std::size_t n = 0;
      for (unsigned char c : seg.phonemes) n += (c & 0xC0) != 0x80;
      const auto r = synth_.synthesize(ids, voice_, 1.0f, static_cast<int64_t>(n), &noise);
      audio.insert(audio.end(), r.audio.begin(), r.audio.end());
    }
    return cache_[text] = std::move(audio);
  }

 private:
  Synthesizer synth_;
  std::unique_ptr<Frontend> frontend_;
  VoicePack voice_;
  Vocab vocab_;
  mutable std::map<std::string, std::vector<float>> cache_;
};

}  // namespace kokoro::test
