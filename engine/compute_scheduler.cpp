#include "engine/compute_scheduler.h"

#include <algorithm>
#include <chrono>

#include "core/error.h"

namespace kokoro {

ComputeScheduler::ComputeScheduler(int slots, double headroom) : slots_(slots), headroom_(headroom) {
  if (slots < 1) throw Error("compute scheduler: at least one slot");
  if (!(headroom > 0 && headroom <= 1)) throw Error("compute scheduler: headroom must be in (0, 1]");
}

ComputeScheduler::Turn& ComputeScheduler::Turn::operator=(Turn&& o) noexcept {
  if (this != &o) {
    if (owner_) owner_->release();
    owner_ = o.owner_;
    o.owner_ = nullptr;
  }
  return *this;
}

ComputeScheduler::Turn::~Turn() {
  if (owner_) owner_->release();
}

ComputeScheduler::Turn ComputeScheduler::acquire(int64_t deadline_ns, const std::function<bool()>& cancelled) {
  std::unique_lock<std::mutex> lock(mutex_);
  const Waiter me{deadline_ns, next_order_++};
  waiting_.emplace(me, true);
  for (;;) {
    // Mine when a slot is free and I am the most urgent waiter.
    if (running_ < slots_ && waiting_.begin()->first.order == me.order) {
      waiting_.erase(waiting_.begin());
      ++running_;
      // Another slot may still be free for the next waiter.
      if (running_ < slots_ && !waiting_.empty()) cv_.notify_all();
      return Turn(this);
    }
    if (cancelled) {
      // Unlocked while polling: `cancelled` may take the session's own locks.
      cv_.wait_for(lock, std::chrono::milliseconds(5));
      lock.unlock();
      const bool stop = cancelled();
      lock.lock();
      if (stop) {
        waiting_.erase(me);
        cv_.notify_all();  // I may have been the head that blocked a free slot
        return Turn();
      }
    } else {
      cv_.wait(lock);
    }
  }
}

void ComputeScheduler::release() {
  std::lock_guard<std::mutex> lock(mutex_);
  --running_;
  cv_.notify_all();
}

int ComputeScheduler::waiting() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return static_cast<int>(waiting_.size());
}

int ComputeScheduler::running() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return running_;
}

void ComputeScheduler::add_session(uint64_t session) {
  std::lock_guard<std::mutex> lock(mutex_);
  sessions_.emplace(session, SessionLoad{});
}

void ComputeScheduler::remove_session(uint64_t session) {
  std::lock_guard<std::mutex> lock(mutex_);
  sessions_.erase(session);
}

void ComputeScheduler::set_speaking(uint64_t session, bool speaking) {
  std::lock_guard<std::mutex> lock(mutex_);
  if (auto it = sessions_.find(session); it != sessions_.end()) it->second.speaking = speaking;
}

void ComputeScheduler::report_work(uint64_t session, double compute_seconds, double audio_seconds) {
  if (!(audio_seconds > 0) || !(compute_seconds >= 0)) return;
  std::lock_guard<std::mutex> lock(mutex_);
  auto it = sessions_.find(session);
  if (it == sessions_.end()) return;
  const double load = compute_seconds / audio_seconds;
  // Smoothed over a few seconds of audio: one long slice should not swing admission on its own.
  const double weight = std::min(1.0, audio_seconds / 5.0);
  double& l = it->second.load;
  l = l == 0 ? load : (1 - weight) * l + weight * load;
}

ComputeLoad ComputeScheduler::load() const {
  std::lock_guard<std::mutex> lock(mutex_);
  ComputeLoad out;
  out.capacity = slots_;
  double measured = 0;
  int measured_n = 0;
  for (const auto& [id, s] : sessions_) {
    ++out.sessions;
    if (s.load > 0) {
      measured += s.load;
      ++measured_n;
    }
    if (!s.speaking) continue;
    ++out.speaking;
    out.demand += s.load > 0 ? s.load : kNominalStreamLoad;
  }
  out.expected_new = measured_n ? measured / measured_n : kNominalStreamLoad;
  out.admit = out.demand + out.expected_new <= out.capacity * headroom_;
  return out;
}

}  // namespace kokoro
