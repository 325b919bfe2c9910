// Lock-free single-producer/single-consumer ring of trivially copyable items (frames between the acoustic
// and vocoder workers, audio samples between the vocoder and the device callback).
//
// Threads: exactly one producer thread calls write/push/space/write_position, exactly one consumer thread
// calls read/pop/available/read_position/discard*. The queries may also be called from other threads; they
// then return a snapshot that may be stale by the time it is used.
//
// Memory order: the producer copies items in, then publishes them with a release store of its position;
// the consumer's acquire load of that position makes the items visible. Symmetrically the consumer releases
// slots with a release store of its position, which the producer acquires before overwriting them. No other
// synchronisation is used: no locks, no syscalls, no allocation after construction.
//
// Positions are free-running 64-bit counts of items written/read since construction (or reset); the slot
// of position p is p & (capacity - 1). They never wrap in practice (2^64 items), and the arithmetic is
// modular anyway because the capacity is a power of two.
//
// Barge-in protocol (dropping queued items without a lock):
//   - consumer alone: discard_all() drops everything visible to the consumer now. Items the producer writes
//     a moment later are kept, so this alone cannot tell stale items from fresh ones.
//   - exact form: the producer stops writing stale items, takes mark = write_position(), and hands the mark
//     to the consumer through an atomic (release/acquire). The consumer calls discard_until(mark): every item
//     written before the mark is dropped, every item written after it is kept. realtime/playback_queue.h
//     uses this for AudioSink::flush().
//
// reset() is NOT thread-safe: call it only while neither side is inside any ring call and with a
// happens-before edge to both (threads joined, stream stopped, or external handshake).
#pragma once
#include <algorithm>
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <new>
#include <string>
#include <type_traits>

#include "core/error.h"

namespace kokoro {

inline constexpr std::size_t kCacheLineSize = 64;

template <typename T>
class SpscRing {
  static_assert(std::is_trivially_copyable_v<T>, "SpscRing copies items with memcpy");

 public:
  // Capacity is min_capacity rounded up to a power of two. Throws kokoro::Error for 0 or absurd sizes.
  explicit SpscRing(std::size_t min_capacity) : capacity_(round_up_pow2(min_capacity)), mask_(capacity_ - 1) {
    buffer_ = static_cast<T*>(::operator new(capacity_ * sizeof(T), std::align_val_t(kCacheLineSize)));
    std::memset(static_cast<void*>(buffer_), 0, capacity_ * sizeof(T));
  }
  ~SpscRing() { ::operator delete(buffer_, std::align_val_t(kCacheLineSize)); }
  SpscRing(const SpscRing&) = delete;
  SpscRing& operator=(const SpscRing&) = delete;

  std::size_t capacity() const noexcept { return capacity_; }

  // ---- producer ----

  // Copies up to n items in; returns how many fit (0 when full).
  std::size_t write(const T* items, std::size_t n) noexcept {
    const uint64_t w = write_pos_.load(std::memory_order_relaxed);
    std::size_t free_slots = capacity_ - static_cast<std::size_t>(w - read_pos_cache_);
    if (free_slots < n) {  // refresh the cached consumer position only when it could matter
      read_pos_cache_ = read_pos_.load(std::memory_order_acquire);
      free_slots = capacity_ - static_cast<std::size_t>(w - read_pos_cache_);
    }
    n = std::min(n, free_slots);
    if (n == 0) return 0;
    const std::size_t start = static_cast<std::size_t>(w) & mask_;
    const std::size_t first = std::min(n, capacity_ - start);
    std::memcpy(static_cast<void*>(buffer_ + start), items, first * sizeof(T));
    std::memcpy(static_cast<void*>(buffer_), items + first, (n - first) * sizeof(T));
    write_pos_.store(w + n, std::memory_order_release);
    return n;
  }
  bool push(const T& item) noexcept { return write(&item, 1) == 1; }

  // Free slots. Exact on the producer thread (it can only grow until the next write).
  std::size_t space() const noexcept {
    const uint64_t w = write_pos_.load(std::memory_order_acquire);
    const uint64_t r = read_pos_.load(std::memory_order_acquire);
    const std::size_t used = r > w ? 0 : static_cast<std::size_t>(w - r);  // r > w only in a stale snapshot
    return used >= capacity_ ? 0 : capacity_ - used;
  }
  // Total items written; the mark for discard_until().
  uint64_t write_position() const noexcept { return write_pos_.load(std::memory_order_acquire); }

  // ---- consumer ----

  // Copies up to n items out; returns how many there were (0 when empty).
  std::size_t read(T* out, std::size_t n) noexcept {
    const uint64_t r = read_pos_.load(std::memory_order_relaxed);
    std::size_t queued = static_cast<std::size_t>(write_pos_cache_ - r);
    if (queued < n) {
      write_pos_cache_ = write_pos_.load(std::memory_order_acquire);
      queued = static_cast<std::size_t>(write_pos_cache_ - r);
    }
    n = std::min(n, queued);
    if (n == 0) return 0;
    const std::size_t start = static_cast<std::size_t>(r) & mask_;
    const std::size_t first = std::min(n, capacity_ - start);
    std::memcpy(static_cast<void*>(out), buffer_ + start, first * sizeof(T));
    std::memcpy(static_cast<void*>(out + first), buffer_, (n - first) * sizeof(T));
    read_pos_.store(r + n, std::memory_order_release);
    return n;
  }
  bool pop(T& item) noexcept { return read(&item, 1) == 1; }

  // Queued items. Exact on the consumer thread (it can only grow until the next read).
  std::size_t available() const noexcept {
    const uint64_t r = read_pos_.load(std::memory_order_acquire);  // read first: w loaded later is >= r
    const uint64_t w = write_pos_.load(std::memory_order_acquire);
    return std::min(capacity_, static_cast<std::size_t>(w - r));
  }
  // Total items read or discarded.
  uint64_t read_position() const noexcept { return read_pos_.load(std::memory_order_acquire); }

  // Drops up to n queued items without copying them; returns how many were dropped.
  std::size_t discard(std::size_t n) noexcept {
    const uint64_t r = read_pos_.load(std::memory_order_relaxed);
    write_pos_cache_ = write_pos_.load(std::memory_order_acquire);
    n = std::min(n, static_cast<std::size_t>(write_pos_cache_ - r));
    if (n > 0) read_pos_.store(r + n, std::memory_order_release);
    return n;
  }
  // Drops everything queued now (see the barge-in protocol above).
  std::size_t discard_all() noexcept { return discard(capacity_); }
  // Drops the items written before `mark` (a write_position() taken by the producer); items written after
  // the mark stay queued. Returns how many were dropped (0 if the consumer is already past the mark).
  std::size_t discard_until(uint64_t mark) noexcept {
    const uint64_t r = read_pos_.load(std::memory_order_relaxed);
    if (mark <= r) return 0;
    return discard(static_cast<std::size_t>(mark - r));
  }

  // Empties the ring and restarts positions at 0. Only when both sides are quiescent (see above).
  void reset() noexcept {
    write_pos_.store(0, std::memory_order_relaxed);
    read_pos_.store(0, std::memory_order_relaxed);
    read_pos_cache_ = 0;
    write_pos_cache_ = 0;
  }

 private:
  static std::size_t round_up_pow2(std::size_t n) {
    constexpr std::size_t kMax = std::size_t{1} << 40;
    if (n == 0 || n > kMax)
      throw Error("SpscRing: capacity " + std::to_string(n) + " is out of range (1.." + std::to_string(kMax) +
                  " items)");
    std::size_t c = 1;
    while (c < n) c <<= 1;
    return c;
  }

  // Producer-owned line: its position and its cached copy of the consumer's position.
  alignas(kCacheLineSize) std::atomic<uint64_t> write_pos_{0};
  uint64_t read_pos_cache_ = 0;
  // Consumer-owned line.
  alignas(kCacheLineSize) std::atomic<uint64_t> read_pos_{0};
  uint64_t write_pos_cache_ = 0;
  // Read-only after construction, shared by both sides without contention.
  alignas(kCacheLineSize) T* buffer_ = nullptr;
  const std::size_t capacity_;
  const std::size_t mask_;
};

// The instantiations the engine uses are compiled once in spsc_ring.cpp.
extern template class SpscRing<float>;
extern template class SpscRing<uint64_t>;

}  // namespace kokoro
