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
// The share of `threads` x the one-thread rate below which the threads are taken to have shared cores.
constexpr double kFairShare = 0.75;

// Seconds for `products` GEMMs per thread on `threads` threads at once: the best of `tries`, or of up to
// `max_tries` while the best is slower than `enough` seconds.
double time_products(int threads, int products, int tries, int max_tries = 0, double enough = 0) {
  std::vector<RowMatrix> a(threads, RowMatrix::Random(kN, kN)), b(threads, RowMatrix::Random(kN, kN)),
      c(threads, RowMatrix::Zero(kN, kN));
  double best = 1e30;
  for (int t = 0; t < std::max(tries, max_tries) && (t < tries || best > enough); ++t) {
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
  // On this project's VMs another vCPU is now and then unavailable for a fraction of a second (another
  // tenant, the hypervisor): three tries of ~40 ms then measured 85 GFLOP/s on 2 threads against 82 on one,
  // where a minute later it was 166, and every figure scaled by it was off by half. More tries while the
  // threads together are far from `threads` times one thread; if they never get there it is reported.
  const double expected_seconds = 3 * flop / (p.gflops_1 * 1e9);
  p.gflops_n = threads * 3 * flop / time_products(threads, 3, 3, 24, expected_seconds / kFairShare) / 1e9;
  p.contended = threads > 1 && p.gflops_n < kFairShare * threads * p.gflops_1;
  set_num_threads(saved);
  return p;
}

std::string contended_warning(const GemmPeak& p) {
  if (!p.contended) return "";
  return "warning: the GEMM peak's " + std::to_string(p.threads) +
         " threads never ran at 3/4 of their one-thread rate together: other work held the cores while it was "
         "measured, and the figures scaled by it are not reliable\n";
}

}  // namespace kokoro::bench
