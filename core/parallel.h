// The engine's own small thread pool for kernels: coarse, independent tasks (column blocks of a GEMM, the
// transform-domain products of a fast convolution, channel ranges of a norm) spread over a few threads.
//
// Why not OpenMP (which would also parallelise Eigen's GEMMs): on this project's 2-core targets the audio
// callback and the other engine stage share the cores. OpenMP's parallel GEMM synchronises many times per
// product and its threads spin while they wait; with the second core busy, a 2-thread OpenMP run was measured
// 5x slower than one thread (vocoder/README.md). Here workers wait briefly (100 us, yielding; 1 ms under
// DenseJobs) and then sleep on a condition variable, and tasks are claimed one by one from a shared counter, so a
// worker that loses its core just claims fewer tasks: a busy machine degrades to single-thread speed, never below it.
//
// One job runs at a time. A parallel_for issued from inside a task, or while another thread's job is running,
// runs serially on its caller: no nesting, no blocking between engine threads.
#pragma once
#include <cstdint>
#include <functional>

namespace kokoro {

// Threads the kernels may use, the calling thread included (>= 1). The default is KOKORO_THREADS from the
// environment when set, else the number of hardware threads. Takes effect at the next parallel_for.
void set_num_threads(int n);
int num_threads();

// Runs fn(i) for every i in [0, n) and returns when all have finished. fn must be safe to call concurrently
// for different i. Exceptions thrown by fn are rethrown (the first one) after every task has ended.
void parallel_for(int64_t n, const std::function<void(int64_t)>& fn);

// Splits [0, total) into about `parts` contiguous ranges of at least `min_chunk` items and runs
// fn(begin, end) on each in parallel.
void parallel_ranges(int64_t total, int64_t min_chunk, int parts,
                     const std::function<void(int64_t begin, int64_t end)>& fn);

// While one is alive (on any thread), the pool's workers wait up to 1 ms for the next job before they sleep,
// instead of 100 us, and a caller waits as long for its job's last tasks: for a stretch of many jobs on the
// way to first audio (the acoustic model), where a thread that fell asleep in a short gap is woken through
// the hypervisor (~2 ms after an idle pause on this project's VMs) and its partner, meanwhile, falls asleep too.
class DenseJobs {
 public:
  DenseJobs();
  ~DenseJobs();
  DenseJobs(const DenseJobs&) = delete;
  DenseJobs& operator=(const DenseJobs&) = delete;
};

// Products below this many multiply-adds run on the caller: waking a worker costs ~10-50 us.
inline constexpr double kParallelMacs = 4e6;

// How many parts an element-wise pass over n values is worth splitting into: 1 below ~64k values (waking a
// worker costs more than it saves), else two per thread.
int elementwise_parts(int64_t n);

}  // namespace kokoro
