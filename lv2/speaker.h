// The speaker thread: speaks one request at a time through the engine (kokoro_speak blocks for the whole
// utterance), resamples the engine's 24 kHz audio to the host's rate with the engine's resampler, and
// writes audio and events into the rings run() reads. It owns the producer side of both rings.
//
// Barge-in: run() raises the wanted generation (an atomic) before it asks the worker for the next request.
// The engine's callbacks compare it with the generation they speak for and end that speech (a nonzero
// return) at their next chunk, without writing anything more; submit() also calls kokoro_stop so that a
// speech still before its first chunk ends at once. Each request's audio is framed by a start event (its
// position in the audio ring, taken before its first sample) and an end event, so run() knows exactly
// which samples are the new generation's.
#pragma once
#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "kokoro.h"
#include "lv2/engine_link.h"
#include "lv2/messages.h"
#include "lv2/notices.h"
#include "realtime/resampler.h"
#include "ringbuffer/spsc_ring.h"

namespace kokoro::lv2 {

struct SpeakRequest {
  Generation gen = 0;
  std::string text;  // empty: nothing to say (a stop, or nothing to speak: the worker said why)
  int status_if_empty = KOKORO_STOPPED;  // the end event's status for an empty request
  std::string voice;
  float speed = 1.0f;
  int32_t cue = -1;          // the cue this is (-1: the whole text)
  int64_t text_offset = 0;   // where `text` starts in the whole text, for the events' offsets
};

class Speaker {
 public:
  // `engine` may be null (no model): every request then ends at once with KOKORO_ERR_MODEL, silently (the
  // plugin reported the missing model once when it was instantiated).
  Speaker(EngineLink* engine, double output_rate, const std::atomic<Generation>& wanted, Notices& notices);
  ~Speaker();
  Speaker(const Speaker&) = delete;
  Speaker& operator=(const Speaker&) = delete;

  // Any non-real-time thread. Replaces a request not yet started; stops the speech in progress.
  void submit(SpeakRequest request);

  // run()'s side of the rings.
  SpscRing<float>& audio() { return audio_; }
  SpscRing<SpeechEvent>& events() { return events_; }

 private:
  void loop();
  void speak(const SpeakRequest& request);
  static int on_audio(const float* samples, size_t count, void* self);
  static int on_event(const kokoro_event* event, void* self);
  bool superseded() const;
  // Write everything, waiting while the ring is full; false if the request was superseded meanwhile.
  bool write_audio(const float* samples, std::size_t count);
  bool push_event(const SpeechEvent& event);

  EngineLink* engine_;
  const std::atomic<Generation>& wanted_;
  Notices& notices_;
  const double output_rate_;
  SpscRing<float> audio_;
  SpscRing<SpeechEvent> events_;

  std::mutex mutex_;
  std::condition_variable wake_;
  std::optional<SpeakRequest> pending_;
  bool speaking_ = false;
  std::atomic<bool> quit_{false};

  // The request being spoken: the speaker thread and, during kokoro_speak, the engine's callback thread.
  const SpeakRequest* current_ = nullptr;
  uint64_t start_position_ = 0;
  StreamResampler resampler_;
  std::vector<float> resampled_;

  std::thread thread_;  // last: starts once everything above exists
};

}  // namespace kokoro::lv2
