#include "realtime/playback_queue.h"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>

#include "core/error.h"

namespace kokoro {
namespace {

constexpr std::size_t kMinRingFrames = 8192;    // two of JACK's largest common periods (4096)
constexpr std::size_t kResampleChunk = 4096;    // input samples converted per step of write()
constexpr auto kProducerWait = std::chrono::milliseconds(1);
constexpr auto kMonitorInterval = std::chrono::milliseconds(20);

std::size_t ring_frames(int output_rate, double seconds) {
  if (!(seconds > 0) || seconds > 60) throw Error("audio buffer of " + std::to_string(seconds) + " s is out of range (0..60 s)");
  return std::max(kMinRingFrames, static_cast<std::size_t>(std::ceil(seconds * output_rate)));
}

}  // namespace

PlaybackQueue::PlaybackQueue(std::string name, int input_rate, int output_rate, const SinkOptions& options)
    : name_(std::move(name)),
      stall_timeout_(options.stall_timeout_seconds),
      ring_(ring_frames(output_rate, options.buffer_seconds)),
      resampler_(input_rate, output_rate, options.quality),
      output_rate_(output_rate) {
  if (!(options.stall_timeout_seconds > 0)) throw Error(name_ + ": stall timeout must be positive");
  scratch_.reserve(2 * kResampleChunk * std::max(1, output_rate / std::max(1, input_rate)) + 1024);
  monitor_ = std::thread([this] { monitor_loop(); });
}

PlaybackQueue::~PlaybackQueue() {
  {
    std::lock_guard<std::mutex> lock(monitor_mutex_);
    monitor_stop_ = true;
  }
  monitor_cv_.notify_all();
  monitor_.join();
}

void PlaybackQueue::monitor_loop() {
  bool reported = false;
  std::unique_lock<std::mutex> lock(monitor_mutex_);
  for (;;) {
    const bool stop = monitor_cv_.wait_for(lock, kMonitorInterval, [this] { return monitor_stop_; });
    log_.drain_to_spdlog(name_);
    if (!reported && failed()) {
      spdlog::error("{}: {}", name_, fail_reason_);
      reported = true;
    }
    if (stop) break;
  }
  if (log_.dropped() > 0) spdlog::warn("{}: {} real-time log records were dropped (queue full)", name_, log_.dropped());
}

void PlaybackQueue::fail(const char* reason) noexcept {
  if (fail_claimed_.exchange(true, std::memory_order_acq_rel)) return;
  std::snprintf(fail_reason_, sizeof(fail_reason_), "%s", reason ? reason : "device failed");
  failed_.store(true, std::memory_order_release);
}

void PlaybackQueue::throw_if_failed() const {
  if (failed()) throw Error(name_ + ": " + fail_reason_);
}

void PlaybackQueue::apply_rate_change() {
  const int rate = output_rate_.load(std::memory_order_acquire);
  if (rate > 0 && rate != static_cast<int>(resampler_.output_rate())) {
    resampler_.set_output_rate(rate);
    spdlog::info("{}: device rate is now {} Hz", name_, rate);
  }
}

bool PlaybackQueue::push_blocking(const float* data, std::size_t n) {
  std::size_t done = 0;
  uint64_t last_read = ring_.read_position();
  auto last_progress = std::chrono::steady_clock::now();
  for (;;) {
    done += ring_.write(data + done, n - done);
    if (done == n) return true;
    if (interrupted_.load(std::memory_order_acquire)) return false;
    throw_if_failed();
    const auto now = std::chrono::steady_clock::now();
    const uint64_t read = ring_.read_position();
    if (read != last_read) {
      last_read = read;
      last_progress = now;
    } else if (now - last_progress > stall_timeout_) {
      throw Error(name_ + ": the audio device stopped taking audio (nothing played for " +
                  std::to_string(stall_timeout_.count()) + " s)");
    }
    std::this_thread::sleep_for(kProducerWait);
  }
}

std::size_t PlaybackQueue::write(const float* samples, std::size_t n) {
  throw_if_failed();
  apply_rate_change();
  std::size_t taken = 0;
  while (taken < n && !interrupted_.load(std::memory_order_acquire)) {
    const std::size_t chunk = std::min(kResampleChunk, n - taken);
    scratch_.clear();
    resampler_.process(samples + taken, chunk, scratch_);
    taken += chunk;  // the chunk is inside the resampler now, even if the push is interrupted
    if (!push_blocking(scratch_.data(), scratch_.size())) break;
  }
  frames_written_.fetch_add(taken, std::memory_order_relaxed);
  return taken;
}

void PlaybackQueue::end_utterance() {
  throw_if_failed();
  scratch_.clear();
  resampler_.finish(scratch_);
  // Published before the tail itself: once the callback sees the tail (acquire on the ring position) it
  // also sees the mark, so running dry at the end of the tail is never mistaken for an underrun.
  end_mark_.store(ring_.write_position() + scratch_.size(), std::memory_order_release);
  push_blocking(scratch_.data(), scratch_.size());
}

void PlaybackQueue::flush() {
  resampler_.reset();
  const uint64_t mark = ring_.write_position();
  end_mark_.store(mark, std::memory_order_release);
  flush_mark_.store(mark, std::memory_order_release);
  flush_seq_.fetch_add(1, std::memory_order_acq_rel);
  interrupted_.store(false, std::memory_order_release);
}

void PlaybackQueue::drain(double timeout_seconds) {
  const auto start = std::chrono::steady_clock::now();
  const uint64_t target = ring_.write_position();
  uint64_t last_read = ring_.read_position();
  auto last_progress = start;
  while (ring_.read_position() < target) {
    throw_if_failed();
    const auto now = std::chrono::steady_clock::now();
    const uint64_t read = ring_.read_position();
    if (read != last_read) {
      last_read = read;
      last_progress = now;
    } else if (now - last_progress > stall_timeout_) {
      throw Error(name_ + ": the audio device stopped taking audio while draining (" +
                  std::to_string(target - read) + " samples left)");
    }
    if (now - start > std::chrono::duration<double>(timeout_seconds))
      throw Error(name_ + ": drain timed out after " + std::to_string(timeout_seconds) + " s (" +
                  std::to_string(target - read) + " samples left)");
    std::this_thread::sleep_for(kProducerWait);
  }
}

void PlaybackQueue::render(float* out, std::size_t n) noexcept {
  const uint64_t seq = flush_seq_.load(std::memory_order_acquire);
  if (seq != applied_flush_seq_) {
    applied_flush_seq_ = seq;
    const uint64_t mark = flush_mark_.load(std::memory_order_acquire);
    const uint64_t pos = ring_.read_position();
    std::size_t faded = 0;
    std::size_t dropped = 0;
    if (mark > pos) {
      faded = ring_.read(out, std::min({n, kFlushFadeFrames, static_cast<std::size_t>(mark - pos)}));
      for (std::size_t i = 0; i < faded; ++i) out[i] *= static_cast<float>(faded - i) / static_cast<float>(faded + 1);
      dropped = ring_.discard_until(mark);
    }
    std::fill(out + faded, out + n, 0.0f);
    frames_played_.fetch_add(faded, std::memory_order_relaxed);
    flushes_.fetch_add(1, std::memory_order_relaxed);
    in_underrun_ = false;
    log_.log(rt::RtLogLevel::debug, "flush: faded out {} samples, dropped {} queued samples",
             static_cast<int64_t>(faded), static_cast<int64_t>(dropped));
    return;
  }

  const std::size_t got = ring_.read(out, n);
  if (got > 0) {
    frames_played_.fetch_add(got, std::memory_order_relaxed);
    if (in_underrun_) {
      in_underrun_ = false;
      log_.log(rt::RtLogLevel::info, "audio resumed after an underrun");
    }
  }
  if (got < n) {
    std::fill(out + got, out + n, 0.0f);
    if (!in_underrun_ && ring_.read_position() != end_mark_.load(std::memory_order_acquire)) {
      in_underrun_ = true;
      underruns_.fetch_add(1, std::memory_order_relaxed);
      log_.log(rt::RtLogLevel::warn, "underrun: ran out of audio {} samples into a period of {}; playing silence",
               static_cast<int64_t>(got), static_cast<int64_t>(n));
    }
  }
}

PlaybackQueue::CallbackScope::CallbackScope(PlaybackQueue& queue, std::size_t frames) noexcept
    : queue_(queue), start_(std::chrono::steady_clock::now()) {
  if (queue_.period_.load(std::memory_order_relaxed) != static_cast<int>(frames))
    queue_.period_.store(static_cast<int>(frames), std::memory_order_relaxed);
}

PlaybackQueue::CallbackScope::~CallbackScope() noexcept {
  const auto ns = static_cast<uint64_t>(
      std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now() - start_).count());
  queue_.callbacks_.fetch_add(1, std::memory_order_relaxed);
  uint64_t worst = queue_.worst_callback_ns_.load(std::memory_order_relaxed);
  while (ns > worst && !queue_.worst_callback_ns_.compare_exchange_weak(worst, ns, std::memory_order_relaxed)) {
  }
}

SinkStats PlaybackQueue::stats() const {
  SinkStats s;
  s.frames_written = frames_written_.load(std::memory_order_relaxed);
  s.frames_played = frames_played_.load(std::memory_order_relaxed);
  s.underruns = underruns_.load(std::memory_order_relaxed);
  s.xruns = xruns_.load(std::memory_order_relaxed);
  s.callbacks = callbacks_.load(std::memory_order_relaxed);
  s.worst_callback_ns = worst_callback_ns_.load(std::memory_order_relaxed);
  s.flushes = flushes_.load(std::memory_order_relaxed);
  s.output_rate = output_rate_.load(std::memory_order_relaxed);
  s.period_frames = period_.load(std::memory_order_relaxed);
  if (failed()) s.error = fail_reason_;
  return s;
}

}  // namespace kokoro
