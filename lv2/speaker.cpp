#include "lv2/speaker.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstring>

namespace kokoro::lv2 {
namespace {

// The audio ring holds this much speech at the host's rate: the engine runs ahead of playback by up to
// this, and a barge-in drops it all at once.
constexpr double kAudioRingSeconds = 8.0;
constexpr std::size_t kEventRingSize = 4096;
// How long a producer sleeps while a ring is full (run() empties it a block at a time).
constexpr auto kFullRingWait = std::chrono::milliseconds(1);

// Copies at most sizeof(out) - 1 bytes of `s`, not cutting a UTF-8 sequence.
void copy_utf8(char (&out)[sizeof(SpeechEvent::text)], const char* s, std::size_t n) {
  if (n > sizeof out - 1) {
    n = sizeof out - 1;
    while (n > 0 && (static_cast<unsigned char>(s[n]) & 0xC0) == 0x80) --n;  // s[n] continues a sequence
  }
  std::memcpy(out, s, n);
  out[n] = '\0';
}

}  // namespace

Speaker::Speaker(EngineLink* engine, double output_rate, const std::atomic<Generation>& wanted, Notices& notices)
    : engine_(engine),
      wanted_(wanted),
      notices_(notices),
      output_rate_(output_rate),
      audio_(static_cast<std::size_t>(output_rate * kAudioRingSeconds)),
      events_(kEventRingSize),
      resampler_(KOKORO_SAMPLE_RATE, output_rate, ResampleQuality::medium),
      thread_([this] { loop(); }) {}

Speaker::~Speaker() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    quit_ = true;
    if (speaking_ && engine_) engine_->stop();
  }
  wake_.notify_one();
  thread_.join();
}

void Speaker::submit(SpeakRequest request) {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    pending_ = std::move(request);
    // Under the lock: the speaker cannot start the new request meanwhile, so this stops the old one only.
    if (speaking_ && engine_) engine_->stop();
  }
  wake_.notify_one();
}

void Speaker::loop() {
  for (;;) {
    SpeakRequest request;
    {
      std::unique_lock<std::mutex> lock(mutex_);
      wake_.wait(lock, [this] { return quit_ || pending_.has_value(); });
      if (quit_) return;
      request = std::move(*pending_);
      pending_.reset();
      speaking_ = true;
    }
    speak(request);
    std::lock_guard<std::mutex> lock(mutex_);
    speaking_ = false;
  }
}

bool Speaker::superseded() const {
  return quit_.load(std::memory_order_relaxed) || !current_ ||
         wanted_.load(std::memory_order_acquire) != current_->gen;
}

void Speaker::speak(const SpeakRequest& request) {
  current_ = &request;
  start_position_ = audio_.write_position();
  SpeechEvent start;
  start.kind = SpeechEvent::start;
  start.gen = request.gen;
  start.position = start_position_;
  start.cue = request.cue;
  int status = request.text.empty() ? request.status_if_empty : KOKORO_ERR_MODEL;
  if (!request.text.empty() && engine_ && superseded()) status = KOKORO_STOPPED;  // replaced before it began
  if (push_event(start) && !request.text.empty() && engine_ && !superseded()) {
    kokoro_speak_options options{};
    options.size = sizeof options;
    options.voice = request.voice.empty() ? nullptr : request.voice.c_str();
    options.speed = request.speed;
    resampler_.reset();
    status = engine_->speak(request.text.c_str(), &options, &Speaker::on_audio, &Speaker::on_event, this);
    if (status == KOKORO_OK) {
      resampled_.clear();
      resampler_.finish(resampled_);  // the filter's last samples
      if (!write_audio(resampled_.data(), resampled_.size())) status = KOKORO_STOPPED;
    } else if (status < 0 && !superseded()) {
      notices_.error("could not speak \"%.60s%s\" (voice %s): %s", request.text.c_str(),
                     request.text.size() > 60 ? "..." : "", options.voice ? options.voice : "default",
                     kokoro_last_error());
    }
  }
  SpeechEvent end;
  end.kind = SpeechEvent::end;
  end.gen = request.gen;
  end.position = audio_.write_position();
  end.cue = request.cue;
  end.status = status;
  push_event(end);
  current_ = nullptr;
}

int Speaker::on_audio(const float* samples, size_t count, void* self) {
  auto* s = static_cast<Speaker*>(self);
  if (s->superseded()) return 1;
  s->resampled_.clear();
  s->resampler_.process(samples, count, s->resampled_);
  return s->write_audio(s->resampled_.data(), s->resampled_.size()) ? 0 : 1;
}

int Speaker::on_event(const kokoro_event* event, void* self) {
  auto* s = static_cast<Speaker*>(self);
  if (s->superseded()) return 1;
  const SpeakRequest& r = *s->current_;
  SpeechEvent e;
  switch (event->kind) {
    case KOKORO_EVENT_SEGMENT_START: e.kind = SpeechEvent::segment_start; break;
    case KOKORO_EVENT_SEGMENT_END: e.kind = SpeechEvent::segment_end; break;
    case KOKORO_EVENT_WORD: e.kind = SpeechEvent::word; break;
    case KOKORO_EVENT_MARK: e.kind = SpeechEvent::mark; break;
    default: return 0;  // the utterance's own start and end: speak() frames each request itself
  }
  e.gen = r.gen;
  e.cue = r.cue;
  const double ratio = s->output_rate_ / KOKORO_SAMPLE_RATE;
  const uint64_t at = event->kind == KOKORO_EVENT_SEGMENT_END ? event->end_sample : event->start_sample;
  // The engine sends an event once its audio has been handed over, so it lies within what is written now;
  // the rounded ratio can point a sample or two past that (44.1 kHz), and run() would then wait for audio
  // that never comes before the utterance's end.
  e.position = std::min(s->start_position_ + static_cast<uint64_t>(std::llround(static_cast<double>(at) * ratio)),
                        s->audio_.write_position());
  e.text_begin = r.text_offset + static_cast<int64_t>(event->text_begin);
  e.text_end = r.text_offset + static_cast<int64_t>(event->text_end);
  if (event->kind == KOKORO_EVENT_MARK && event->name) {
    copy_utf8(e.text, event->name, std::strlen(event->name));
  } else if (event->kind == KOKORO_EVENT_WORD && event->text_end <= r.text.size() &&
             event->text_begin < event->text_end) {
    copy_utf8(e.text, r.text.data() + event->text_begin, event->text_end - event->text_begin);
  }
  return s->push_event(e) ? 0 : 1;
}

bool Speaker::write_audio(const float* samples, std::size_t count) {
  std::size_t done = 0;
  while (done < count) {
    done += audio_.write(samples + done, count - done);
    if (done == count) break;
    if (superseded()) return false;
    std::this_thread::sleep_for(kFullRingWait);
  }
  return true;
}

bool Speaker::push_event(const SpeechEvent& event) {
  while (!events_.push(event)) {
    if (superseded()) return false;
    std::this_thread::sleep_for(kFullRingWait);
  }
  return true;
}

}  // namespace kokoro::lv2
