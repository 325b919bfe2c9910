// Stream mode of the streaming engine's vocoder worker (engine/stream_engine.h): the decoder half over the
// whole segment, then the generator in chunks (vocoder/stream_decoder.h) with guessed normalisation
// statistics, the first chunk small and each next one twice as long up to max_chunk_frames
// (docs/streaming.md, "The chunked vocoder").
#include <algorithm>
#include <chrono>
#include <memory>

#include "engine/stream_engine.h"
#include "vocoder/stream_decoder.h"

namespace kokoro {

bool StreamEngine::synthesize_chunks(uint64_t generation, uint64_t utterance, const Tensor& asr, const Tensor& f0,
                                     const Tensor& n, NoiseSource& noise) {
  const int64_t F = asr.dim(1);
  Tensor audio;
  // The decoder half over the whole segment: exact statistics, and one pass over its 1024-wide weights.
  ComputeScheduler::Turn turn;
  if (!take_turn(turn, generation, deadline_ns(utterance, 0))) return false;
  auto t0 = Clock::now();
  Tensor x, cols;
  synth_->decoder().features(asr, f0, n, seg_.style.data(), x);
  std::unique_ptr<NormPolicy> policy = make_norm_policy(options_.policy, options_.priors);
  StreamDecoder* sd = stream_decoder_.get();
  sd->begin(seg_.style.data(), noise, *policy, F, StreamDecoder::Input::decoder_features);
  record_stage(utterance, EngineStage::decoder, t0, Clock::now());
  double compute_s = ms_since(t0) / 1e3;
  turn = ComputeScheduler::Turn();
  int64_t chunk = options_.first_chunk_frames, f0_sent = 0;
  for (int64_t f = 0; f < F;) {
    if (stale(generation) || quit_.load()) return false;
    if (options_.before_chunk) options_.before_chunk();
    const int64_t m = std::min(chunk, F - f);
    if (!take_turn(turn, generation, deadline_ns(utterance, 0))) return false;
    t0 = Clock::now();
    copy_columns(x, 2 * f, 2 * m, cols);
    const int64_t f0_to = std::min<int64_t>(2 * (f + m + options_.source_lead_frames), 2 * F);
    sd->push_features(cols, f0.data() + f0_sent, f0_to - f0_sent, f + m == F, audio);
    f0_sent = f0_to;
    record_stage(utterance, EngineStage::generator, t0, Clock::now());
    turn = ComputeScheduler::Turn();
    compute_s += ms_since(t0) / 1e3;
    report_work(ms_since(t0) / 1e3, static_cast<double>(m * kSamplesPerFrame) / kSampleRate);
    chunks_.fetch_add(1);
    f += m;
    chunk = std::min<int64_t>(2 * chunk, options_.max_chunk_frames);
    if (f == F) mark_first_segment(utterance);  // all computed; the push may block at playback pace
    if (!push_audio(audio.data(), audio.numel(), generation)) return false;
  }
  add_synth_seconds(utterance, compute_s);
  return true;
}

}  // namespace kokoro
