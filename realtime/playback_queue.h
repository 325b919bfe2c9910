// The part shared by the JACK and PortAudio sinks: the SPSC ring between the producer (vocoder worker) and
// the device callback, with resampling, back-pressure, barge-in marks, underrun accounting and statistics.
//
// Producer side (one thread): write() resamples to the device rate and pushes into the ring, sleeping 1 ms
// at a time while it is full; end_utterance() and flush() publish positions in the ring ("marks") through
// atomics; the callback compares them with its own position.
//   end mark:   the position where the current utterance ends, or pauses for text that has not come yet
//               (mark_pause). Running dry exactly there is the normal end of speech; running dry anywhere
//               else is an underrun.
//   flush mark: everything written before it is stale. The callback fades the stale audio out over at most
//               kFlushFadeFrames, drops the rest with SpscRing::discard_until(), and outputs silence for the
//               rest of that period; audio written after the mark is kept.
// Callback side (one thread): render() only reads the ring, atomics and its own members: no allocation,
// locks, logging (records go to an RtLog) or syscalls.
// Other threads: fail() (backend shutdown notifications), set_output_rate(), count_xrun(), stats().
//
// A monitor thread drains the RtLog to spdlog every 20 ms and reports a failure once.
#pragma once
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "realtime/audio_sink.h"
#include "realtime/resampler.h"
#include "realtime/rt_log.h"
#include "realtime/rt_section.h"
#include "ringbuffer/spsc_ring.h"

namespace kokoro {

inline constexpr std::size_t kFlushFadeFrames = 128;  // 2.7 ms at 48 kHz: long enough to avoid a click

class PlaybackQueue {
 public:
  // name appears in error messages and logs ("JACK client kokoro"). Uses options.quality, buffer_seconds
  // and stall_timeout_seconds.
  PlaybackQueue(std::string name, int input_rate, int output_rate, const SinkOptions& options);
  ~PlaybackQueue();
  PlaybackQueue(const PlaybackQueue&) = delete;
  PlaybackQueue& operator=(const PlaybackQueue&) = delete;

  // ---- producer thread (see AudioSink for the contract) ----
  std::size_t write(const float* samples, std::size_t n);
  void end_utterance();
  // The same marks as end_utterance() (the tail out, running dry at the mark is no underrun) for a pause
  // within an utterance: what follows continues it (AudioSink::mark_pause).
  void mark_pause() { end_utterance(); }
  void flush();
  void drain(double timeout_seconds);

  // ---- any thread ----
  void interrupt() noexcept { interrupted_.store(true, std::memory_order_release); }
  // Marks the device as failed; the next producer call throws "<name>: <reason>". Copies the reason into a
  // fixed buffer (no allocation); the first call wins.
  void fail(const char* reason) noexcept;
  bool failed() const noexcept { return failed_.load(std::memory_order_acquire); }
  // The device rate changed; write() resamples to the new rate from its next call on.
  void set_output_rate(int rate) noexcept { output_rate_.store(rate, std::memory_order_release); }
  void set_period(int frames) noexcept { period_.store(frames, std::memory_order_relaxed); }
  void count_xrun() noexcept { xruns_.fetch_add(1, std::memory_order_relaxed); }
  SinkStats stats() const;
  const std::string& name() const { return name_; }
  std::size_t capacity() const { return ring_.capacity(); }
  std::size_t queued() const { return ring_.available(); }

  // ---- callback thread ----
  // Fills out[0, n) with queued audio, then silence. Bounded: at most two memcpy and one fill of n floats.
  void render(float* out, std::size_t n) noexcept;
  rt::RtLog& log() noexcept { return log_; }

  // What every device callback opens first: marks the thread as real-time (for the safety test) and
  // records the callback count and duration when it closes. steady_clock is read through the vDSO
  // (no syscall on the tsc/kvm-clock clock sources).
  class CallbackScope {
   public:
    CallbackScope(PlaybackQueue& queue, std::size_t frames) noexcept;
    ~CallbackScope() noexcept;

   private:
    rt::RealtimeSection section_;
    PlaybackQueue& queue_;
    std::chrono::steady_clock::time_point start_;
  };

 private:
  bool push_blocking(const float* data, std::size_t n);  // false if interrupted
  void throw_if_failed() const;
  void apply_rate_change();
  void monitor_loop();

  const std::string name_;
  const std::chrono::duration<double> stall_timeout_;
  SpscRing<float> ring_;
  rt::RtLog log_;

  // producer-owned
  StreamResampler resampler_;
  std::vector<float> scratch_;

  // published by the producer, read by the callback
  std::atomic<uint64_t> end_mark_{0};
  std::atomic<uint64_t> flush_mark_{0};
  std::atomic<uint64_t> flush_seq_{0};
  std::atomic<bool> interrupted_{false};

  // callback-owned
  uint64_t applied_flush_seq_ = 0;
  bool in_underrun_ = false;

  // statistics and state shared with other threads
  std::atomic<uint64_t> frames_written_{0};
  std::atomic<uint64_t> frames_played_{0};
  std::atomic<uint64_t> underruns_{0};
  std::atomic<uint64_t> xruns_{0};
  std::atomic<uint64_t> callbacks_{0};
  std::atomic<uint64_t> worst_callback_ns_{0};
  std::atomic<uint64_t> flushes_{0};
  std::atomic<int> output_rate_;
  std::atomic<int> period_{0};
  std::atomic<bool> fail_claimed_{false};
  std::atomic<bool> failed_{false};
  char fail_reason_[256] = {};

  // monitor thread
  std::mutex monitor_mutex_;
  std::condition_variable monitor_cv_;
  bool monitor_stop_ = false;
  std::thread monitor_;
};

}  // namespace kokoro
