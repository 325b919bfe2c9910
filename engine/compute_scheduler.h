// One scheduler for every session on a model: the compute work of all sessions (a segment's acoustic model,
// a decoder half, a slice, a whole segment) takes turns on a fixed number of slots, earliest deadline first.
//
// A work item's deadline is the moment its session's audio would run out without it (engine/stream_engine.h
// computes it: a new utterance's first work has the time it was queued, so that first audio never waits
// behind another session's long tail; later work has the end of the audio already vocoded, on the clock of a
// listener who started playing at the first audio). When a slot frees, the waiting item with the earliest
// deadline gets it. Items are coarse (milliseconds to a few hundred), so a mutex and a condition variable
// are cheap here; none of this runs on an audio thread.
//
// Slots: by default as many as the compute threads. A slot-holder's kernels use the process-wide pool
// (core/parallel.h) when it is free and run on their own thread when another slot-holder has it, so two
// items on two cores both progress; with one slot an item always has every core.
//
// Admission: every session reports the compute time its items took per second of audio they made (its load,
// in slots). The sum over speaking sessions is the demand; one more real-time stream fits while demand plus
// a new stream's expected load stays within the slots times a headroom. A server turns "no" into a 503.
#pragma once
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <map>
#include <mutex>

namespace kokoro {

struct ComputeLoad {
  int sessions = 0;       // registered sessions
  int speaking = 0;       // sessions with an utterance in progress
  double demand = 0;      // slots the speaking sessions need to stay real-time (sum of their loads)
  double capacity = 0;    // slots
  double expected_new = 0;  // the load a new stream is expected to add
  bool admit = false;     // demand + expected_new <= capacity * headroom
};

class ComputeScheduler {
 public:
  // slots >= 1. headroom: the share of the slots that admission fills at most (timing noise, the output
  // threads and the audio server need the rest).
  explicit ComputeScheduler(int slots, double headroom = 0.85);
  ComputeScheduler(const ComputeScheduler&) = delete;
  ComputeScheduler& operator=(const ComputeScheduler&) = delete;

  // A held slot; releases it when destroyed.
  class Turn {
   public:
    Turn() = default;
    Turn(Turn&& o) noexcept : owner_(o.owner_) { o.owner_ = nullptr; }
    Turn& operator=(Turn&& o) noexcept;
    ~Turn();

   private:
    friend class ComputeScheduler;
    explicit Turn(ComputeScheduler* owner) : owner_(owner) {}
    ComputeScheduler* owner_ = nullptr;
  };

  // Blocks until this item may run: a slot is free and no waiting item has an earlier deadline (equal
  // deadlines: first come, first served). `cancelled` (may be empty) is polled while waiting, every few ms:
  // true gives up and returns an empty Turn (the session was stopped or is quitting).
  Turn acquire(int64_t deadline_ns, const std::function<bool()>& cancelled = {});
  bool granted(const Turn& t) const { return t.owner_ == this; }

  int slots() const { return slots_; }
  int waiting() const;  // items waiting for a slot (tests)
  int running() const;  // slots held now

  // Load accounting, per session id (any unique number: the engine uses its address).
  void add_session(uint64_t session);
  void remove_session(uint64_t session);
  void set_speaking(uint64_t session, bool speaking);
  // A session's items took `compute_seconds` for `audio_seconds` of audio (smoothed per session).
  void report_work(uint64_t session, double compute_seconds, double audio_seconds);
  ComputeLoad load() const;

  // The load a stream is assumed to add before any has been measured (slots per real-time stream).
  static constexpr double kNominalStreamLoad = 0.35;

 private:
  struct Waiter {
    int64_t deadline_ns;
    uint64_t order;  // arrival, for ties
    bool operator<(const Waiter& o) const { return deadline_ns != o.deadline_ns ? deadline_ns < o.deadline_ns : order < o.order; }
  };
  struct SessionLoad {
    bool speaking = false;
    double load = 0;  // slots per real-time stream, smoothed; 0 = not measured yet
  };
  void release();

  const int slots_;
  const double headroom_;
  mutable std::mutex mutex_;
  std::condition_variable cv_;
  int running_ = 0;
  uint64_t next_order_ = 0;
  std::map<Waiter, bool> waiting_;  // ordered by deadline; value unused
  std::map<uint64_t, SessionLoad> sessions_;
};

}  // namespace kokoro
