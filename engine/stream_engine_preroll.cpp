// Exact mode in the streaming engine's vocoder worker (engine/stream_engine.h): each segment vocoded whole
// (Synthesizer::vocode), and the pre-roll: when an utterance's playback may start, by the rule of engine/preroll.h
// (slice mode applies the same rule over its slices: preroll_decide_slices, from stream_engine_slices.cpp). The vocoder worker decides at two points
// per segment: when the segment's vocoding starts (then playback may start at a time: now + what the rule
// asks beyond the audio already held; for the utterance's first segment only if what is queued before it
// already covers the rule) and when its audio is queued (then at once, or not before the next
// segment's vocoding starts: the wait for its acoustic model is no vocoding progress). It releases for good
// when the utterance's last segment is vocoded, when the utterance ends (a failure, trailing silence) and
// when the audio ring is full. The output thread only compares (engine/stream_engine.cpp, output_loop).
// Following progress (PrerollOptions::follow_progress), it also re-decides at every progress point of a
// segment's vocoding (Synthesizer::vocode's callback), with what is left of that segment at the pace
// measured so far: the release time moves earlier on a fast machine and later on a slow or loaded one.
//
// Segments not produced yet: the acoustic worker holds an utterance's later segments until the first one is
// vocoded (first_segment_first), so when the first segment's audio is queued the second one's frames are
// not known. Instead of releasing that hold early (it is what keeps the first audio fast), each segment
// carries an estimate of the segments after it in its text piece (their phonemes times the frames per
// phoneme the acoustic model has produced so far); a segment's exact frame count replaces the estimate
// when its vocoding starts.
#include <spdlog/spdlog.h>

#include <algorithm>
#include <chrono>

#include "engine/preroll.h"
#include "engine/stream_engine.h"
#include "engine/vocode_stage_split.h"

namespace kokoro {

bool StreamEngine::synthesize_whole(uint64_t generation, uint64_t utterance, const Tensor& asr, const Tensor& f0,
                                    const Tensor& n, NoiseSource& noise) {
  const int64_t F = asr.dim(1);
  Tensor audio;
  if (options_.before_chunk) options_.before_chunk();
  constexpr double kSecondsPerFrame = static_cast<double>(kSamplesPerFrame) / kSampleRate;
  std::vector<double> to_vocode{static_cast<double>(F) * kSecondsPerFrame};
  for (const double f : seg_.following_frames) to_vocode.push_back(f * kSecondsPerFrame);
  ComputeScheduler::Turn turn;
  if (!take_turn(turn, generation, deadline_ns(utterance, 0))) return false;
  preroll_decide(to_vocode, true);  // this segment's vocoding starts now
  const auto t0 = Clock::now();
  const int64_t t0_ns = preroll_now_ns();
  VocodeProgress last{0, 0, 0};
  const ProgressCallback on_progress = [&](double fraction) { preroll_progress(to_vocode, t0_ns, fraction, last); };
  VocodeStageSplit stages([&](EngineStage s, Clock::time_point b, Clock::time_point e) { record_stage(utterance, s, b, e); });
  synth_->vocode(asr, f0, n, seg_.style.data(), noise, audio, stages.start(), &on_progress, may_release_pages());
  turn = ComputeScheduler::Turn();
  add_synth_seconds(utterance, ms_since(t0) / 1e3);
  report_work(ms_since(t0) / 1e3, static_cast<double>(F) * kSecondsPerFrame);
  const double took = static_cast<double>(preroll_now_ns() - t0_ns) * 1e-9;
  const double overhead = options_.preroll.follow_progress ? options_.preroll.segment_overhead_seconds : 0.0;
  preroll_rtf_ = updated_preroll_rtf(preroll_rtf_, std::max(took - overhead, 0.0) / to_vocode.front());
  chunks_.fetch_add(1);
  mark_first_segment(utterance);  // computed: the acoustic worker may go on (the push may block at playback pace)
  if (!push_audio(audio.data(), audio.numel(), generation)) return false;
  if (seg_.last) {
    if (preroll_.active) preroll_release();
  } else {
    to_vocode.erase(to_vocode.begin());
    preroll_decide(to_vocode, false);  // the next segment's vocoding has not started
  }
  return true;
}

double StreamEngine::frames_per_phoneme() const {
  return acoustic_phonemes_ > 0 ? acoustic_frames_ / acoustic_phonemes_ : options_.preroll.nominal_frames_per_phoneme;
}

void StreamEngine::preroll_begin(uint64_t utterance) {
  // Every utterance replaces the previous hold (also one a barge-in left behind) before its marker is pushed.
  const bool on = options_.preroll.enabled && sink_.plays_in_real_time();
  release_at_ns_.store(INT64_MAX);
  hold_from_.store(on ? audio_.write_position() : kNoHold);
  preroll_ = Preroll{on, false, utterance, audio_.write_position()};
  wake();  // a hold the output thread may be napping on was replaced
}

void StreamEngine::preroll_release() {
  preroll_.active = false;
  hold_from_.store(kNoHold);
  wake();
}

void StreamEngine::preroll_decide(const std::vector<double>& to_vocode_seconds, bool starting,
                                  const VocodeProgress* progress) {
  if (!preroll_.active) return;
  if (hold_from_.load() != preroll_.start) {  // the output thread has started it (its release time came)
    preroll_.active = false;
    return;
  }
  const PrerollOptions& o = options_.preroll;
  double need = 0, rtf = 0;
  if (o.follow_progress) {
    // Wall-clock pace: it includes the acoustic worker's next segment on the same cores, and any other load.
    VocodeSpeed speed{preroll_rtf_, o.segment_overhead_seconds};
    std::vector<double> vocode(to_vocode_seconds.size());
    for (size_t k = 0; k < vocode.size(); ++k) vocode[k] = speed.seconds(to_vocode_seconds[k]);
    if (progress && !vocode.empty()) {
      const double a = to_vocode_seconds.front();
      vocode.front() = remaining_vocode_seconds(vocode.front(), progress->elapsed_seconds, progress->fraction, o,
                                                progress->recent_pace);
      // Later segments at the pace now estimated for this one (beyond its overhead); once it is done, at
      // the time it took.
      const double f = std::min(std::max(progress->fraction, 0.0), 1.0);
      if (f > 0 && a > 0) {
        const double whole = f < 1 ? vocode.front() / (1.0 - f) : progress->elapsed_seconds;
        speed.per_second = std::max(0.0, whole - speed.overhead_seconds) / a;
        for (size_t k = 1; k < vocode.size(); ++k) vocode[k] = speed.seconds(to_vocode_seconds[k]);
      }
    }
    rtf = speed.per_second;
    need = preroll_needed_seconds(to_vocode_seconds, vocode, o);
  } else {
    // The next segment's acoustic model runs while a segment is vocoded, on the same cores: both count.
    rtf = preroll_rtf_ + acoustic_rtf_.load();
    need = preroll_needed_seconds(to_vocode_seconds, rtf, o);
  }
  spdlog::debug("pre-roll: {} segment(s) to vocode at {:.3f} s per second{}{}", to_vocode_seconds.size(), rtf,
                starting ? " (vocoding starts)" : "",
                progress ? fmt::format(" ({:.0f} % vocoded in {:.3f} s)", 100 * progress->fraction, progress->elapsed_seconds) : "");
  // Nothing held yet (the first segment starts): decide when its audio is queued, with its measured speed.
  // A segment queued: not before the next one's vocoding starts (the wait for its acoustic model is no
  // vocoding progress).
  preroll_apply(need, starting || progress, "exact");
}

void StreamEngine::preroll_apply(double need, bool may_time, const char* why) {
  const double held = static_cast<double>(audio_.write_position() - preroll_.start) / kSampleRate;
  // Audio ahead of the device's play position: the held audio, and what is left of the utterance before.
  const double queued = queued_audio_seconds();
  spdlog::debug("pre-roll ({}): need {:.2f} s, {:.2f} s held, {:.2f} s queued", why, need, held, queued);
  if (queued >= need) {
    preroll_release();
    return;
  }
  const bool timed = may_time && held > 0;
  release_at_ns_.store(timed ? preroll_now_ns() + static_cast<int64_t>((need - held) * 1e9) : INT64_MAX);
  wake();  // the output thread naps until the release it saw
  if (held > 0 && !preroll_.counted) {  // audio is ready and waits
    preroll_.counted = true;
    preroll_holds_.fetch_add(1);
    std::lock_guard<std::mutex> lock(mutex_);
    if (auto it = utterances_.find(preroll_.utterance); it != utterances_.end()) {
      it->second.preroll_held = true;
      it->second.held_since = std::chrono::steady_clock::now();
    }
  }
}

void StreamEngine::preroll_decide_slices(int64_t done, int64_t frames, int64_t next_slice, double pace, double start_pace,
                                         bool may_time, int64_t restart_at, double restart_seconds) {
  if (!preroll_.active) return;
  if (hold_from_.load() != preroll_.start) {  // the output thread has started it (its release time came)
    preroll_.active = false;
    return;
  }
  constexpr double kSecondsPerFrame = static_cast<double>(kSamplesPerFrame) / kSampleRate;
  const PrerollOptions& o = options_.preroll;
  std::vector<double> audio, vocode;
  // Slices from frame `from` of a segment of `total` frames, the first `first` frames long; `fixed`: what the
  // segment costs before its first slice.
  auto add_slices = [&](int64_t from, int64_t total, int64_t first, double fixed) {
    for (int64_t f = from, m = first; f < total; f += m, m = std::min<int64_t>(2 * m, options_.max_chunk_frames)) {
      m = std::min(m, total - f);
      audio.push_back(static_cast<double>(m) * kSecondsPerFrame);
      vocode.push_back(fixed + pace * audio.back());
      fixed = 0;
    }
  };
  if (restart_at >= done && restart_at < frames) {  // the early start: its slices, the exact path, the rest
    add_slices(done, restart_at, next_slice, 0.0);
    // The exact path's first push (restart_seconds covers it) recomputes the early frames: it adds only the
    // crossfade's frames to the audio; the slices after it start as long as it (synthesize_slices).
    const int64_t X = std::clamp<int64_t>(options_.early_crossfade_frames, 1, frames - restart_at);
    audio.push_back(static_cast<double>(X) * kSecondsPerFrame);
    vocode.push_back(restart_seconds);
    add_slices(restart_at + X, frames, std::min<int64_t>(restart_at + X, options_.max_chunk_frames), 0.0);
  } else {
    add_slices(done, frames, next_slice, 0.0);
  }
  // The segments after this one, each with its acoustic model and decoder half before its first slice (their
  // frames are estimates until their acoustic model has run).
  for (const double f : seg_.following_frames) {
    const int64_t n = std::max<int64_t>(1, static_cast<int64_t>(std::lround(f)));
    add_slices(0, n, options_.first_chunk_frames,
               o.segment_overhead_seconds + (acoustic_rtf_.load() + start_pace) * static_cast<double>(n) * kSecondsPerFrame);
  }
  PrerollOptions slice_rule = o;
  slice_rule.margin_seconds = o.slice_margin_seconds;
  slice_rule.margin_share = o.slice_margin_share;
  preroll_apply(preroll_needed_seconds(audio, vocode, slice_rule), may_time, "slices");
}

void StreamEngine::preroll_progress(const std::vector<double>& to_vocode_seconds, int64_t started_ns, double fraction,
                                    VocodeProgress& last) {
  if (options_.on_vocode_progress) options_.on_vocode_progress(to_vocode_seconds.front(), fraction);
  if (!preroll_.active || !options_.preroll.follow_progress) return;
  const double elapsed = static_cast<double>(preroll_now_ns() - started_ns) * 1e-9;
  // The last piece's pace, from the first generator piece on (the decoder half's pace is another).
  const double piece = fraction - last.fraction;
  const double recent = last.fraction > 0 && piece > 0 ? (elapsed - last.elapsed_seconds) / piece : 0.0;
  last = VocodeProgress{elapsed, fraction, recent};
  preroll_decide(to_vocode_seconds, false, &last);
}

}  // namespace kokoro
