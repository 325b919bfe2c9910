// What the benchmark tools read about their own process and the machine: CPU seconds, memory, load.
#pragma once
#include <sys/resource.h>

#include <fstream>

namespace kokoro::bench {

// User + system CPU seconds of every thread of this process so far.
inline double cpu_seconds() {
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  return u.ru_utime.tv_sec + u.ru_utime.tv_usec / 1e6 + u.ru_stime.tv_sec + u.ru_stime.tv_usec / 1e6;
}

// Highest resident set size so far, MB.
inline double peak_rss_mb() {
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  return u.ru_maxrss / 1024.0;  // kB on Linux
}

// Resident set size now, MB.
inline double current_rss_mb() {
  std::ifstream f("/proc/self/statm");
  long pages = 0, resident = 0;
  f >> pages >> resident;
  return resident * 4096.0 / (1024.0 * 1024.0);
}

// The machine's 1-minute load average (the machine is shared: every figure is reported beside it).
inline double loadavg_1m() {
  std::ifstream f("/proc/loadavg");
  double v = 0;
  f >> v;
  return v;
}

}  // namespace kokoro::bench
