// The streaming engine's side of the compute scheduler (engine/compute_scheduler.h): the deadline of a
// session's next work item, taking a turn for it, reporting its load, and whether this session may give the
// shared weights' pages back while others compute.
#include <algorithm>
#include <chrono>

#include "engine/stream_engine.h"

namespace kokoro {

int64_t StreamEngine::deadline_ns(uint64_t utterance, uint64_t ahead_samples) const {
  std::lock_guard<std::mutex> lock(mutex_);
  auto it = utterances_.find(utterance);
  if (it == utterances_.end()) return steady_now_ns();
  const Utterance& u = it->second;
  if (!u.started_audio) {
    const int64_t queued = std::chrono::duration_cast<std::chrono::nanoseconds>(u.queued.time_since_epoch()).count();
    return std::max(queued, previous_dry_ns_);
  }
  const uint64_t end = audio_.write_position() + ahead_samples;
  const double ahead_s = static_cast<double>(end - std::min(end, u.playback_pos)) / kSampleRate;
  return u.playback_ns + static_cast<int64_t>(ahead_s * 1e9);
}

bool StreamEngine::take_turn(ComputeScheduler::Turn& turn, uint64_t generation, int64_t deadline) {
  if (!options_.scheduler) return true;
  turn = options_.scheduler->acquire(deadline, [&] { return quit_.load() || stale(generation); });
  return options_.scheduler->granted(turn);
}

void StreamEngine::report_work(double compute_seconds, double audio_seconds) {
  if (options_.scheduler) options_.scheduler->report_work(reinterpret_cast<uintptr_t>(this), compute_seconds, audio_seconds);
}

bool StreamEngine::may_release_pages() const {
  if (!options_.scheduler) return true;
  bool me = false;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    me = !utterances_.empty();
  }
  return options_.scheduler->load().speaking <= (me ? 1 : 0);
}

}  // namespace kokoro
