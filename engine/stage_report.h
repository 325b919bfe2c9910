// Where one utterance's time went, stage by stage (issue 28), as the streaming engine measures it in every
// mode: the time of each stage's work, and the part of it that the first audio waited for.
//
//   frontend    text -> phoneme segments (the acoustic worker, per text piece)
//   acoustic    the acoustic model (ALBERT, prosody, text encoder), per segment
//   decoder     the decoder half over a segment (Decoder::features)
//   source      the harmonic source and its STFT (slice mode's SliceVocoder::begin, exact mode's gen_har)
//   generator   the generator: each slice (slice mode), chunk (stream mode) or whole segment (exact mode)
//   output      handing audio to the sink: the wait of the first audio between its computation and the
//               sink (the output thread's hand-over, exact mode's pre-roll hold), then every sink write
//
// "Before first audio" counts the work that had finished when the first samples were handed to the sink
// (work still running then did not delay them). The stages of one utterance run one after the other up to
// the first audio (the acoustic worker holds later segments until the first one is vocoded), so those parts
// add up to at most first_audio_ms; the rest is time the utterance waited for a thread or a compute turn
// (engine/compute_scheduler.h) between its stages.
// Stream mode computes its harmonic source inside each chunk (vocoder/stream_decoder.h): its source stays 0.
#pragma once
#include <array>
#include <vector>

namespace kokoro {

enum class EngineStage : int { frontend, acoustic, decoder, source, generator, output };
inline constexpr int kEngineStages = 6;
const char* engine_stage_name(EngineStage stage);  // "frontend", ..., "output"

struct EngineStages {
  std::array<double, kEngineStages> total_ms{};               // all of the utterance's work in the stage
  std::array<double, kEngineStages> before_first_audio_ms{};  // the part the first audio waited for
  std::vector<double> generator_items_ms;  // each slice, chunk or segment of the generator, in order

  double total(EngineStage s) const { return total_ms[static_cast<int>(s)]; }
  double before_first_audio(EngineStage s) const { return before_first_audio_ms[static_cast<int>(s)]; }
  double sum_total_ms() const;
  double sum_before_first_audio_ms() const;
  // Adds one piece of work; `before_first_audio`: it had finished when the first audio was handed over.
  void add(EngineStage s, double ms, bool before_first_audio);
};

}  // namespace kokoro
