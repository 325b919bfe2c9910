// Slice mode of the streaming engine's vocoder worker (engine/stream_engine.h): the decoder half over the whole
// segment, then the generator slice by slice (vocoder/slice_vocoder.h), each slice as long as both bounds of
// the SlicePlanner allow (engine/slice_planner.h; docs/streaming.md, "slice mode").
#include <spdlog/spdlog.h>

#include <algorithm>
#include <chrono>

#include "engine/slice_planner.h"
#include "engine/stream_engine.h"
#include "vocoder/slice_vocoder.h"

namespace kokoro {

double StreamEngine::queued_audio_seconds() const {
  const SinkStats s = sink_.stats();
  double device = 0;
  if (s.output_rate > 0)
    device = static_cast<double>(s.frames_written) / sink_.input_rate() - static_cast<double>(s.frames_played) / s.output_rate;
  const double ring = static_cast<double>(audio_.write_position() - audio_.read_position()) / kSampleRate;
  return ring + std::max(0.0, device);
}

void StreamEngine::synthesize_slices(uint64_t generation, uint64_t utterance, const Tensor& asr, const Tensor& f0,
                                     const Tensor& n, NoiseSource& noise) {
  const Decoder& dec = synth_->decoder();
  ComputeScheduler::Turn turn;
  if (!take_turn(turn, generation, deadline_ns(utterance, 0))) return;
  const auto t_start = Clock::now();
  Tensor x, audio;
  dec.features(asr, f0, n, seg_.style.data(), x);
  // A long segment: where the memory peaks. Not while other sessions compute: they would fault them in again.
  const bool release = asr.dim(1) >= kReleasePagesFromFrames && may_release_pages();
  if (release) synth_->model().release_resident_pages();  // the generator needs none of them (model_file.h)
  const double features_ms = ms_since(t_start);
  const auto t_features = Clock::now();
  record_stage(utterance, EngineStage::decoder, t_start, t_features);
  SliceVocoder& sv = *slicer_;
  sv.begin(x, f0.data(), seg_.style.data(), noise);
  record_stage(utterance, EngineStage::source, t_features, Clock::now());
  turn = ComputeScheduler::Turn();
  spdlog::debug("slice mode: decoder half {:.1f} ms, harmonic source {:.1f} ms ({} frames)", features_ms,
                ms_since(t_start) - features_ms, asr.dim(1));
  const int64_t T = sv.columns();
  const double spc = static_cast<double>(sv.samples_per_column()) / kSampleRate;

  std::vector<WordTimes> words;
  for (const EventItem& w : seg_.words)  // positions relative to the segment (samples); marks are no words
    if (w.kind == EventItem::word)
      words.push_back({static_cast<double>(w.position) / kSampleRate,
                       static_cast<double>(w.end_position) / kSampleRate});
  const SlicePlanner planner(options_.slice_schedule, T, spc, sv.options().context_columns, sv.min_slice_columns(),
                             slice_borders_from_words(words, spc, T));
  // Nominal bound: this segment starts once its acoustic model and decoder half are done, which the queue
  // left by the previous segment's plan must cover.
  const double segment_s = static_cast<double>(T) * spc;
  double q_nominal = nominal_queue_;
  if (q_nominal > 0)
    q_nominal = std::max(0.0, q_nominal - options_.nominal_startup_seconds - options_.nominal_startup_rtf * segment_s);
  const std::vector<int64_t> plan = planner.nominal_plan(q_nominal);
  nominal_queue_ = planner.nominal_queue_after(q_nominal);
  const bool measured = sink_.plays_in_real_time();
  double compute_s = ms_since(t_start) / 1e3;

  for (int64_t from = 0; from < T;) {
    if (stale(generation) || quit_.load()) return;
    if (options_.before_chunk) options_.before_chunk();
    const int64_t nominal_end = *std::upper_bound(plan.begin(), plan.end(), from);
    int64_t end = nominal_end;
    if (measured) {
      // The measured bound only shortens: less audio queued or a slower machine than planned for.
      end = std::min(end, planner.next_end(from, queued_audio_seconds(), measured_rtf_));
      if (end < nominal_end) slices_shortened_.fetch_add(1);
    }
    if (!take_turn(turn, generation, deadline_ns(utterance, 0))) return;
    const auto t0 = Clock::now();
    spdlog::debug("slice {} -> {} of {} (nominal {})", from, end, T, nominal_end);
    sv.render_until(end, audio);
    record_stage(utterance, EngineStage::generator, t0, Clock::now());
    turn = ComputeScheduler::Turn();
    const double took = ms_since(t0) / 1e3;
    report_work(took, static_cast<double>(end - from) * spc);
    spdlog::debug("slice {} -> {}: {:.1f} ms", from, end, took * 1e3);
    compute_s += took;
    // Speed for the measured bound: per second of audio computed (context included), smoothed.
    const double rate = took / std::max(1e-3, planner.compute_seconds(from, end, 1.0) - options_.slice_schedule.overhead_seconds);
    measured_rtf_ = 0.5 * measured_rtf_ + 0.5 * rate;
    slices_.fetch_add(1);
    chunks_.fetch_add(1);
    from = end;
    if (from == T) {
      mark_first_segment(utterance);  // all computed; the push may block at playback pace
      // The generator's weights are not read again before the next segment's decoder half, which reads
      // its own: the pages of both together were the peak of a long paragraph (docs/benchmarks.md).
      if (release) synth_->model().release_resident_pages();
    }
    if (!push_audio(audio.data(), audio.numel(), generation)) return;
  }
  add_synth_seconds(utterance, compute_s);
}

}  // namespace kokoro
