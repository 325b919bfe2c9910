// One utterance's path from the engine to a client: the engine's callbacks (on an engine thread) push audio
// and word events, the connection (on the I/O thread) takes them. Bounded: when the client reads slower than
// the engine synthesizes, push_audio blocks, which holds up that session's engine and nothing else
// (back-pressure: the server never buffers more than `capacity` samples per stream). cancel() (client gone)
// releases a blocked push at once, and every later callback returns "stop".
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <mutex>
#include <string>
#include <vector>

namespace kokoro::server {

struct WordTiming {
  size_t text_begin = 0, text_end = 0;  // bytes of the text given to the engine
  uint64_t start_sample = 0, end_sample = 0;
};

class SpeechStream {
 public:
  explicit SpeechStream(size_t capacity_samples) : capacity_(capacity_samples) {}

  // ---- engine thread ----
  // Waits while `capacity` samples are queued (a chunk larger than that goes in alone). false: cancelled.
  bool push_audio(const float* samples, size_t count) {
    std::function<void()> wake;
    {
      std::unique_lock<std::mutex> lock(mutex_);
      space_.wait(lock, [&] { return cancelled_ || audio_.empty() || audio_.size() + count <= capacity_; });
      if (cancelled_) return false;
      audio_.insert(audio_.end(), samples, samples + count);
      produced_ += count;
      wake = take_waker();
    }
    if (wake) wake();
    return true;
  }
  bool push_word(const WordTiming& w) {
    std::function<void()> wake;
    {
      std::lock_guard<std::mutex> lock(mutex_);
      if (cancelled_) return false;
      words_.push_back(w);
      wake = take_waker();
    }
    if (wake) wake();
    return true;
  }
  // The engine call returned: its status (a KOKORO_* code) and message.
  void finish(int status, std::string error) {
    std::function<void()> wake;
    {
      std::lock_guard<std::mutex> lock(mutex_);
      done_ = true;
      status_ = status;
      error_ = std::move(error);
      finished_at_ = std::chrono::steady_clock::now();
      wake = take_waker();
    }
    if (wake) wake();
  }
  void mark_started() {
    std::lock_guard<std::mutex> lock(mutex_);
    started_at_ = std::chrono::steady_clock::now();
  }

  // ---- consumer ----
  struct Batch {
    std::vector<float> audio;
    std::vector<WordTiming> words;
    bool done = false;
    int status = 0;
    std::string error;
  };
  // Moves out what is queued. Returns false when there is nothing (not even the end): then the waker is
  // armed and will be called once, on the engine thread, when something arrives.
  bool take(Batch* out) {
    std::lock_guard<std::mutex> lock(mutex_);
    out->audio.clear();
    out->words.clear();
    if (audio_.empty() && words_.empty() && !done_) {
      armed_ = true;
      return false;
    }
    out->audio.swap(audio_);
    out->words.swap(words_);
    out->done = done_;
    out->status = status_;
    out->error = error_;
    space_.notify_all();
    return true;
  }
  void set_waker(std::function<void()> wake) {
    std::lock_guard<std::mutex> lock(mutex_);
    waker_ = std::move(wake);
  }
  void cancel() {
    std::lock_guard<std::mutex> lock(mutex_);
    cancelled_ = true;
    space_.notify_all();
  }
  bool cancelled() const {
    std::lock_guard<std::mutex> lock(mutex_);
    return cancelled_;
  }
  // Synthesis time of the call (start to finish; includes waits on a slow reader) and samples produced.
  double seconds_in_engine() const {
    std::lock_guard<std::mutex> lock(mutex_);
    return std::chrono::duration<double>(finished_at_ - started_at_).count();
  }
  uint64_t samples_produced() const {
    std::lock_guard<std::mutex> lock(mutex_);
    return produced_;
  }

 private:
  std::function<void()> take_waker() {
    if (!armed_ || !waker_) return nullptr;
    armed_ = false;
    return waker_;
  }

  const size_t capacity_;
  mutable std::mutex mutex_;
  std::condition_variable space_;
  std::vector<float> audio_;
  std::vector<WordTiming> words_;
  bool done_ = false, cancelled_ = false, armed_ = false;
  int status_ = 0;
  std::string error_;
  std::function<void()> waker_;
  uint64_t produced_ = 0;
  std::chrono::steady_clock::time_point started_at_{}, finished_at_{};
};

}  // namespace kokoro::server
