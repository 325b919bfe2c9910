// run()'s side of the speech: takes the audio and the events the speaker thread queued and turns them
// into output samples and notifications at the right frames. Real-time safe outside freewheel: it only
// reads the lock-free rings and its own members (no allocation, lock, system call or log).
//
// States: idle (silence), waiting (a note-on asked for a new generation; its start event has not come:
// silence, everything older in the rings is dropped) and playing (the generation's samples, in order; an
// empty ring after its first sample and before its end event is an underrun: silence, counted). In freewheel, waiting and underruns
// wait for the speaker instead (sleeping, which freewheel allows), so an offline render has every sample
// a real-time run plays, with nothing inserted.
#pragma once
#include <atomic>
#include <cstdint>

#include "lv2/messages.h"
#include "ringbuffer/spsc_ring.h"

namespace kokoro::lv2 {

// Where run() sends the speech events it reaches (the notify port).
class SpeechEventSink {
 public:
  virtual void speech_event(const SpeechEvent& event, int64_t frame, uint64_t underrun_frames) = 0;

 protected:
  ~SpeechEventSink() = default;
};

class Playback {
 public:
  // A cut speech fades out over this many frames (~1 ms at 48 kHz), never beyond the block it is cut in.
  static constexpr uint32_t kFadeFrames = 48;
  // Freewheel: how long to wait for the speaker before giving up on an utterance.
  static constexpr double kFreewheelPatienceSeconds = 60.0;

  Playback(SpscRing<float>& audio, SpscRing<SpeechEvent>& events, std::atomic<Generation>& wanted)
      : audio_(audio), events_(events), wanted_(wanted) {}

  // A new generation from now on (note-on, all notes off): what plays fades out within the `frames_left`
  // frames of this block and everything queued for it is dropped. Returns the generation to ask for.
  Generation barge_in(uint32_t frames_left, SpeechEventSink& sink, int64_t frame);
  // The request for the new generation could not be sent (the host's worker queue was full): back to idle.
  void abandon() { state_ = State::idle; }

  // Fills out[0, n): `frame` is out[0]'s frame in the block (for the events' times).
  void render(float* out, uint32_t n, bool freewheel, SpeechEventSink& sink, int64_t frame);

  bool playing() const { return state_ == State::playing; }

 private:
  enum class State { idle, waiting, playing };
  // The next event of the generation run() wants; older ones are dropped on the way.
  const SpeechEvent* next_event();
  void consume_event() { has_event_ = false; }
  // Freewheel: sleeps until `ready` or the patience runs out (false).
  template <typename Ready>
  bool wait_in_freewheel(Ready ready);

  SpscRing<float>& audio_;
  SpscRing<SpeechEvent>& events_;
  std::atomic<Generation>& wanted_;
  Generation gen_ = 0;
  State state_ = State::idle;
  SpeechEvent event_;
  bool has_event_ = false;
  uint32_t fade_left_ = 0, fade_total_ = 0;
  int32_t cue_ = -1;              // the cue playing (its start event's)
  uint64_t underrun_frames_ = 0;  // silence inside the current utterance, after its first sample
  bool sounded_ = false;
};

}  // namespace kokoro::lv2
