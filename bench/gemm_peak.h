// The machine's achievable fp32 GEMM rate, measured in the benchmark's own process so that per-stage rates
// can be read as a fraction of it: Eigen's GEMM (the engine's) on 1024^3, best of a few runs, on one thread
// and on `threads` threads each running its own product at the same time (the engine's pool parallelises
// over independent products the same way).
#pragma once

namespace kokoro::bench {

struct GemmPeak {
  double gflops_1 = 0;  // one thread
  double gflops_n = 0;  // `threads` threads together
  int threads = 1;
};

GemmPeak measure_gemm_peak(int threads);

}  // namespace kokoro::bench
