// core/parallel: every task runs exactly once, on several threads when allowed; exceptions reach the caller;
// nested and concurrent calls run serially instead of blocking.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <mutex>
#include <set>
#include <stdexcept>
#include <thread>
#include <vector>

#include "core/parallel.h"

using namespace kokoro;

namespace {

struct ThreadsGuard {
  int saved = num_threads();
  explicit ThreadsGuard(int n) { set_num_threads(n); }
  ~ThreadsGuard() { set_num_threads(saved); }
};

TEST(Parallel, EveryTaskRunsExactlyOnce) {
  ThreadsGuard g(3);
  for (int64_t n : {0, 1, 2, 7, 1000}) {
    std::vector<std::atomic<int>> hits(n);
    parallel_for(n, [&](int64_t i) { hits[i].fetch_add(1); });
    for (int64_t i = 0; i < n; ++i) EXPECT_EQ(hits[i].load(), 1) << "n=" << n << " i=" << i;
  }
}

TEST(Parallel, UsesSeveralThreadsWhenAllowed) {
  ThreadsGuard g(2);
  // Each of the two tasks waits until the other has started: that only ends if they run on two threads at
  // once. The deadline (10 s, far above any scheduling delay) turns a serialising pool into a failure.
  std::atomic<int> started{0};
  std::atomic<bool> met{true};
  std::mutex m;
  std::set<std::thread::id> ids;
  parallel_for(2, [&](int64_t) {
    {
      std::lock_guard<std::mutex> lock(m);
      ids.insert(std::this_thread::get_id());
    }
    started.fetch_add(1);
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
    while (started.load() < 2)
      if (std::chrono::steady_clock::now() > deadline) {
        met = false;
        return;
      } else {
        std::this_thread::sleep_for(std::chrono::microseconds(100));
      }
  });
  EXPECT_TRUE(met.load()) << "the two tasks never ran at the same time";
  EXPECT_EQ(ids.size(), 2u);
}

TEST(Parallel, OneThreadRunsOnTheCaller) {
  ThreadsGuard g(1);
  std::set<std::thread::id> ids;
  parallel_for(16, [&](int64_t) { ids.insert(std::this_thread::get_id()); });
  ASSERT_EQ(ids.size(), 1u);
  EXPECT_EQ(*ids.begin(), std::this_thread::get_id());
}

TEST(Parallel, ExceptionReachesTheCallerAfterAllTasks) {
  ThreadsGuard g(2);
  std::atomic<int> ran{0};
  EXPECT_THROW(parallel_for(50,
                            [&](int64_t i) {
                              ran.fetch_add(1);
                              if (i == 7) throw std::runtime_error("task 7");
                            }),
               std::runtime_error);
  EXPECT_EQ(ran.load(), 50);
  // The pool is usable afterwards.
  std::atomic<int> again{0};
  parallel_for(10, [&](int64_t) { again.fetch_add(1); });
  EXPECT_EQ(again.load(), 10);
}

TEST(Parallel, NestedCallsRunSerially) {
  ThreadsGuard g(2);
  std::atomic<int> inner{0};
  parallel_for(4, [&](int64_t) { parallel_for(5, [&](int64_t) { inner.fetch_add(1); }); });
  EXPECT_EQ(inner.load(), 20);
}

TEST(Parallel, ConcurrentCallersBothComplete) {
  ThreadsGuard g(2);
  std::atomic<int> a{0}, b{0};
  std::thread other([&] {
    for (int r = 0; r < 200; ++r) parallel_for(8, [&](int64_t) { a.fetch_add(1); });
  });
  for (int r = 0; r < 200; ++r) parallel_for(8, [&](int64_t) { b.fetch_add(1); });
  other.join();
  EXPECT_EQ(a.load(), 1600);
  EXPECT_EQ(b.load(), 1600);
}

// DenseJobs only lengthens the workers' wait before they sleep: jobs issued while it is alive (from two
// threads, each holding its own, with gaps longer than the short wait and shorter than the long one, and with
// it ending while a worker still waits) all complete whole, and a worker still runs tasks beside the caller.
TEST(Parallel, DenseJobsFromSeveralThreadsLeaveEveryJobWhole) {
  ThreadsGuard g(2);
  std::atomic<int> a{0}, b{0}, both_at_once{0};
  auto jobs = [&](std::atomic<int>& count) {
    for (int round = 0; round < 20; ++round) {
      const DenseJobs dense;
      for (int j = 0; j < 10; ++j) {
        parallel_for(6, [&](int64_t) { count.fetch_add(1); });
        std::this_thread::sleep_for(std::chrono::microseconds(300));
      }
    }
  };
  std::thread other([&] { jobs(a); });
  jobs(b);
  other.join();
  EXPECT_EQ(a.load(), 1200);
  EXPECT_EQ(b.load(), 1200);
  // After the DenseJobs are gone, a job still reaches a worker (the same meeting as UsesSeveralThreadsWhenAllowed).
  std::atomic<int> started{0};
  parallel_for(2, [&](int64_t) {
    started.fetch_add(1);
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
    while (started.load() < 2 && std::chrono::steady_clock::now() < deadline)
      std::this_thread::sleep_for(std::chrono::microseconds(100));
    if (started.load() >= 2) both_at_once.fetch_add(1);
  });
  EXPECT_EQ(both_at_once.load(), 2) << "the two tasks never ran at the same time";
}

TEST(Parallel, RangesCoverTheWholeIntervalOnce) {
  ThreadsGuard g(2);
  for (int64_t total : {1, 5, 100, 1001}) {
    std::vector<std::atomic<int>> hits(total);
    parallel_ranges(total, 7, 4, [&](int64_t b, int64_t e) {
      EXPECT_LT(b, e);
      for (int64_t i = b; i < e; ++i) hits[i].fetch_add(1);
    });
    for (int64_t i = 0; i < total; ++i) EXPECT_EQ(hits[i].load(), 1) << total << " " << i;
  }
}

}  // namespace
