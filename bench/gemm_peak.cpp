#include "bench/gemm_peak.h"

#include <algorithm>
#include <chrono>
#include <vector>

#include "core/kernel_family.h"
#include "core/parallel.h"
#include "core/tensor.h"

namespace kokoro::bench {

namespace {

constexpr int kN = 1024;

// Seconds for `products` GEMMs per thread on `threads` threads at once (best of `tries`).
double time_products(int threads, int products, int tries) {
  std::vector<RowMatrix> a(threads, RowMatrix::Random(kN, kN)), b(threads, RowMatrix::Random(kN, kN)),
      c(threads, RowMatrix::Zero(kN, kN));
  double best = 1e30;
  for (int t = 0; t < tries; ++t) {
    const auto t0 = std::chrono::steady_clock::now();
    parallel_for(threads, [&](int64_t i) {
      // In the compute library: the loaded kernel family's GEMM, not one compiled with this file's flags.
      for (int p = 0; p < products; ++p) family_gemm(a[i], b[i], c[i]);
    });
    best = std::min(best, std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
  }
  return best;
}

}  // namespace

GemmPeak measure_gemm_peak(int threads) {
  GemmPeak p;
  p.threads = threads;
  const double flop = 2.0 * kN * kN * kN;
  const int saved = num_threads();
  set_num_threads(1);
  p.gflops_1 = 3 * flop / time_products(1, 3, 3) / 1e9;
  set_num_threads(threads);
  p.gflops_n = threads * 3 * flop / time_products(threads, 3, 3) / 1e9;
  set_num_threads(saved);
  return p;
}

}  // namespace kokoro::bench
