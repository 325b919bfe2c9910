// Matrix products through oneDNN's matmul primitive (Debian libdnnl): JIT-compiled for the CPU the engine
// runs on (AVX2, AVX-512, AVX512-BF16, ...), so these kernels dispatch at run time whatever flags the engine
// itself was built with. Measured against Eigen on ALBERT's shapes (20 x 768 x 768 ... 2048): 1.8-3.3x
// faster on one thread (bench_kernels BM_linear_rows), mostly because Eigen repacks the weight matrix on
// every product and oneDNN's JIT kernel reads it in place.
//
// Threads: Debian's oneDNN parallelises with OpenMP, whose threads spin; on a busy 2-core machine a 2-thread
// OpenMP product was measured 20x slower than one thread. So every product here runs single-threaded on
// its calling thread (omp_set_num_threads(1) once per thread) and the engine's own pool (core/parallel.h)
// splits the work into column blocks.
#pragma once
#include <cstdint>

namespace kokoro {

// y[t, c] = sum_k x[t, k] b[k, c] + bias[c] for t < M, c < N: x [M, K] rows K apart, b [K, N] rows ldb apart
// (a Linear weight transposed once: oneDNN's kernel for B = W^T read in place was measured 1.3-2.7x slower),
// y rows ldy apart; bias may be null. fp32 in, fp32 out. Single-threaded; M may change from call to call
// (one primitive per (K, N, ldb, ldy, bias) shape, rows a run-time dimension).
void onednn_matmul_f32(const float* x, int64_t M, int64_t K, const float* b, int64_t ldb, const float* bias,
                       int64_t N, float* y, int64_t ldy);

// Runs one small product so that oneDNN generates its GEMM kernels now: the first product of a process spends
// 20-35 ms generating them (measured on AVX2, 2026-11-28; a 1-row product takes another path and does not do
// it). A loader calls this on a thread of its own while the model file opens, so that a new process's first
// sentence does not pay for it. Safe to call from several threads and more than once.
void onednn_warm_up();

// The instruction set oneDNN's kernels use on this CPU ("avx2", "avx512_core_bf16", ...), after any
// ONEDNN_MAX_CPU_ISA limit from the environment.
const char* onednn_isa();

}  // namespace kokoro
