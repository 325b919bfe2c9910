// When this process started, on the steady clock, so that an app can say how long after its own start the
// first audio came (issue 28: a new process's first audio, not only the engine's from say()).
//
// The kernel keeps a process's start time in clock ticks since boot (/proc/self/stat, field 22; 100 per
// second), so on its own it is up to 10 ms early and a latency measured from it up to 10 ms long. A launcher
// that knows better (kokoro-bench's cold-start runs) passes the steady clock's reading (CLOCK_MONOTONIC,
// nanoseconds) from just before it started the process in KOKORO_START_NS, which is then used instead (when
// it is at most a minute before the kernel's: an old value left exported in a shell is ignored).
#pragma once
#include <chrono>
#include <optional>

namespace kokoro::app {

inline constexpr const char* kStartTimeVariable = "KOKORO_START_NS";

// Null when neither source can be read (no /proc).
std::optional<std::chrono::steady_clock::time_point> process_start_time();

// The steady clock's reading in nanoseconds (for a launcher to put into KOKORO_START_NS).
long long steady_now_ns_for_child();

}  // namespace kokoro::app
