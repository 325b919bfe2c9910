// Slice mode, the early-audio mode of the streaming engine's vocoder worker (engine/stream_engine.h): the
// decoder half over the whole segment (exact statistics), then the generator slice by slice with every
// convolution's state carried from one slice to the next (vocoder/stream_decoder.h), each AdaIN layer
// normalised with the statistics predictor's whole-segment statistics (vocoder/stats_predictor.h). The first
// slice is short (first audio), each next one twice as long up to max_chunk_frames (docs/streaming.md,
// "Slice mode"). A long segment's first 0.3 s come from the early start instead (stream_engine_early.cpp),
// which queues them before the decoder half runs.
#include <spdlog/spdlog.h>

#include <algorithm>
#include <chrono>

#include "engine/stream_engine.h"
#include "vocoder/stats_predictor.h"
#include "vocoder/stream_decoder.h"

namespace kokoro {

double StreamEngine::queued_audio_seconds() const {
  const SinkStats s = sink_.stats();
  double device = 0;
  if (s.output_rate > 0)
    device = static_cast<double>(s.frames_written) / sink_.input_rate() - static_cast<double>(s.frames_played) / s.output_rate;
  const double ring = static_cast<double>(audio_.write_position() - audio_.read_position()) / kSampleRate;
  return ring + std::max(0.0, device);
}

bool StreamEngine::synthesize_slices(uint64_t generation, uint64_t utterance, const Tensor& asr, const Tensor& f0,
                                     const Tensor& n, NoiseSource& noise) {
  const int64_t F = asr.dim(1);
  const Decoder& dec = synth_->decoder();
  Tensor audio, exact;
  // A long segment's first audio need not wait for its decoder half (stream_engine_early.cpp).
  EarlyStart early;
  ComputeScheduler::Turn turn;
  double curves_s = 0;
  if (seg_.f0.numel() == 0) {
    // The segment starts early and its F0 and energy curves are still to come (StreamEngine::speak_text): the
    // early start runs their first frames, then the curves over the whole segment (f0 and n are seg_'s).
    if (!start_early(generation, utterance, asr, seg_.shared, noise, early)) return false;
    if (!take_turn(turn, generation, deadline_ns(utterance, 0))) return false;
    const auto c0 = Clock::now();
    AlignedFeatures curves;
    synth_->acoustic().forward_curves(seg_.shared, seg_.style.data(), curves);
    seg_.f0 = std::move(curves.f0);
    seg_.n = std::move(curves.n);
    seg_.shared = Tensor();
    record_stage(utterance, EngineStage::acoustic, c0, Clock::now());
    curves_s = ms_since(c0) / 1e3;
    add_synth_seconds(utterance, curves_s);
    turn = ComputeScheduler::Turn();
    if (f0.numel() != 2 * F || n.numel() != 2 * F) throw Error("slice mode: the F0 and energy curves do not match the segment (internal)");
  }
  // The decoder half over the whole segment: exact statistics, and one pass over its 1024-wide weights.
  if (!take_turn(turn, generation, deadline_ns(utterance, 0))) return false;
  auto t0 = Clock::now();
  Tensor x, cols;
  dec.features(asr, f0, n, seg_.style.data(), x);
  const double features_ms = ms_since(t0);
  // A long segment: where the memory peaks. Not while other sessions compute: they would fault them in again.
  // The generator needs none of the pages (model_file.h); they are released right after the first slice, whose
  // audio the 6 ms of releasing them would otherwise delay.
  const bool release = F >= kReleasePagesFromFrames && may_release_pages();
  bool release_after_first_slice = release;
  PredictedStats stats(options_.predictor->predict(stats_predictor_features(x, f0.data(), seg_.style.data(), dec.style_dim())), false);
  StreamDecoder& sd = *stream_decoder_;
  sd.begin(seg_.style.data(), noise, stats, F, StreamDecoder::Input::decoder_features);
  double compute_s = ms_since(t0) / 1e3;
  if (early.frames > 0) early_restart_.measured(static_cast<double>(F * kSamplesPerFrame) / kSampleRate, curves_s + compute_s);
  // The stage table's "decoder": the decoder half and the statistics prediction (the harmonic source streams
  // inside each slice, so it counts as generator work).
  record_stage(utterance, EngineStage::decoder, t0, Clock::now());
  spdlog::debug("slice mode: decoder half and statistics {:.1f} ms ({} frames; the statistics {:.1f} ms){}", compute_s * 1e3,
                F, compute_s * 1e3 - features_ms,
                early.frames > 0 ? fmt::format("; after the early start, with the curves {:.1f} ms", (curves_s + compute_s) * 1e3) : "");
  turn = ComputeScheduler::Turn();
  // Slices of audio: the first push reaches the generator's look-ahead past the first slice, so that the first
  // audio is the whole first slice (a push of the first slice alone would complete ~5 ms of a 4-frame one).
  // After an early start the first push covers the early frames and the crossfade as well: the exact path
  // starts from the segment's start, and its audio replaces the early run's from early.frames on.
  int64_t slice = early.frames > 0 ? early.frames + options_.early_crossfade_frames : options_.first_chunk_frames;
  int64_t f0_sent = 0;
  // The pre-roll's pace (generator seconds per audio second, on its clock): that of this segment's longest
  // slice after the first push (short slices cost more per second: a pace from them would hold a long
  // paragraph for seconds), before it the last segment's, before any the first push per frame pushed (which
  // also computes the look-ahead).
  double pace_seconds = 0, pace_audio = 0, first_pace = 0;
  const double segment_seconds = static_cast<double>(F * kSamplesPerFrame) / kSampleRate;
  auto pace = [&] { return pace_audio > 0 ? pace_seconds / pace_audio : slice_pace_ > 0 ? slice_pace_ : first_pace; };
  const double start_pace = compute_s / segment_seconds;  // the decoder half and the prediction
  if (slice_pace_ > 0 && early.frames == 0) preroll_decide_slices(0, F, slice, slice_pace_, start_pace, false);
  for (int64_t f = 0; f < F;) {
    if (stale(generation) || quit_.load()) return false;
    if (options_.before_chunk) options_.before_chunk();
    const int64_t m = std::min(slice + (f == 0 ? StreamDecoder::kFeaturesLookaheadFrames : 0), F - f);
    const int64_t slice_t0_ns = preroll_now_ns();  // the wait for a compute turn counts: it delays the audio too
    if (!take_turn(turn, generation, deadline_ns(utterance, 0))) return false;
    t0 = Clock::now();
    copy_columns(x, 2 * f, 2 * m, cols);
    const int64_t f0_to = std::min<int64_t>(2 * (f + m + options_.source_lead_frames), 2 * F);
    if (f == 0 && early.frames > 0) {
      sd.push_features(cols, f0.data() + f0_sent, f0_to - f0_sent, f + m == F, exact);
      splice_early(early, exact, audio);
      spdlog::debug("early start: the exact path's first push ({} frames) {:.1f} ms", m, ms_since(t0));
    } else {
      sd.push_features(cols, f0.data() + f0_sent, f0_to - f0_sent, f + m == F, audio);
    }
    f0_sent = f0_to;
    record_stage(utterance, EngineStage::generator, t0, Clock::now());
    turn = ComputeScheduler::Turn();
    if (options_.on_vocode_progress) options_.on_vocode_progress(segment_seconds, static_cast<double>(f + m) / F);
    const double slice_s = static_cast<double>(preroll_now_ns() - slice_t0_ns) * 1e-9;
    const double slice_audio_s = static_cast<double>(audio.numel()) / kSampleRate;
    if (f > 0) {
      if (slice_audio_s >= pace_audio) pace_seconds = slice_s, pace_audio = slice_audio_s;
    } else {
      // Per second pushed, not emitted: the look-ahead computed ahead is most of the difference, and
      // per emitted second it would be ~2.4 times the steady pace (docs/streaming.md).
      first_pace = slice_s / (static_cast<double>(m * kSamplesPerFrame) / kSampleRate);
    }
    const double took = ms_since(t0) / 1e3;
    compute_s += took;
    report_work(took, static_cast<double>(m * kSamplesPerFrame) / kSampleRate);
    slices_.fetch_add(1);
    chunks_.fetch_add(1);
    // After an early start's first exact push the slice stays as long once: that push added only the
    // crossfade's frames to the audio queued (the rest replaced the early audio), so the audio in hand is at
    // its thinnest, and a slice twice as long (26 frames after a 5 s sentence's early start, ~90-130 ms) ran
    // the device dry 0.33 s into streamed sentences that started after the engine idled.
    if (!(f == 0 && early.frames > 0)) slice = std::min<int64_t>(2 * slice, options_.max_chunk_frames);
    f += m;
    if (f == F) {
      mark_first_segment(utterance);  // all computed; the push may block at playback pace
      // The generator's weights are not read again before the next segment's decoder half, which reads
      // its own: the pages of both together were the peak of a long paragraph (docs/benchmarks.md).
      if (release) synth_->model().release_resident_pages();
    }
    if (!push_audio(audio.data(), audio.numel(), generation)) return false;
    if (f < F) {
      preroll_decide_slices(f, F, slice, pace(), start_pace, true);
    } else if (seg_.last) {
      if (preroll_.active) preroll_release();
    } else {
      preroll_decide_slices(F, F, slice, pace(), start_pace, false);  // the next segment's vocoding has not started
    }
    // After the pre-roll's decision, which lets the first slice play: releasing takes ~6 ms.
    if (release_after_first_slice) {
      synth_->model().release_resident_pages();
      release_after_first_slice = false;
    }
  }
  if (pace_audio > 0) slice_pace_ = slice_pace_ > 0 ? updated_preroll_rtf(slice_pace_, pace_seconds / pace_audio) : pace_seconds / pace_audio;
  add_synth_seconds(utterance, compute_s);
  return true;
}

}  // namespace kokoro
