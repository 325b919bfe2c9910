#include "apps/kokoro_server/engine_pool.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <stdexcept>

namespace kokoro::server {

struct EnginePool::Slot {
  kokoro_session* session = nullptr;
  std::thread thread;
  std::condition_variable wake;
  std::deque<SpeakJob> jobs;
  std::shared_ptr<SpeechStream> running;  // the job inside kokoro_session_speak now
  bool leased = false;
  bool idle() const { return !leased && !running && jobs.empty(); }
};

namespace {

// The engine's own admission figures (engine/compute_scheduler.h: kNominalStreamLoad, the 0.85 headroom), for
// the requests kokoro_model_load cannot see yet.
constexpr double kNominalStreamLoad = 0.35;
constexpr double kAdmissionHeadroom = 0.85;

int on_audio(const float* samples, size_t count, void* user) {
  return static_cast<SpeechStream*>(user)->push_audio(samples, count) ? 0 : 1;
}

int on_event(const kokoro_event* event, void* user) {
  auto* stream = static_cast<SpeechStream*>(user);
  if (event->kind != KOKORO_EVENT_WORD) return stream->cancelled() ? 1 : 0;
  WordTiming w{event->text_begin, event->text_end, event->start_sample, event->end_sample};
  return stream->push_word(w) ? 0 : 1;
}

}  // namespace

EnginePool::EnginePool(const kokoro_config& config, int max_sessions) : max_sessions_(max_sessions) {
  model_ = kokoro_model_open(&config);
  if (!model_) throw std::runtime_error(kokoro_last_error());
  const char* const* names = nullptr;
  size_t count = 0;
  if (kokoro_model_list_voices(model_, &names, &count) != KOKORO_OK) throw std::runtime_error(kokoro_last_error());
  voices_.assign(names, names + count);
}

EnginePool::~EnginePool() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    shutting_down_ = true;
    for (auto& s : slots_) {
      for (auto& job : s->jobs) job.stream->cancel();
      if (s->running) s->running->cancel();
      s->wake.notify_all();
    }
  }
  for (auto& s : slots_) {
    kokoro_session_stop(s->session);
    if (s->thread.joinable()) s->thread.join();
    kokoro_session_close(s->session);
  }
  kokoro_model_close(model_);
}

void EnginePool::run(Slot& slot) {
  std::unique_lock<std::mutex> lock(mutex_);
  for (;;) {
    slot.wake.wait(lock, [&] { return shutting_down_ || !slot.jobs.empty(); });
    if (shutting_down_) {
      for (auto& job : slot.jobs) job.stream->finish(KOKORO_STOPPED, "server shutting down");
      slot.jobs.clear();
      return;
    }
    SpeakJob job = std::move(slot.jobs.front());
    slot.jobs.pop_front();
    slot.running = job.stream;
    lock.unlock();

    int status = KOKORO_STOPPED;
    std::string error = "stopped";
    if (!job.stream->cancelled()) {
      kokoro_speak_options options{};
      options.size = sizeof options;
      options.voice = job.voice.c_str();
      options.language = job.language.empty() ? nullptr : job.language.c_str();
      options.speed = job.speed;
      job.stream->mark_started();
      status = kokoro_session_speak(slot.session, job.text.c_str(), &options, on_audio, on_event, job.stream.get());
      error = status == KOKORO_OK ? "" : kokoro_last_error();
    }
    job.stream->finish(status, error);

    lock.lock();
    slot.running.reset();
  }
}

std::unique_ptr<EnginePool::Lease> EnginePool::acquire(std::string* why) {
  std::lock_guard<std::mutex> lock(mutex_);
  Slot* free_slot = nullptr;
  for (auto& s : slots_)
    if (s->idle()) {
      free_slot = s.get();
      break;
    }
  if (!free_slot && static_cast<int>(slots_.size()) >= max_sessions_) {
    *why = "all " + std::to_string(max_sessions_) + " sessions are busy (--max-sessions)";
    return nullptr;
  }
  kokoro_load load{};
  load.size = sizeof load;
  if (kokoro_model_load(model_, &load) == KOKORO_OK) {
    // Leases whose job has not reached kokoro_session_speak yet (a burst of requests arrives faster than the
    // engine threads start speaking) are not in the model's demand: count each as a typical stream, so that
    // sixteen requests at once do not all see an idle model.
    int pending = -load.speaking;
    for (auto& s : slots_) pending += s->leased ? 1 : 0;
    const double per_stream = load.speaking > 0 ? load.demand / load.speaking : kNominalStreamLoad;
    const bool fits = load.admit && (pending <= 0 || load.demand + per_stream * (pending + 1) <=
                                                         load.capacity * kAdmissionHeadroom);
    if (!fits) {
      char text[200];
      std::snprintf(text, sizeof text,
                    "no capacity for one more real-time stream (%d speaking, %d starting, demand %.2f of %.2f cores)",
                    load.speaking, std::max(pending, 0), load.demand, load.capacity);
      *why = text;
      return nullptr;
    }
  }
  if (!free_slot) {
    auto slot = std::make_unique<Slot>();
    slot->session = kokoro_session_new(model_, nullptr);
    if (!slot->session) {
      *why = std::string("could not open a session: ") + kokoro_last_error();
      return nullptr;
    }
    Slot* raw = slot.get();
    slot->thread = std::thread([this, raw] { run(*raw); });
    slots_.push_back(std::move(slot));
    free_slot = raw;
  }
  free_slot->leased = true;
  return std::unique_ptr<Lease>(new Lease(*this, *free_slot));
}

void EnginePool::Lease::speak(SpeakJob job) {
  std::lock_guard<std::mutex> lock(pool_.mutex_);
  slot_.jobs.push_back(std::move(job));
  slot_.wake.notify_all();
}

EnginePool::Lease::~Lease() {
  bool stop = false;
  {
    std::lock_guard<std::mutex> lock(pool_.mutex_);
    for (auto& job : slot_.jobs) job.stream->finish(KOKORO_STOPPED, "stopped");
    slot_.jobs.clear();
    if (slot_.running && !slot_.running->cancelled()) {
      // Left before the end (client gone): stop it. A job that ran to its end has nothing to stop.
      slot_.running->cancel();
      stop = true;
    }
  }
  // Outside the lock: kokoro_session_stop waits for a callback in progress. The slot stays leased meanwhile,
  // so no other request's job can be on it.
  if (stop) kokoro_session_stop(slot_.session);
  std::lock_guard<std::mutex> lock(pool_.mutex_);
  slot_.leased = false;
}

void EnginePool::stop_all() {
  std::vector<kokoro_session*> sessions;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    for (auto& s : slots_) {
      for (auto& job : s->jobs) job.stream->cancel();
      if (s->running) s->running->cancel();
      sessions.push_back(s->session);
    }
  }
  for (auto* session : sessions) kokoro_session_stop(session);
  // A cancelled job returns within a slice; queued ones return at once.
  for (int i = 0; i < 1000; ++i) {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      bool busy = false;
      for (auto& s : slots_) busy |= s->running != nullptr || !s->jobs.empty();
      if (!busy) return;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
}

kokoro_load EnginePool::load() {
  kokoro_load load{};
  load.size = sizeof load;
  kokoro_model_load(model_, &load);
  return load;
}

int EnginePool::leased() const {
  std::lock_guard<std::mutex> lock(mutex_);
  int n = 0;
  // Not free: leased, or still finishing a job its client left (its lease ends before the stopped job
  // returns); lease() takes only idle slots, so the metric agrees with what the next request gets.
  for (auto& s : slots_) n += s->idle() ? 0 : 1;
  return n;
}

}  // namespace kokoro::server
