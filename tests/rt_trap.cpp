// See rt_trap.h. Allocation forwards to glibc's __libc_* entry points (no dlsym, which may itself allocate);
// the others resolve the next definition with dlsym(RTLD_NEXT) on first use.
#include "rt_trap.h"

#include <dlfcn.h>
#include <pthread.h>
#include <sched.h>
#include <semaphore.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdarg>
#include <cstring>
#include <ctime>

#include "realtime/rt_section.h"

extern "C" {
void* __libc_malloc(size_t);
void __libc_free(void*);
void* __libc_calloc(size_t, size_t);
void* __libc_realloc(void*, size_t);
void* __libc_memalign(size_t, size_t);
}

namespace {

enum Kind {
  kMalloc, kFree, kCalloc, kRealloc, kAlignedAlloc, kPosixMemalign, kMemalign,
  kMutexLock, kMutexTrylock, kRwRead, kRwWrite, kCondWait, kCondTimedwait, kSemWait, kSemTimedwait, kSemPost,
  kWrite, kRead, kNanosleep, kClockNanosleep, kUsleep, kSchedYield, kSyscall, kKinds
};
constexpr const char* kNames[kKinds] = {
    "malloc", "free", "calloc", "realloc", "aligned_alloc", "posix_memalign", "memalign",
    "pthread_mutex_lock", "pthread_mutex_trylock", "pthread_rwlock_rdlock", "pthread_rwlock_wrlock",
    "pthread_cond_wait", "pthread_cond_timedwait", "sem_wait", "sem_timedwait", "sem_post",
    "write", "read", "nanosleep", "clock_nanosleep", "usleep", "sched_yield", "syscall"};

std::atomic<uint64_t> g_counts[kKinds];

inline void note(Kind k) {
  if (kokoro::rt::in_realtime_section()) g_counts[k].fetch_add(1, std::memory_order_relaxed);
}

// The real functions, resolved on first use. Plain atomics rather than function-local statics: a static's
// guard may wait with a futex syscall, which would re-enter the interposed syscall() below.
template <typename Fn>
Fn next(std::atomic<void*>& slot, const char* name, const char* version = nullptr) {
  void* f = slot.load(std::memory_order_acquire);
  if (!f) {
    f = version ? dlvsym(RTLD_NEXT, name, version) : dlsym(RTLD_NEXT, name);
    slot.store(f, std::memory_order_release);
  }
  return reinterpret_cast<Fn>(f);
}

}  // namespace

namespace kokoro::test::rt_trap {

uint64_t violations() {
  uint64_t n = 0;
  for (auto& c : g_counts) n += c.load();
  return n;
}

std::string report() {
  std::string s;
  for (int k = 0; k < kKinds; ++k)
    if (const uint64_t n = g_counts[k].load()) s += (s.empty() ? "" : ", ") + std::string(kNames[k]) + " x" + std::to_string(n);
  return s;
}

void reset() {
  for (auto& c : g_counts) c.store(0);
}

}  // namespace kokoro::test::rt_trap

extern "C" {

// ---- allocation
void* malloc(size_t n) {
  note(kMalloc);
  return __libc_malloc(n);
}
void free(void* p) {
  if (p) note(kFree);
  __libc_free(p);
}
void* calloc(size_t n, size_t size) {
  note(kCalloc);
  return __libc_calloc(n, size);
}
void* realloc(void* p, size_t n) {
  note(kRealloc);
  return __libc_realloc(p, n);
}
void* aligned_alloc(size_t alignment, size_t n) {
  note(kAlignedAlloc);
  return __libc_memalign(alignment, n);
}
void* memalign(size_t alignment, size_t n) {
  note(kMemalign);
  return __libc_memalign(alignment, n);
}
int posix_memalign(void** out, size_t alignment, size_t n) {
  note(kPosixMemalign);
  if (alignment < sizeof(void*) || (alignment & (alignment - 1)) != 0) return EINVAL;
  void* p = __libc_memalign(alignment, n);
  if (!p) return ENOMEM;
  *out = p;
  return 0;
}

// ---- locks and waits
int pthread_mutex_lock(pthread_mutex_t* m) {
  note(kMutexLock);
  static std::atomic<void*> slot;  // constant-initialised: no guard
  auto real = next<int (*)(pthread_mutex_t*)>(slot, "pthread_mutex_lock");
  return real(m);
}
int pthread_mutex_trylock(pthread_mutex_t* m) {
  note(kMutexTrylock);
  static std::atomic<void*> slot;  // constant-initialised: no guard
  auto real = next<int (*)(pthread_mutex_t*)>(slot, "pthread_mutex_trylock");
  return real(m);
}
int pthread_rwlock_rdlock(pthread_rwlock_t* l) {
  note(kRwRead);
  static std::atomic<void*> slot;  // constant-initialised: no guard
  auto real = next<int (*)(pthread_rwlock_t*)>(slot, "pthread_rwlock_rdlock");
  return real(l);
}
int pthread_rwlock_wrlock(pthread_rwlock_t* l) {
  note(kRwWrite);
  static std::atomic<void*> slot;  // constant-initialised: no guard
  auto real = next<int (*)(pthread_rwlock_t*)>(slot, "pthread_rwlock_wrlock");
  return real(l);
}
int pthread_cond_wait(pthread_cond_t* c, pthread_mutex_t* m) {
  note(kCondWait);
  static std::atomic<void*> slot;  // constant-initialised: no guard
  auto real = next<int (*)(pthread_cond_t*, pthread_mutex_t*)>(slot, "pthread_cond_wait", "GLIBC_2.3.2");
  return real(c, m);
}
int pthread_cond_timedwait(pthread_cond_t* c, pthread_mutex_t* m, const struct timespec* t) {
  note(kCondTimedwait);
  static std::atomic<void*> slot;  // constant-initialised: no guard
  auto real = next<int (*)(pthread_cond_t*, pthread_mutex_t*, const struct timespec*)>(slot, "pthread_cond_timedwait",
                                                                                      "GLIBC_2.3.2");
  return real(c, m, t);
}
int sem_wait(sem_t* s) {
  note(kSemWait);
  static std::atomic<void*> slot;  // constant-initialised: no guard
  auto real = next<int (*)(sem_t*)>(slot, "sem_wait");
  return real(s);
}
int sem_timedwait(sem_t* s, const struct timespec* t) {
  note(kSemTimedwait);
  static std::atomic<void*> slot;  // constant-initialised: no guard
  auto real = next<int (*)(sem_t*, const struct timespec*)>(slot, "sem_timedwait");
  return real(s, t);
}
int sem_post(sem_t* s) {
  note(kSemPost);
  static std::atomic<void*> slot;  // constant-initialised: no guard
  auto real = next<int (*)(sem_t*)>(slot, "sem_post");
  return real(s);
}

// ---- syscall wrappers
ssize_t write(int fd, const void* buf, size_t n) {
  note(kWrite);
  static std::atomic<void*> slot;  // constant-initialised: no guard
  auto real = next<ssize_t (*)(int, const void*, size_t)>(slot, "write");
  return real(fd, buf, n);
}
ssize_t read(int fd, void* buf, size_t n) {
  note(kRead);
  static std::atomic<void*> slot;  // constant-initialised: no guard
  auto real = next<ssize_t (*)(int, void*, size_t)>(slot, "read");
  return real(fd, buf, n);
}
int nanosleep(const struct timespec* req, struct timespec* rem) {
  note(kNanosleep);
  static std::atomic<void*> slot;  // constant-initialised: no guard
  auto real = next<int (*)(const struct timespec*, struct timespec*)>(slot, "nanosleep");
  return real(req, rem);
}
int clock_nanosleep(clockid_t clock, int flags, const struct timespec* req, struct timespec* rem) {
  note(kClockNanosleep);
  static std::atomic<void*> slot;  // constant-initialised: no guard
  auto real = next<int (*)(clockid_t, int, const struct timespec*, struct timespec*)>(slot, "clock_nanosleep");
  return real(clock, flags, req, rem);
}
int usleep(useconds_t us) {
  note(kUsleep);
  static std::atomic<void*> slot;  // constant-initialised: no guard
  auto real = next<int (*)(useconds_t)>(slot, "usleep");
  return real(us);
}
int sched_yield() {
  note(kSchedYield);
  static std::atomic<void*> slot;  // constant-initialised: no guard
  auto real = next<int (*)()>(slot, "sched_yield");
  return real();
}
long syscall(long number, ...) {
  note(kSyscall);
  static std::atomic<void*> slot;  // constant-initialised: no guard
  auto real = next<long (*)(long, ...)>(slot, "syscall");
  va_list ap;
  va_start(ap, number);
  long a[6];
  for (long& x : a) x = va_arg(ap, long);
  va_end(ap);
  return real(number, a[0], a[1], a[2], a[3], a[4], a[5]);
}

}  // extern "C"
