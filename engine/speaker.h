// Text in, sound out: the one path from a line of text to an audio sink, shared by kokoro-say and
// kokoro-jack. A thin front of the streaming engine (engine/stream_engine.h): an acoustic worker segments
// and runs the acoustic model (a short first segment so that speech starts early), a vocoder worker turns
// each segment into audio, whole (exact mode) or in chunks (stream mode), and an output thread hands it to
// the sink, which plays segment N while N+1 is synthesized.
//
// Barge-in: stop() drops the queue and the utterance being spoken; the sink is flushed at once by the
// output thread, so sound stops within about one audio period. Errors (a dead audio server, text the model
// cannot take) end the utterance with a report carrying the message; later utterances are still served.
#pragma once
#include <functional>
#include <memory>
#include <string>
#include <string_view>

#include "core/voice.h"
#include "engine/stream_engine.h"
#include "engine/stream_options.h"
#include "engine/synthesizer.h"
#include "engine/utterance_report.h"
#include "frontend/frontend.h"
#include "realtime/audio_sink.h"

namespace kokoro {

struct SpeakerOptions {
  float speed = 1.0f;
  bool phoneme_input = false;  // say() receives phoneme strings instead of text
  uint64_t seed = 0;           // noise seed: the same seed gives the same audio
  bool reference_noise = false;  // the reference tool's deterministic noise (TestNoise), for comparisons
  SynthesisMode mode = SynthesisMode::slice;  // docs/streaming.md explains the default
  StreamOptions stream;        // chunking, statistics policy, buffer bounds
};

class Speaker {
 public:
  Speaker(std::shared_ptr<const Synthesizer> synth, std::shared_ptr<const Frontend> frontend, VoicePack voice,
          AudioSink& sink, SpeakerOptions options);
  ~Speaker();

  uint64_t say(std::string text);  // queues; returns at once with the utterance id its events carry
  void stop();                 // barge-in: drop everything queued and the utterance being spoken
  // Text that streams in (StreamEngine::begin_text): one utterance whose text comes in pieces, each sentence
  // spoken as soon as it is complete; a pause of pause_flush_seconds in the input speaks what is there.
  uint64_t begin_text(double pause_flush_seconds = StreamEngine::kDefaultPauseFlushSeconds);
  bool append_text(uint64_t utterance, std::string_view text);
  bool end_text(uint64_t utterance);
  // Blocks until every utterance said so far has been handed to the sink (or timeout; false then).
  bool wait_idle(double timeout_seconds = 3600);
  void on_report(std::function<void(const UtteranceReport&)> callback);
  // Word and segment timestamps in the output stream, for captions (engine/stream_options.h).
  void on_event(std::function<void(const StreamEvent&)> callback);
  const StreamEngine& engine() const { return *engine_; }

 private:
  std::unique_ptr<StreamEngine> engine_;
};

}  // namespace kokoro
