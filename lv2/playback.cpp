#include "lv2/playback.h"

#include <algorithm>
#include <chrono>
#include <cstring>
#include <thread>

namespace kokoro::lv2 {

Generation Playback::barge_in(uint32_t frames_left, SpeechEventSink& sink, int64_t frame) {
  if (state_ == State::playing) {
    // The fade plays samples already queued now, before the new request exists: all of them the old speech's.
    fade_total_ = fade_left_ = static_cast<uint32_t>(
        std::min<std::size_t>({kFadeFrames, frames_left, audio_.available()}));
    SpeechEvent stopped;
    stopped.kind = SpeechEvent::end;
    stopped.gen = gen_;
    stopped.cue = cue_;
    stopped.status = 1;  // KOKORO_STOPPED
    sink.speech_event(stopped, frame, underrun_frames_);
  } else {
    fade_left_ = fade_total_ = 0;
  }
  ++gen_;
  wanted_.store(gen_, std::memory_order_release);
  state_ = State::waiting;
  return gen_;
}

const SpeechEvent* Playback::next_event() {
  for (;;) {
    if (!has_event_) {
      if (!events_.pop(event_)) return nullptr;
      has_event_ = true;
    }
    if (event_.gen == gen_) return &event_;
    has_event_ = false;  // an older generation's: its speech was cut
  }
}

template <typename Ready>
bool Playback::wait_in_freewheel(Ready ready) {
  using Clock = std::chrono::steady_clock;
  const auto give_up = Clock::now() + std::chrono::duration<double>(kFreewheelPatienceSeconds);
  while (!ready()) {
    if (Clock::now() > give_up) return false;
    std::this_thread::sleep_for(std::chrono::microseconds(200));
  }
  return true;
}

void Playback::render(float* out, uint32_t n, bool freewheel, SpeechEventSink& sink, int64_t frame) {
  uint32_t i = 0;
  while (i < n) {
    if (fade_left_ > 0) {  // the end of a cut speech
      const uint32_t k = static_cast<uint32_t>(audio_.read(out + i, std::min(fade_left_, n - i)));
      for (uint32_t j = 0; j < k; ++j)
        out[i + j] *= static_cast<float>(fade_left_ - j) / static_cast<float>(fade_total_ + 1);
      i += k;
      fade_left_ = k == 0 ? 0 : fade_left_ - k;
      continue;
    }

    if (state_ != State::playing) {
      // Everything written before this snapshot is older than the start event looked for next: the
      // speaker queues a generation's start event before its first sample.
      const uint64_t written = audio_.read_position() + audio_.available();
      const SpeechEvent* e = next_event();
      if (e && state_ == State::waiting && e->kind == SpeechEvent::start) {
        audio_.discard_until(e->position);
        state_ = State::playing;
        cue_ = e->cue;
        underrun_frames_ = 0;
        sounded_ = false;
        sink.speech_event(*e, frame + i, 0);
        consume_event();
        continue;
      }
      if (e) {  // this generation's events after its end: none are sent; drop it
        consume_event();
        continue;
      }
      audio_.discard_until(written);
      if (state_ == State::waiting && freewheel) {
        if (wait_in_freewheel([this] { return events_.available() > 0; })) continue;
        state_ = State::idle;  // the speaker never answered: give up on this note
      }
      std::fill(out + i, out + n, 0.0f);
      return;
    }

    // Playing: the events due by now, then samples up to the next event.
    const uint64_t read = audio_.read_position();
    const SpeechEvent* e = next_event();
    if (e && e->position <= read) {
      sink.speech_event(*e, frame + i, underrun_frames_);
      if (e->kind == SpeechEvent::end) state_ = State::idle;
      consume_event();
      continue;
    }
    uint32_t want = n - i;
    if (e) want = static_cast<uint32_t>(std::min<uint64_t>(want, e->position - read));
    const uint32_t got = static_cast<uint32_t>(audio_.read(out + i, want));
    if (got > 0) {
      i += got;
      sounded_ = true;
      continue;
    }
    if (freewheel) {
      // A held event lies ahead in the audio, so only audio can move on to it.
      if (wait_in_freewheel([this] { return audio_.available() > 0 || (!has_event_ && events_.available() > 0); }))
        continue;
      state_ = State::idle;
    } else if (sounded_) {
      underrun_frames_ += n - i;  // the engine fell behind the speech it started: silence until it catches up
    }  // (before the first sample it is the engine's time to first audio, not an underrun)
    std::fill(out + i, out + n, 0.0f);
    return;
  }
}

}  // namespace kokoro::lv2
