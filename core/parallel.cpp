#include "core/parallel.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdlib>
#include <exception>
#include <mutex>
#include <thread>
#include <vector>

namespace kokoro {

namespace {

int default_threads() {
  if (const char* env = std::getenv("KOKORO_THREADS"); env && *env) {
    const int n = std::atoi(env);
    if (n >= 1) return n;
  }
  return std::max(1u, std::thread::hardware_concurrency());
}

std::atomic<int> g_threads{default_threads()};
thread_local bool t_inside_task = false;
std::atomic<int> g_dense_jobs{0};  // DenseJobs alive

class Pool {
 public:
  ~Pool() {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      quit_ = true;
    }
    wake_.notify_all();
    for (auto& w : workers_) w.join();
  }

  // Returns false (and runs nothing) when another job is in progress.
  bool run(int64_t n, int threads, const std::function<void(int64_t)>& fn) {
    std::unique_lock<std::mutex> busy(busy_, std::try_to_lock);
    if (!busy.owns_lock()) return false;
    grow(threads - 1);
    {
      std::lock_guard<std::mutex> lock(mutex_);
      fn_ = &fn;
      n_ = n;
      next_.store(0);
      done_ = 0;
      error_ = nullptr;
      invited_ = static_cast<int>(std::min<int64_t>(threads - 1, n - 1));
      open_ = true;
      ++generation_;
    }
    posted_.store(generation_, std::memory_order_release);
    wake_.notify_all();
    work();  // the caller claims tasks too
    // The workers' last tasks usually end within microseconds of the caller's: wait for them awake (see spin).
    // Under DenseJobs as long as the workers wait for the next job: a task there runs up to ~0.5 ms, and a
    // caller that fell asleep on `finished_` was woken through the hypervisor (~2 ms after an idle pause),
    // its workers meanwhile giving up their own wait and falling asleep too (a streamed sentence's ALBERT:
    // the caller 9 ms and the worker 45 ms runnable but not running, in ~20 such wake-ups each).
    spin([&] { return done_.load(std::memory_order_acquire) == n_ && running_.load(std::memory_order_acquire) == 0; },
         g_dense_jobs.load(std::memory_order_relaxed) > 0 ? kDenseSpin : kSpin);
    std::unique_lock<std::mutex> lock(mutex_);
    // Workers that have not started by now are not waited for: they find the job closed and sleep again.
    open_ = false;
    finished_.wait(lock, [&] { return done_ == n_ && running_ == 0; });
    fn_ = nullptr;
    if (error_) std::rethrow_exception(error_);
    return true;
  }

 private:
  void grow(int workers) {
    while (static_cast<int>(workers_.size()) < workers) {
      const int index = static_cast<int>(workers_.size());
      workers_.emplace_back([this, index] { loop(index); });
    }
  }

  // Waits up to `limit` for `ready` without sleeping. Between two jobs of a model's forward pass there are only
  // microseconds; a thread that sleeps on the condition variable there lets its vCPU halt, and on this
  // project's VMs (cpuidle haltpoll) the poll window shrinks after a pause, so after an idle second every
  // wake-up of the pool's worker took the hypervisor's path: ALBERT on 2 threads was 47 ms back to back and
  // 70 ms after a 2 s pause (one thread: 72 and 74). The spin is bounded, so an idle pool still sleeps, and
  // yields, so that it does not hold a core another of the process's threads is waiting for.
  template <class Ready>
  static void spin(Ready ready, std::chrono::microseconds limit = kSpin) {
    const auto until = std::chrono::steady_clock::now() + limit;
    while (!ready()) {
      for (int i = 0; i < 32; ++i) cpu_relax();
      if (std::chrono::steady_clock::now() > until) return;
      std::this_thread::yield();  // a runnable thread of ours (start-up, the other stage) goes first
    }
  }
  static void cpu_relax() {
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#endif
  }
  static constexpr std::chrono::microseconds kSpin{100};
  // While a DenseJobs is alive. In a sentence's acoustic model that came after seconds of waiting for text,
  // serial gaps (or the caller losing its core to another of the engine's threads for a moment) outlasted
  // 100 us: the worker fell asleep 3-28 times in ALBERT over 363 tokens, woke slowly, and did 271-423 of its
  // 964 tasks; with 1 ms it slept 0-2 times and did 431-479 (docs/benchmarks.md).
  static constexpr std::chrono::microseconds kDenseSpin{1000};

  void loop(int index) {
    uint64_t seen = 0;
    std::unique_lock<std::mutex> lock(mutex_);
    for (;;) {
      if (generation_ == seen && !quit_) {
        lock.unlock();
        spin([&] { return posted_.load(std::memory_order_acquire) != seen; },
             g_dense_jobs.load(std::memory_order_relaxed) > 0 ? kDenseSpin : kSpin);
        lock.lock();
      }
      wake_.wait(lock, [&] { return quit_ || (generation_ != seen && open_ && index < invited_); });
      if (quit_) return;
      seen = generation_;
      ++running_;
      lock.unlock();
      work();
      lock.lock();
      if (--running_ == 0 && done_ == n_) finished_.notify_all();
    }
  }

  void work() {
    t_inside_task = true;
    int64_t finished = 0;
    for (int64_t i; (i = next_.fetch_add(1)) < n_;) {
      try {
        (*fn_)(i);
      } catch (...) {
        std::lock_guard<std::mutex> lock(mutex_);
        if (!error_) error_ = std::current_exception();
      }
      ++finished;
    }
    t_inside_task = false;
    std::lock_guard<std::mutex> lock(mutex_);
    done_ += finished;
    if (done_ == n_ && running_ == 0) finished_.notify_all();
  }

  std::mutex busy_;  // held by the thread whose job is running
  std::mutex mutex_;
  std::condition_variable wake_, finished_;
  std::vector<std::thread> workers_;
  // The current job; n_ and fn_ are written under mutex_ before workers are woken and read by them after.
  const std::function<void(int64_t)>* fn_ = nullptr;
  int64_t n_ = 0;
  // Written under mutex_; atomic so that spin() may read them without it.
  std::atomic<int64_t> done_{0};
  std::atomic<int> running_{0};
  std::atomic<uint64_t> posted_{0};  // generation_, published for spinning workers
  std::atomic<int64_t> next_{0};
  int invited_ = 0;
  bool open_ = false, quit_ = false;
  uint64_t generation_ = 0;
  std::exception_ptr error_;
};

// Never destroyed: at exit, a thread that is joined later (a C API session's, by its registry's destructor)
// may still be running a parallel_for when the function-local statics are destroyed.
Pool& pool() {
  static auto* p = new Pool;
  return *p;
}

}  // namespace

DenseJobs::DenseJobs() { g_dense_jobs.fetch_add(1, std::memory_order_relaxed); }
DenseJobs::~DenseJobs() { g_dense_jobs.fetch_sub(1, std::memory_order_relaxed); }

void set_num_threads(int n) { g_threads.store(std::max(1, n)); }
int num_threads() { return g_threads.load(); }

int elementwise_parts(int64_t n) { return n < (int64_t{1} << 16) ? 1 : 2 * num_threads(); }

void parallel_for(int64_t n, const std::function<void(int64_t)>& fn) {
  if (n <= 0) return;
  const int threads = num_threads();
  if (n == 1 || threads <= 1 || t_inside_task || !pool().run(n, threads, fn)) {
    for (int64_t i = 0; i < n; ++i) fn(i);
  }
}

void parallel_ranges(int64_t total, int64_t min_chunk, int parts,
                     const std::function<void(int64_t begin, int64_t end)>& fn) {
  if (total <= 0) return;
  const int64_t chunks = std::clamp<int64_t>(total / std::max<int64_t>(1, min_chunk), 1, std::max(1, parts));
  const int64_t step = (total + chunks - 1) / chunks;
  parallel_for((total + step - 1) / step, [&](int64_t c) { fn(c * step, std::min(total, (c + 1) * step)); });
}

}  // namespace kokoro
