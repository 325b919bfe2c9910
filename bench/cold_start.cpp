#include "bench/cold_start.h"

#include <fcntl.h>
#include <spawn.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <regex>
#include <sstream>

#include "core/error.h"

extern char** environ;

namespace kokoro::bench {

namespace {

long long monotonic_ns() {
  timespec ts{};
  clock_gettime(CLOCK_MONOTONIC, &ts);  // the clock kokoro-say's steady_clock reads
  return static_cast<long long>(ts.tv_sec) * 1000000000LL + ts.tv_nsec;
}

std::string read_file(const std::string& path) {
  std::ifstream f(path);
  std::stringstream ss;
  ss << f.rdbuf();
  return ss.str();
}

}  // namespace

bool parse_say_report(const std::string& text, double& since_start_ms, double& engine_ms) {
  static const std::regex engine(R"(first audio after ([0-9.]+) ms)");
  static const std::regex start(R"(first audio ([0-9.]+) ms after the process started)");
  std::smatch a, b;
  if (!std::regex_search(text, a, engine) || !std::regex_search(text, b, start)) return false;
  engine_ms = std::stod(a[1].str());
  since_start_ms = std::stod(b[1].str());
  return true;
}

ColdStartResult measure_cold_start(const ColdStartOptions& o) {
  if (o.sentences.empty()) throw Error("kokoro-bench: no sentences for the cold-start runs");
  ColdStartResult r;
  char dir_template[] = "/tmp/kokoro-bench-cold-XXXXXX";
  const char* dir = mkdtemp(dir_template);
  if (!dir) throw Error(std::string("kokoro-bench: mkdtemp: ") + std::strerror(errno));
  const std::string err_path = std::string(dir) + "/stderr", wav_path = std::string(dir) + "/out.wav";
  for (int i = 0; i < o.runs; ++i) {
    const std::string& sentence = o.sentences[static_cast<size_t>(i) % o.sentences.size()];
    if (o.warm_ttfa_ms) r.paired_warm_ms.push_back(o.warm_ttfa_ms(sentence));
    std::vector<std::string> args{o.say_binary, "-o", wav_path};
    args.insert(args.end(), o.args.begin(), o.args.end());
    args.push_back("--");
    args.push_back(sentence);
    std::vector<char*> argv;
    for (std::string& a : args) argv.push_back(a.data());
    argv.push_back(nullptr);
    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    posix_spawn_file_actions_addopen(&actions, STDERR_FILENO, err_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    posix_spawn_file_actions_addopen(&actions, STDIN_FILENO, "/dev/null", O_RDONLY, 0);
    // The environment, with the start time last (it is read as the process's start).
    std::vector<std::string> env_strings;
    for (char** e = environ; *e; ++e)
      if (std::strncmp(*e, "KOKORO_START_NS=", 16) != 0) env_strings.emplace_back(*e);
    env_strings.emplace_back();
    std::vector<char*> envp;
    for (std::string& e : env_strings) envp.push_back(e.data());
    envp.push_back(nullptr);
    pid_t pid = 0;
    const long long t0 = monotonic_ns();
    env_strings.back() = "KOKORO_START_NS=" + std::to_string(t0);
    envp[env_strings.size() - 1] = env_strings.back().data();
    const int rc = posix_spawn(&pid, o.say_binary.c_str(), &actions, nullptr, argv.data(), envp.data());
    posix_spawn_file_actions_destroy(&actions);
    if (rc != 0) throw Error("kokoro-bench: cannot start " + o.say_binary + ": " + std::strerror(rc));
    int status = 0;
    while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
    }
    const double exit_ms = (monotonic_ns() - t0) / 1e6;
    const std::string text = read_file(err_path);
    double since_start = 0, engine = 0;
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0 || !parse_say_report(text, since_start, engine))
      throw Error("kokoro-bench: cold-start run " + std::to_string(i + 1) + " of " + o.say_binary +
                  " failed or reported no first audio; its stderr:\n" + text);
    r.first_audio_ms.push_back(since_start);
    r.exit_ms.push_back(exit_ms);
    r.from_say_ms.push_back(engine);
  }
  std::remove(err_path.c_str());
  std::remove(wav_path.c_str());
  rmdir(dir);
  return r;
}

}  // namespace kokoro::bench
