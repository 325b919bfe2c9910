// The machine's achievable fp32 GEMM rate, measured in the benchmark's own process so that per-stage rates
// can be read as a fraction of it: Eigen's GEMM (the engine's) on 1024^3, best of a few runs, on one thread
// and on `threads` threads each running its own product at the same time (the engine's pool parallelises
// over independent products the same way).
#pragma once
#include <string>

namespace kokoro::bench {

struct GemmPeak {
  double gflops_1 = 0;  // one thread
  double gflops_n = 0;  // `threads` threads together
  int threads = 1;
  // The threads together stayed below 3/4 of `threads` x one thread's rate over every try: the machine's
  // other cores were busy, and figures scaled by gflops_n are not reliable.
  bool contended = false;
};

GemmPeak measure_gemm_peak(int threads);
// A line for the reports when the peak was contended ("" otherwise).
std::string contended_warning(const GemmPeak& peak);

}  // namespace kokoro::bench
