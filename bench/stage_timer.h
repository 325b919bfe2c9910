// Per-stage wall time of one synthesis, measured through the engine's existing Trace hook (core/trace.h):
// the modules already call trace(name, tensor) at their boundaries, so timestamps taken there split the run
// into stages without a single timing call inside the modules. The names are those of docs/golden-data.md.
//
//   stage          from trace event        to trace event
//   albert         start()                 bert_dur
//   prosody        bert_dur                N_pred       (bert_encoder, duration LSTMs, F0/N branches)
//   text_encoder   N_pred                  t_en
//   decoder        t_en                    dec_decode_3 (asr alignment, F0/N convs, encode, decode blocks)
//   source         dec_decode_3            gen_har      (sine source, noise, STFT of the excitation)
//   generator      gen_har                 gen_conv_post
//   istft          gen_conv_post           audio
//   other          audio                   stop()       (copying out, timings)
// An event that does not occur leaves its stage at zero; times are attributed to the stage that ends at the
// next recognised event, so a streaming engine emitting the same names per chunk is timed the same way.
#pragma once
#include <array>
#include <chrono>
#include <string>

#include "core/trace.h"
#include "engine/stage_report.h"

namespace kokoro::bench {

enum Stage : int { kAlbert, kProsody, kTextEncoder, kDecoder, kSource, kGenerator, kIstft, kOther, kStageCount };
const char* stage_name(int stage);

struct StageTimes {
  std::array<double, kStageCount> ms{};
  StageTimes& operator+=(const StageTimes& o) {
    for (int i = 0; i < kStageCount; ++i) ms[i] += o.ms[i];
    return *this;
  }
  double total() const;
};

// Adds a synthesis' stages to the engine's coarser ones (engine/stage_report.h): albert + prosody +
// text_encoder are the acoustic model, generator + istft the generator, other (copying out) the output.
void add_stage_times(EngineStages& to, const StageTimes& t, bool before_first_audio);

class StageTimer {
 public:
  StageTimer();
  void start();
  void stop();  // attributes the time since the last event to `other`
  const StageTimes& times() const { return times_; }
  // Pass &trace() to Synthesizer::synthesize*; valid while the timer lives.
  const Trace& trace() const { return trace_; }

 private:
  void mark(const std::string& name);
  using Clock = std::chrono::steady_clock;
  Clock::time_point last_;
  StageTimes times_;
  Trace trace_;
};

}  // namespace kokoro::bench
