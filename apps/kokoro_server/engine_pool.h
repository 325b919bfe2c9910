// The server's use of the engine, through the C API only (include/kokoro.h): one model, and a pool of up to
// --max-sessions sessions that requests borrow (a session owns engine threads and rings, so it is reused
// instead of made per request). Each session has a thread of ours that makes its kokoro_session_speak calls,
// one job after another; the callbacks feed the job's SpeechStream. Admission is the model's: a lease is
// refused when kokoro_model_load says one more real-time stream does not fit, or when every session is taken.
#pragma once

#include <condition_variable>
#include <cstddef>
#include <deque>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "apps/kokoro_server/speech_stream.h"
#include "kokoro.h"

namespace kokoro::server {

struct SpeakJob {
  std::string text;
  std::string voice;     // engine spec (names of the model's voices only)
  std::string language;  // "" for the voice's
  float speed = 1.0f;
  std::shared_ptr<SpeechStream> stream;
};

class EnginePool {
 public:
  // Opens the model (throws std::runtime_error with kokoro_last_error's message on failure).
  EnginePool(const kokoro_config& config, int max_sessions);
  ~EnginePool();
  EnginePool(const EnginePool&) = delete;
  EnginePool& operator=(const EnginePool&) = delete;

  const std::vector<std::string>& voices() const { return voices_; }
  int max_sessions() const { return max_sessions_; }

  struct Slot;
  // Exclusive use of one session until destroyed. Destroying it stops what it still runs.
  class Lease {
   public:
    ~Lease();
    Lease(const Lease&) = delete;
    Lease& operator=(const Lease&) = delete;
    // Runs the job on the session's thread after the jobs queued before it.
    void speak(SpeakJob job);

   private:
    friend class EnginePool;
    Lease(EnginePool& pool, Slot& slot) : pool_(pool), slot_(slot) {}
    EnginePool& pool_;
    Slot& slot_;
  };

  // A lease, or nullptr with *why (for the 503) when no session is free or admission says no.
  std::unique_ptr<Lease> acquire(std::string* why);

  kokoro_load load();
  int leased() const;  // sessions not free for the next request (leased, or finishing a stopped job)
  // Shutdown, before the I/O side goes: stops every job (queued or speaking) and waits until the session
  // threads are idle, so that no engine thread touches a connection afterwards. Leases stay valid.
  void stop_all();

 private:
  void run(Slot& slot);

  kokoro_model* model_ = nullptr;
  std::vector<std::string> voices_;
  const int max_sessions_;
  mutable std::mutex mutex_;
  std::vector<std::unique_ptr<Slot>> slots_;
  bool shutting_down_ = false;
};

}  // namespace kokoro::server
