// Slice mode's early start (issue 28; docs/streaming.md, "The early start"). Before a segment's first slice,
// slice mode runs the F0 and energy branches and the decoder half over the whole segment: their 12 and 10
// AdaIN layers need the segment's statistics. On a 50-word sentence that is ~110 ms of first audio on the
// yardstick machine. A long segment instead starts as soon as its durations and the shared prosody features
// are known: the branches' first frames run chunk by chunk (acoustic/stream_prosody.h) and the whole decoder
// in slices (StreamDecoder fed aligned frames), every AdaIN layer of both normalised with the early
// predictor's statistics (predicted from the aligned text features and the shared prosody features), and the
// first early_frames_for(F) of audio are queued (0.3 s; 3 % of a segment over 10 s, whose longer restart they
// must cover). Then the exact path runs as if there had been no early start: the curves and the decoder half
// over the whole segment, the generator from the segment's start (its slices carry state, so it must begin at
// frame 0). Its audio replaces the early run's from there on, after a crossfade of early_crossfade_frames. From
// there on the audio is slice mode's without an early start, bit for bit (tested), so the early predictor's
// error stays in the first 0.3-0.6 s, mostly the leading silence and the first phoneme.
#include <spdlog/spdlog.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <string>

#include "acoustic/stream_prosody.h"
#include "core/error.h"
#include "engine/stream_engine.h"
#include "vocoder/stats_predictor.h"
#include "vocoder/stream_decoder.h"
#include "vocoder/stream_ops.h"

namespace kokoro {

namespace {

// Frames past the audio a push of aligned frames from a segment's start must reach to complete it: the
// decoder half's convolutions (~1 frame each) plus the generator's look-ahead (measured: 4 frames of audio
// need 18 frames pushed, 13 need 27). A push that still falls short is topped up frame by frame.
constexpr int64_t kAlignedLookaheadFrames = 14;
// Frames past the curves' values a push of shared prosody features must reach: the F0 and energy branches'
// six k=3 convolutions, two of them at twice the frame rate. A push that falls short is topped up.
constexpr int64_t kProsodyLookaheadFrames = 5;

// Where a layer's input is known before the early start, its statistics are not predicted but taken from
// the moments the early features already hold (stats_predictor_early_features: per channel mean, then std):
// the F0 and energy branches' first layers normalise the shared prosody features themselves, and the decoder's
// first layer normalises [asr; F0; N], whose first 512 channels are the aligned text features (a rank-32
// prediction cannot carry 512 channels through: held-out errors 0.09 / 0.14 of a std for these layers, against
// ~0.02-0.05 for the others). `moments` points at C means followed by C stds, for channels [0, C) of the layer.
void set_input_moments(std::map<std::string, MomentStats>& stats, const std::string& layer, const float* moments, int64_t C) {
  auto it = stats.find(layer);
  if (it == stats.end() || static_cast<int64_t>(it->second.mean.size()) < C)
    throw Error("early start: no prediction for layer " + layer + " with " + std::to_string(C) + " channels");
  for (int64_t c = 0; c < C; ++c) {
    it->second.mean[c] = moments[c];
    it->second.var[c] = moments[C + c] * moments[C + c];
  }
}

}  // namespace

bool StreamEngine::starts_early(int64_t frames) const {
  // Deterministic (the segment's length only), so that a file and the live audio, and text given at once or
  // streamed in, get the same audio.
  return early_decoder_ && frames >= options_.early_start_min_frames &&
         frames >= options_.early_frames_for(frames) + options_.early_crossfade_frames + StreamDecoder::kFeaturesLookaheadFrames;
}

bool StreamEngine::start_early(uint64_t generation, uint64_t utterance, const Tensor& asr, const Tensor& shared,
                               NoiseSource& noise, EarlyStart& early) {
  const int64_t F = asr.dim(1);
  const int64_t E = options_.early_frames_for(F), X = options_.early_crossfade_frames;
  const AcousticModel& acoustic = synth_->acoustic();
  ComputeScheduler::Turn turn;
  if (!take_turn(turn, generation, deadline_ns(utterance, 0))) return false;
  auto t0 = Clock::now();
  const std::vector<float> features = stats_predictor_early_features(asr, shared, seg_.style.data(), kStyleDim);
  std::map<std::string, MomentStats> predicted = options_.early_predictor->predict(features);
  const int64_t C = asr.dim(0), H = shared.dim(0);  // features: asr mean[C] std[C], shared mean[H] std[H], ...
  set_input_moments(predicted, "predictor.F0.0.norm1", features.data() + 2 * C, H);
  set_input_moments(predicted, "predictor.N.0.norm1", features.data() + 2 * C, H);
  set_input_moments(predicted, "decoder.encode.norm1", features.data(), C);
  PredictedStats prosody_stats(predicted, false), stats(predicted, false);
  StreamProsody& sp = *early_prosody_;
  sp.begin(seg_.style.data() + acoustic.style_dim(), prosody_stats, F);
  StreamDecoder& sd = *early_decoder_;
  sd.begin(seg_.style.data(), noise, stats, F, StreamDecoder::Input::aligned_frames);
  record_stage(utterance, EngineStage::decoder, t0, Clock::now());
  turn = ComputeScheduler::Turn();

  // The early F0 and energy curves, 2 values per frame from the segment's start, as far as the pushes need.
  std::vector<float> f0, n;
  int64_t shared_pushed = 0;
  Tensor shared_cols;
  const auto curves_until = [&](int64_t frames) {
    frames = std::min(frames, F);
    while (static_cast<int64_t>(f0.size()) < 2 * frames) {
      if (shared_pushed == F) throw Error("early start: the F0 and energy branches ended short (internal)");
      const int64_t to = std::min(F, std::max(shared_pushed + 1, frames + kProsodyLookaheadFrames));
      copy_columns(shared, shared_pushed, to - shared_pushed, shared_cols);
      sp.push(shared_cols, to == F, f0, n);
      shared_pushed = to;
    }
  };

  // The exact path's estimated cost, for the pre-roll: its decoder half over the segment and the generator
  // again over the early frames (plus its look-ahead) at the slices' pace.
  const double segment_seconds = static_cast<double>(F * kSamplesPerFrame) / kSampleRate;
  const double frame_seconds = static_cast<double>(kSamplesPerFrame) / kSampleRate;
  double pace = slice_pace_ > 0 ? slice_pace_ : 0.5;
  const double restart_margin = 1.0 + std::max(0.0, options_.preroll.early_restart_margin_share);
  const auto restart_seconds = [&] {
    return restart_margin * (early_restart_.seconds(segment_seconds, pace) +
                             pace * static_cast<double>(E + X + StreamDecoder::kFeaturesLookaheadFrames) * frame_seconds);
  };

  const int64_t early_end = E * kSamplesPerFrame, tail_end = (E + X) * kSamplesPerFrame;
  early.tail.resize({X * kSamplesPerFrame});
  Tensor cols, audio;
  int64_t pushed = 0, produced = 0;  // frames pushed into the early run, samples it produced
  early_starts_.fetch_add(1);
  // Slices of the early audio: the first short (first audio), each next one twice as long (as slice mode's),
  // so that each is computed while the audio before it plays; the last one also makes the crossfade's tail.
  const int64_t first = std::min<int64_t>({options_.early_first_frames, options_.first_chunk_frames, E});
  int64_t step = first;
  for (int64_t target = first;; target = std::min(E + X, target + step)) {
    if (stale(generation) || quit_.load()) return false;
    if (options_.before_chunk) options_.before_chunk();
    const int64_t slice_t0_ns = preroll_now_ns();
    if (!take_turn(turn, generation, deadline_ns(utterance, 0))) return false;
    t0 = Clock::now();
    std::vector<float> out;
    for (int64_t to = std::min(F, std::max(pushed + 1, target + kAlignedLookaheadFrames)); produced < target * kSamplesPerFrame;
         to = std::min(F, pushed + 1)) {
      if (to == pushed) throw Error("early start: the segment ended before its early audio (internal)");
      curves_until(to);
      copy_columns(asr, pushed, to - pushed, cols);
      sd.push(cols, f0.data() + 2 * pushed, n.data() + 2 * pushed, to == F, audio);
      // Samples [produced, produced + count): those before early_end are queued, those up to tail_end kept.
      for (int64_t i = 0; i < audio.numel(); ++i) {
        const int64_t at = produced + i;
        if (at < early_end) out.push_back(audio.data()[i]);
        else if (at < tail_end) early.tail.data()[at - early_end] = audio.data()[i];
      }
      produced += audio.numel();
      pushed = to;
    }
    record_stage(utterance, EngineStage::generator, t0, Clock::now());
    turn = ComputeScheduler::Turn();
    const double took = ms_since(t0) / 1e3;
    report_work(took, static_cast<double>(out.size()) / kSampleRate);
    add_synth_seconds(utterance, took);
    slices_.fetch_add(1);
    chunks_.fetch_add(1);
    if (!push_audio(out.data(), out.size(), generation)) return false;
    early.frames = std::min(produced, early_end) / kSamplesPerFrame;
    if (slice_pace_ <= 0 && !out.empty())
      pace = static_cast<double>(preroll_now_ns() - slice_t0_ns) * 1e-9 / (static_cast<double>(out.size()) / kSampleRate);
    if (target < E + X) step = std::min<int64_t>({2 * step, options_.max_chunk_frames, E + X - target});
    // The segments after this one: their decoder half per second as this one's (the pre-roll's start_pace).
    const double restart_per_second = early_restart_.seconds(segment_seconds, pace) / segment_seconds;
    preroll_decide_slices(early.frames, F, target < E + X ? step : 1, pace, restart_per_second, true, E, restart_seconds());
    if (target >= E + X) break;
  }
  spdlog::debug("early start: {} frames, {} of early audio; exact path's restart estimated {:.3f} s ({}), slice pace {:.3f}", F, E,
                restart_seconds(),
                early_restart_.per_second > 0
                    ? fmt::format("{:.4f} s per second of segment + {} s", early_restart_.per_second, EarlyRestartEstimate::kFixedSeconds)
                    : std::string("none measured yet"),
                pace);
  early.frames = E;
  return true;
}

void StreamEngine::splice_early(const EarlyStart& early, const Tensor& exact, Tensor& out) {
  const int64_t from = early.frames * kSamplesPerFrame, n = early.tail.numel();
  if (exact.numel() < from + n)
    throw Error("early start: the exact path's first push made " + std::to_string(exact.numel()) + " samples, the crossfade needs " +
                std::to_string(from + n) + " (internal)");
  out.resize({exact.numel() - from});
  const float* a = exact.data() + from;
  std::copy(a, exact.data() + exact.numel(), out.data());
  // Raised cosine from the early run's audio to the exact path's.
  for (int64_t i = 0; i < n; ++i) {
    const float w = 0.5f - 0.5f * std::cos(static_cast<float>(M_PI) * (static_cast<float>(i) + 0.5f) / static_cast<float>(n));
    out.data()[i] = (1.0f - w) * early.tail.data()[i] + w * a[i];
  }
}

}  // namespace kokoro
