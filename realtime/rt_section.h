// Marks the calling thread as running real-time code (a device callback) for the lifetime of a
// RealtimeSection. Production code pays one thread-local increment per callback; the RT-safety test
// interposes malloc/free/locks/syscall wrappers and counts the calls made while in_realtime_section().
#pragma once

namespace kokoro::rt {

class RealtimeSection {
 public:
  RealtimeSection() noexcept;
  ~RealtimeSection() noexcept;
  RealtimeSection(const RealtimeSection&) = delete;
  RealtimeSection& operator=(const RealtimeSection&) = delete;
};

// True while the calling thread is inside a RealtimeSection. Async-signal-safe, never allocates.
bool in_realtime_section() noexcept;

}  // namespace kokoro::rt
