#include "apps/common/process_start.h"

#include <time.h>
#include <unistd.h>

#include <cstdlib>
#include <fstream>
#include <iterator>
#include <sstream>
#include <string>

namespace kokoro::app {

namespace {

long long clock_ns(clockid_t id) {
  timespec ts{};
  clock_gettime(id, &ts);
  return static_cast<long long>(ts.tv_sec) * 1000000000LL + ts.tv_nsec;
}

// Field 22 of /proc/self/stat: the start time in clock ticks since boot. The command name (field 2) may hold
// spaces and parentheses, so fields are counted from its closing parenthesis.
std::optional<long long> kernel_start_ticks() {
  std::ifstream f("/proc/self/stat");
  std::string stat((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
  const size_t close = stat.rfind(')');
  if (close == std::string::npos) return std::nullopt;
  std::istringstream rest(stat.substr(close + 1));
  std::string field;
  for (int i = 3; i <= 22; ++i)
    if (!(rest >> field)) return std::nullopt;
  try {
    return std::stoll(field);
  } catch (const std::exception&) {
    return std::nullopt;
  }
}

}  // namespace

long long steady_now_ns_for_child() { return clock_ns(CLOCK_MONOTONIC); }

std::optional<std::chrono::steady_clock::time_point> process_start_time() {
  using namespace std::chrono;
  long long start_mono = 0;
  const std::optional<long long> ticks = kernel_start_ticks();
  const long hz = sysconf(_SC_CLK_TCK);
  // Read back to back, after the file: a slow read of /proc between them would shift the result.
  const long long mono_now = clock_ns(CLOCK_MONOTONIC);
  const long long boot_now = clock_ns(CLOCK_BOOTTIME);
  if (ticks && hz > 0) {
    // Boot time and the steady clock differ by the time spent suspended: convert through "now" on both.
    const long long start_boot = *ticks * (1000000000LL / hz);
    start_mono = start_boot - (boot_now - mono_now);
  }
  if (const char* e = std::getenv(kStartTimeVariable); e && *e) {
    char* end = nullptr;
    const long long v = std::strtoll(e, &end, 10);
    // A launcher's reading comes just before the kernel's (one tick later at most); one left in the
    // environment from long ago (an exported variable) is not this process's start.
    const long long tick = hz > 0 ? 1000000000LL / hz : 0;
    const bool plausible = start_mono == 0 || (v >= start_mono - 60000000000LL && v <= start_mono + 2 * tick);
    if (end && *end == '\0' && v > 0 && v <= mono_now && plausible) start_mono = v;
  }
  if (start_mono == 0) return std::nullopt;
  // steady_clock is CLOCK_MONOTONIC on Linux (libstdc++): the same epoch.
  return steady_clock::time_point(duration_cast<steady_clock::duration>(nanoseconds(start_mono)));
}

}  // namespace kokoro::app
