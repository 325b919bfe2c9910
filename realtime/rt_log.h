// Logging from real-time code: the callback pushes fixed-size records (a static format string and two
// integers) into a lock-free SPSC ring; a normal thread drains them to spdlog. A full queue drops the
// record and counts the drop instead of waiting.
#pragma once
#include <atomic>
#include <cstdint>
#include <functional>
#include <string>

#include "ringbuffer/spsc_ring.h"

namespace kokoro::rt {

enum class RtLogLevel : uint8_t { debug, info, warn, error };

struct RtLogRecord {
  const char* format = nullptr;  // a string literal with up to two "{}" placeholders
  int64_t a = 0;
  int64_t b = 0;
  RtLogLevel level = RtLogLevel::info;
};

class RtLog {
 public:
  explicit RtLog(std::size_t capacity = 256) : ring_(capacity) {}

  // Real-time side (one thread). The format must outlive the drain: use a string literal.
  void log(RtLogLevel level, const char* format, int64_t a = 0, int64_t b = 0) noexcept {
    if (!ring_.push(RtLogRecord{format, a, b, level})) dropped_.fetch_add(1, std::memory_order_relaxed);
  }

  // Normal side (one thread). Hands every queued record to `sink`; returns how many.
  std::size_t drain(const std::function<void(const RtLogRecord&)>& sink);
  // Normal side. Formats queued records and logs them through spdlog as "<prefix>: <message>".
  std::size_t drain_to_spdlog(const std::string& prefix);

  uint64_t dropped() const noexcept { return dropped_.load(std::memory_order_relaxed); }
  static std::string format(const RtLogRecord& record);

 private:
  SpscRing<RtLogRecord> ring_;
  std::atomic<uint64_t> dropped_{0};
};

}  // namespace kokoro::rt
