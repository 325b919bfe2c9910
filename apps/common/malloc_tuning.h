// glibc malloc settings for the programs (kokoro-say, kokoro-jack, kokoro-bench, kokoro-stream-eval), called
// first thing in main(). Not in the library: a host of the C API keeps its own allocator settings.
//
// Why: the engine's large activations (1-70 MB tensors) are freed and allocated again at other sizes on
// every segment. glibc serves a block below its mmap threshold from an arena, and that threshold rises to
// the largest block freed so far (up to 32 MB): after the first long segment every tensor came from the
// arenas, whose freed holes stay resident (only an arena's top is ever returned), and every thread that
// allocates gets an arena of its own. Measured (issue 12, "peak RSS"): ~100 MB of the slice mode's peak
// was such retention. A fixed threshold maps every block of kMmapThresholdBytes and more on its own and
// unmaps it when freed; one arena per core bounds the per-thread holes.
//
// GLIBC_TUNABLES in the environment wins: nothing is changed when it names a malloc setting.
#pragma once
#include <cstdlib>
#include <cstring>
#if defined(__GLIBC__)
#include <malloc.h>
#endif

namespace kokoro::app {

inline void tune_malloc_for_tensors() {
#if defined(__GLIBC__)
  const char* tunables = std::getenv("GLIBC_TUNABLES");
  if (tunables && std::strstr(tunables, "glibc.malloc.")) return;
  constexpr int kMmapThresholdBytes = 4 << 20;
  mallopt(M_MMAP_THRESHOLD, kMmapThresholdBytes);
  mallopt(M_ARENA_MAX, 2);
#endif
}

}  // namespace kokoro::app
