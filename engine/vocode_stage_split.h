// The decoder, source and generator stages of one Synthesizer::vocode call (engine/stage_report.h), told
// apart by the trace events it already emits (core/trace.h), so that exact mode needs no timer inside the
// vocoder.
#pragma once
#include <chrono>
#include <functional>

#include "core/trace.h"
#include "engine/stage_report.h"

namespace kokoro {

// Turns the trace events of Synthesizer::vocode (names of docs/golden-data.md) into stages: dec_decode_3 ends
// the decoder half, gen_har the harmonic source, and audio the generator. `record` gets each one's begin and
// end, on the vocoding thread.
class VocodeStageSplit {
 public:
  using Clock = std::chrono::steady_clock;
  using Record = std::function<void(EngineStage, Clock::time_point, Clock::time_point)>;
  explicit VocodeStageSplit(Record record);
  // The Trace to pass to Synthesizer::vocode (valid while this object lives); the decoder half starts now.
  const Trace* start();

 private:
  Record record_;
  Clock::time_point last_;
  Trace trace_;
};

}  // namespace kokoro
