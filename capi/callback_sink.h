// The audio sink behind the C API: hands the engine's samples and events to the C callbacks of the
// kokoro_speak call in progress. The engine's output thread calls write() and deliver_event(); the caller's
// thread opens and closes the call; kokoro_stop (any thread) marks it stopped.
//
// Only one utterance is in flight per engine (kokoro_speak waits for its report before returning, and
// the engine drops a stopped utterance's events and audio), so everything delivered while a call is open
// belongs to it. Audio is forwarded only after the call's utterance_start event, and nothing is forwarded
// once the call is stopped: after kokoro_stop returns, no callback of that speech starts.
//
// Not a device: takes audio as fast as the callback does (the callback's own blocking is the back-pressure).
#pragma once
#include <cmath>
#include <cstdint>
#include <mutex>

#include "engine/stream_options.h"
#include "kokoro.h"
#include "realtime/audio_sink.h"

namespace kokoro::capi {

class CallbackSink final : public AudioSink {
 public:
  void begin_call(kokoro_audio_callback on_audio, kokoro_event_callback on_event, void* user) {
    std::lock_guard<std::mutex> lock(mutex_);
    call_ = Call{true, false, false, on_audio, on_event, user, 0, 0};
  }
  void end_call() {
    std::lock_guard<std::mutex> lock(mutex_);
    call_ = Call{};
  }
  // Marks the call stopped: no callback starts after this returns (one running on the output thread may
  // finish: the mutex is not held while calling out, so that a callback may itself call kokoro_stop).
  void stop_call() {
    std::lock_guard<std::mutex> lock(mutex_);
    call_.stopped = true;
  }
  bool call_stopped() const {
    std::lock_guard<std::mutex> lock(mutex_);
    return call_.stopped;
  }

  using AudioSink::write;
  std::size_t write(const float* samples, std::size_t n) override {
    kokoro_audio_callback cb = nullptr;
    void* user = nullptr;
    {
      std::lock_guard<std::mutex> lock(mutex_);
      if (!call_.open || call_.stopped || !call_.started) return n;
      call_.samples += n;
      cb = call_.on_audio;
      user = call_.user;
    }
    if (cb && cb(samples, n, user) != 0) request_stop();
    return n;
  }

  void deliver_event(const StreamEvent& ev) {
    kokoro_event out{};
    out.size = sizeof(kokoro_event);
    kokoro_event_callback cb = nullptr;
    void* user = nullptr;
    const uint64_t position = static_cast<uint64_t>(std::llround(ev.time_s * kEngineSampleRate));
    const uint64_t end_position = static_cast<uint64_t>(std::llround(ev.end_s * kEngineSampleRate));
    {
      std::lock_guard<std::mutex> lock(mutex_);
      if (!call_.open || call_.stopped) return;
      if (ev.kind == StreamEvent::Kind::utterance_start) {
        call_.started = true;
        call_.base = position;
      }
      if (!call_.started) return;
      out.start_sample = position - std::min(position, call_.base);
      out.end_sample = out.start_sample;
      if (ev.kind == StreamEvent::Kind::word || ev.kind == StreamEvent::Kind::segment_start ||
          ev.kind == StreamEvent::Kind::segment_end) {
        out.end_sample = std::max(out.start_sample, end_position - std::min(end_position, call_.base));
        out.text_begin = ev.text_begin;
        out.text_end = ev.text_end;
      }
      cb = call_.on_event;
      user = call_.user;
    }
    switch (ev.kind) {
      case StreamEvent::Kind::utterance_start: out.kind = KOKORO_EVENT_UTTERANCE_START; break;
      case StreamEvent::Kind::segment_start: out.kind = KOKORO_EVENT_SEGMENT_START; break;
      case StreamEvent::Kind::word: out.kind = KOKORO_EVENT_WORD; break;
      case StreamEvent::Kind::segment_end: out.kind = KOKORO_EVENT_SEGMENT_END; break;
      case StreamEvent::Kind::utterance_end: out.kind = KOKORO_EVENT_UTTERANCE_END; break;
      case StreamEvent::Kind::mark:
        out.kind = KOKORO_EVENT_MARK;
        out.name = ev.name.c_str();  // valid during the callback, as documented
        break;
    }
    if (cb && cb(&out, user) != 0) request_stop();
  }

  // Set by the C API: what a callback's nonzero return does (kokoro_stop on this engine).
  void set_stop_handler(void (*handler)(void*), void* context) {
    stop_handler_ = handler;
    stop_context_ = context;
  }

  void end_utterance() override {}
  void flush() override {}
  void drain(double) override {}
  void interrupt() override {}
  SinkStats stats() const override { return {}; }
  std::string describe() const override { return "C API callback"; }
  int input_rate() const override { return kEngineSampleRate; }

 private:
  struct Call {
    bool open = false, stopped = false, started = false;
    kokoro_audio_callback on_audio = nullptr;
    kokoro_event_callback on_event = nullptr;
    void* user = nullptr;
    uint64_t base = 0;     // stream position of the utterance's start
    uint64_t samples = 0;  // samples forwarded
  };
  void request_stop() {
    if (stop_handler_) stop_handler_(stop_context_);
  }

  mutable std::mutex mutex_;
  Call call_;
  void (*stop_handler_)(void*) = nullptr;
  void* stop_context_ = nullptr;
};

}  // namespace kokoro::capi
