// Real-time-safety trap for tests: this binary defines malloc/free/calloc/realloc/aligned allocation,
// pthread mutex/rwlock/condition/semaphore waits and common syscall wrappers (write, read, nanosleep,
// usleep, sched_yield, syscall). Each forwards to glibc, and counts a violation when called on a thread that
// is inside kokoro::rt::RealtimeSection (which every device callback opens first). Only linked into
// test_realtime_safety; not built for sanitizer trees (the sanitizers own malloc themselves).
#pragma once
#include <cstdint>
#include <string>

namespace kokoro::test::rt_trap {

uint64_t violations();
// "malloc x3, pthread_mutex_lock x1" (empty if none).
std::string report();
void reset();

}  // namespace kokoro::test::rt_trap
