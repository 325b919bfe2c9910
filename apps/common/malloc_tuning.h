// glibc malloc settings for the programs (kokoro-say, kokoro-jack, kokoro-bench, kokoro-stream-eval), called
// first thing in main(). Not in the library: a host of the C API keeps its own allocator settings.
//
// Why: the engine's large activations (1-70 MB tensors) are freed and allocated again at other sizes on
// every segment, and every thread that allocates gets an arena of its own whose freed holes stay resident
// (only an arena's top is ever returned). One arena per core bounds that.
//
// Measured (issue 12; kokoro-bench, all corpora, idle, one run each, GEMM peak 81-87 / 160-168):
//   slice: no tuning 580 MB, RTF 0.176 | arena_max 2: 540 MB, 0.174 | + mmap threshold fixed at 4 MB: 494 MB, 0.192
//   exact: no tuning 646 MB, RTF 0.139-0.141 | arena_max 2: 646 MB, 0.138 | + 4 MB threshold: 595 MB, 0.147-0.154
// A fixed mmap threshold also stops glibc's threshold from rising to the largest block freed (up to 32 MB),
// which is where most of the retention comes from, but every tensor of 4 MB or more is then mapped fresh and
// its pages faulted in and zeroed by the kernel each time: 9-11 % slower. Not set; reusing the activation
// buffers instead is the way to both (docs/benchmarks.md, "Peak memory").
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
  mallopt(M_ARENA_MAX, 2);
#endif
}

}  // namespace kokoro::app
