// Text in, sound out: the one path from a line of text to an audio sink, shared by kokoro-say and
// kokoro-jack. A worker thread takes queued utterances, segments them with the frontend (a short first
// segment so that speech starts early), synthesizes each segment and writes it to the sink, which plays it
// while the next segment is synthesized (the sink's buffer pipelines segments).
//
// Barge-in: stop() drops the queue and the utterance being spoken; the sink is flushed, so sound stops
// within about one audio period. Errors (a dead audio server, text the model cannot take) end the
// utterance with a report carrying the message; the worker keeps serving later utterances.
#pragma once
#include <atomic>
#include <condition_variable>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <thread>

#include "core/voice.h"
#include "engine/synthesizer.h"
#include "frontend/frontend.h"
#include "frontend/vocab.h"
#include "realtime/audio_sink.h"

namespace kokoro {

struct UtteranceReport {
  std::string text;
  size_t segments = 0;
  double first_audio_ms = 0;  // from say() to the first samples handed to the sink (TTFA before the device)
  double audio_seconds = 0;   // speech produced
  double synth_seconds = 0;   // wall time spent synthesizing
  bool interrupted = false;
  std::string error;          // non-empty when the utterance failed
};

struct SpeakerOptions {
  float speed = 1.0f;
  bool phoneme_input = false;  // say() receives phoneme strings instead of text
  uint64_t seed = 0;           // noise seed: the same seed gives the same audio
  bool reference_noise = false;  // the reference tool's deterministic noise (TestNoise), for comparisons
};

class Speaker {
 public:
  Speaker(std::shared_ptr<const Synthesizer> synth, std::shared_ptr<const Frontend> frontend, VoicePack voice,
          AudioSink& sink, SpeakerOptions options);
  ~Speaker();

  void say(std::string text);  // queues; returns at once
  void stop();                 // barge-in: drop everything queued and the utterance being spoken
  // Blocks until the queue is empty and the sink has played everything (or timeout; false then).
  bool wait_idle(double timeout_seconds = 3600);
  void on_report(std::function<void(const UtteranceReport&)> callback);

 private:
  struct Item {
    std::string text;
    std::chrono::steady_clock::time_point queued;
    uint64_t generation;
  };
  void run();
  void speak(const Item& item, UtteranceReport& report);

  std::shared_ptr<const Synthesizer> synth_;
  std::shared_ptr<const Frontend> frontend_;
  Vocab vocab_;
  VoicePack voice_;
  AudioSink& sink_;
  SpeakerOptions options_;

  std::mutex mutex_;
  std::condition_variable cv_;
  std::deque<Item> queue_;
  bool busy_ = false, quit_ = false;
  std::atomic<uint64_t> generation_{0};  // bumped by stop(); items of older generations are dropped
  std::function<void(const UtteranceReport&)> report_;
  std::thread worker_;
};

}  // namespace kokoro
