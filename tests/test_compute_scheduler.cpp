// The compute scheduler (engine/compute_scheduler.h): earliest deadline first, slots, cancellation and the
// admission arithmetic. No wall clock: every wait is on the scheduler's own state (waiting(), running()).
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <mutex>
#include <thread>
#include <vector>

#include "engine/compute_scheduler.h"
#include "tests/test_util.h"

namespace kokoro {
namespace {

void wait_until(const std::function<bool()>& condition) {
  test::Watchdog dog(60, "compute scheduler test");
  while (!condition()) std::this_thread::sleep_for(std::chrono::milliseconds(1));
}

// Items queued while the only slot is held get it in deadline order, whatever order they came in.
TEST(ComputeScheduler, EarliestDeadlineFirst) {
  ComputeScheduler s(1);
  ComputeScheduler::Turn held = s.acquire(0);
  ASSERT_TRUE(s.granted(held));
  std::mutex m;
  std::vector<int64_t> order;
  std::vector<std::thread> items;
  const std::vector<int64_t> deadlines{300, 100, 400, 200, 100};
  for (size_t i = 0; i < deadlines.size(); ++i) {
    items.emplace_back([&, d = deadlines[i]] {
      ComputeScheduler::Turn t = s.acquire(d);
      std::lock_guard<std::mutex> lock(m);
      order.push_back(d);
    });
    wait_until([&] { return s.waiting() == static_cast<int>(i + 1); });  // arrival order is the list's
  }
  held = ComputeScheduler::Turn();
  for (auto& t : items) t.join();
  EXPECT_EQ(order, (std::vector<int64_t>{100, 100, 200, 300, 400}));
  EXPECT_EQ(s.running(), 0);
}

// A new utterance (deadline: when it was queued) goes before a stream that still has seconds of audio ahead,
// but a stream already behind (deadline in the past) goes before it.
TEST(ComputeScheduler, NewUtteranceBeforeLongTailButNotBeforeAStarvingStream) {
  ComputeScheduler s(1);
  ComputeScheduler::Turn held = s.acquire(0);
  std::mutex m;
  std::vector<std::string> order;
  auto item = [&](const char* name, int64_t deadline) {
    return std::thread([&, name, deadline] {
      ComputeScheduler::Turn t = s.acquire(deadline);
      std::lock_guard<std::mutex> lock(m);
      order.push_back(name);
    });
  };
  const int64_t now = 1'000'000'000;
  std::thread tail = item("long tail, 3 s ahead", now + 3'000'000'000);
  wait_until([&] { return s.waiting() == 1; });
  std::thread fresh = item("new utterance", now);
  wait_until([&] { return s.waiting() == 2; });
  std::thread starving = item("stream 50 ms behind", now - 50'000'000);
  wait_until([&] { return s.waiting() == 3; });
  held = ComputeScheduler::Turn();
  tail.join();
  fresh.join();
  starving.join();
  EXPECT_EQ(order, (std::vector<std::string>{"stream 50 ms behind", "new utterance", "long tail, 3 s ahead"}));
}

TEST(ComputeScheduler, SlotsRunItemsAtOnce) {
  ComputeScheduler s(2);
  ComputeScheduler::Turn a = s.acquire(5), b = s.acquire(7);
  EXPECT_TRUE(s.granted(a));
  EXPECT_TRUE(s.granted(b));
  EXPECT_EQ(s.running(), 2);
  std::atomic<bool> got{false};
  std::thread third([&] {
    ComputeScheduler::Turn c = s.acquire(1);
    got = true;
  });
  wait_until([&] { return s.waiting() == 1; });
  EXPECT_FALSE(got.load());
  b = ComputeScheduler::Turn();
  third.join();
  EXPECT_TRUE(got.load());
}

// A stopped session gives up waiting; the item behind it still gets the slot.
TEST(ComputeScheduler, CancelledWaiterLeavesAndTheNextOneRuns) {
  ComputeScheduler s(1);
  ComputeScheduler::Turn held = s.acquire(0);
  std::atomic<bool> stop{false}, cancelled_returned{false}, later_ran{false};
  std::thread cancelled([&] {
    ComputeScheduler::Turn t = s.acquire(10, [&] { return stop.load(); });
    EXPECT_FALSE(s.granted(t));
    cancelled_returned = true;
  });
  wait_until([&] { return s.waiting() == 1; });
  std::thread later([&] {
    ComputeScheduler::Turn t = s.acquire(20);
    later_ran = true;
  });
  wait_until([&] { return s.waiting() == 2; });
  stop = true;
  cancelled.join();
  EXPECT_TRUE(cancelled_returned.load());
  EXPECT_FALSE(later_ran.load()) << "the slot is still held";
  held = ComputeScheduler::Turn();
  later.join();
  EXPECT_TRUE(later_ran.load());
}

TEST(ComputeScheduler, AdmissionFollowsMeasuredLoad) {
  ComputeScheduler s(2, 0.85);
  ComputeLoad l = s.load();
  EXPECT_EQ(l.sessions, 0);
  EXPECT_TRUE(l.admit);
  EXPECT_DOUBLE_EQ(l.expected_new, ComputeScheduler::kNominalStreamLoad);
  for (uint64_t id = 1; id <= 3; ++id) {
    s.add_session(id);
    s.set_speaking(id, true);
    s.report_work(id, 2.0, 5.0);  // 0.4 slots each, measured over 5 s of audio
  }
  l = s.load();
  EXPECT_EQ(l.sessions, 3);
  EXPECT_EQ(l.speaking, 3);
  EXPECT_NEAR(l.demand, 1.2, 1e-9);
  EXPECT_NEAR(l.expected_new, 0.4, 1e-9);
  EXPECT_TRUE(l.admit) << "1.2 + 0.4 <= 1.7";
  s.add_session(4);
  s.set_speaking(4, true);
  s.report_work(4, 2.0, 5.0);
  l = s.load();
  EXPECT_NEAR(l.demand, 1.6, 1e-9);
  EXPECT_FALSE(l.admit) << "1.6 + 0.4 > 1.7: a fifth stream would not stay real-time";
  s.set_speaking(2, false);  // a session done speaking frees its share
  EXPECT_TRUE(s.load().admit);
  s.remove_session(4);
  EXPECT_EQ(s.load().sessions, 3);
  // Smoothing: one short slice does not swing a session's load on its own.
  s.report_work(1, 0.5, 0.5);  // 1.0 slots per second over 0.5 s of audio
  EXPECT_NEAR(s.load().demand, 0.9 * 0.4 + 0.1 * 1.0 + 0.4, 1e-9);
}

TEST(ComputeScheduler, RejectsNonsense) {
  EXPECT_THROW(ComputeScheduler(0), std::exception);
  EXPECT_THROW(ComputeScheduler(2, 0.0), std::exception);
  EXPECT_THROW(ComputeScheduler(2, 1.5), std::exception);
}

}  // namespace
}  // namespace kokoro
