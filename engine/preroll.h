// The pre-roll rule (issue 16): when to start playing an utterance whose segments are vocoded whole, one
// after the other, so that the device never runs dry between them. Slice mode applies the same formula to its
// slices (issue 28: each slice is a "segment" whose audio is queued as soon as it is computed; see
// slice_margin_seconds below and StreamEngine::preroll_decide_slices).
//
// Exact mode vocodes each segment whole, so a short first segment (--first-words) can play out long before
// the next, long segment is vocoded. The rule holds the start of an utterance's playback until the audio
// already vocoded covers the vocoding still to come. With the segments still to vocode numbered 1..n,
// A_i their audio seconds and V_i = rtf * A_i their estimated vocoding time, vocoding starting now:
// segment k is ready after V_1 + ... + V_k and is due to play after Q + A_1 + ... + A_{k-1}, where Q is the
// audio queued ahead of it when playback starts. Hence playback may start once
//
//     Q  >=  max over k of ( V_1 + ... + V_k  -  (A_1 + ... + A_{k-1}) )  +  margin
//
// with V_i inflated by margin_share (the speed varies under load) and a fixed margin_seconds (scheduling,
// the wait for a segment's acoustic model).
//
// Following the vocoder's progress (follow_progress, the default): the engine re-decides at every progress
// point of the segment being vocoded (Synthesizer::vocode reports the fraction of its multiply-adds done).
// V_1 is then what is left of that segment at the pace measured so far (remaining_vocode_seconds: the pace
// before it started while little is done, the measured one once a trust fraction is done, a slower one at
// once), and every later segment takes overhead + per_second * A_i (VocodeSpeed): a short first segment's
// fixed cost does not inflate the estimate of a long one. The time measured is wall-clock, so it includes
// the acoustic worker computing the next segment on the same cores and any other load.
// Without follow_progress (the first rule): V_i = rtf * A_i with rtf = the vocoder's measured speed plus
// the acoustic model's, decided when a segment's vocoding starts and when its audio is queued.
#pragma once
#include <chrono>
#include <cstdint>
#include <vector>

namespace kokoro {

struct PrerollOptions {
  bool enabled = true;          // on a real-time sink only (both modes; slice mode by its own rule, below)
  double nominal_rtf = 0.3;     // vocoder seconds per audio second until a segment has been measured
  double nominal_acoustic_rtf = 0.06;  // acoustic model seconds per audio second, likewise
  double margin_seconds = 0.25; // added to the required pre-roll
  double margin_share = 0.2;    // every estimated vocoding time is taken this much longer
  // Estimating a later segment's audio from its phonemes before its acoustic model has run: frames per
  // phoneme at speed 1 until measured (the acoustic worker then uses the ratio it has seen).
  double nominal_frames_per_phoneme = 3.0;
  // Re-decide at each progress point of a segment's vocoding from its measured pace (see above).
  bool follow_progress = true;
  double segment_overhead_seconds = 0.05;  // a segment's vocoding time beyond per_second * its audio
  double progress_trust_fraction = 0.25;   // the fraction of a segment's work after which its own pace counts alone
  // Slice mode: the same rule over the slices still to come (each one's audio is queued as soon as it is
  // computed) and the segments after them, re-decided after every slice with the pace measured on this
  // segment's slices (before any: the last segment's). Its estimate is refreshed every slice, so its margins
  // are small: on a machine whose slices keep up (pace below 0.5 with slices that double) the first slice
  // plays at once, and on a slower one playback waits until the rest can follow without a gap.
  double slice_margin_seconds = 0.02;
  double slice_margin_share = 0.1;
  // The early start's exact path restarts in one block (curves and decoder half over the segment, then a
  // first push that recomputes the early frames) that no later decision can correct, and a sentence of text
  // that streams in starts it after the engine idled, when it runs slower: its estimate (EarlyRestartEstimate)
  // is taken this much longer. Measured: a 6 s sentence's restart 168 ms against 131 estimated from the ones
  // before it (ran dry 47 ms, 0.33 s into it); with 0.2 the medium corpus' TTFA p50 was unchanged (76-78 ms
  // against 77-79), with 0.3 it rose to 78-100.
  double early_restart_margin_share = 0.2;
};

// A segment of `audio` seconds takes overhead_seconds + per_second * audio to vocode.
struct VocodeSpeed {
  double per_second = 0, overhead_seconds = 0;
  double seconds(double audio) const { return overhead_seconds + per_second * audio; }
};

// Slice mode's early start (docs/streaming.md, "The early start"): how long the exact path takes to restart
// (the F0 and energy curves and the decoder half over the whole segment, before its first push), which the
// pre-roll counts before the slice after the early audio. Part of it does not grow with the segment: on the
// yardstick machine 47 ms + 5.5 ms per second of segment (segments of 5-20 s), that is per_second times
// (segment + kFixedSeconds). A figure per second of segment alone, measured on a 5 s segment, doubled a 20 s
// one's estimate (and would halve a short one's after a long one).
struct EarlyRestartEstimate {
  static constexpr double kFixedSeconds = 8.5;
  // Before any measurement: the generator's slice pace times kSliceShare (its measured ratio on the yardstick
  // machine: the same cores, the same load), with a margin of kFirstMargin, but never more per second of
  // segment than kUnmeasuredPerSecond (the rule before this model, for a machine nothing is known of yet).
  static constexpr double kSliceShare = 0.052;
  static constexpr double kFirstMargin = 1.5;
  static constexpr double kUnmeasuredPerSecond = 0.02;
  double per_second = 0;  // measured, seconds per second of (segment + kFixedSeconds); 0: nothing measured yet

  // The restart of a segment of `segment_seconds`, the generator's slices running at `slice_pace` (seconds
  // per audio second; <= 0: unknown).
  double seconds(double segment_seconds, double slice_pace) const;
  // A restart measured at `restart_seconds`: followed as updated_preroll_rtf follows a speed (a slower
  // measurement at once, a faster one halfway).
  void measured(double segment_seconds, double restart_seconds);
};

// The vocoding time left on a segment whose whole vocoding was estimated at `prior_seconds` before it
// started, `fraction` of its work done after `elapsed_seconds`: the rest of the work at the estimated pace
// (seconds per whole segment). The measured pace is elapsed / fraction, or the last piece's
// `recent_pace` (its seconds over its fraction) when that is slower: a machine that has just slowed down
// shows it there first. A measured pace slower than the prior counts at once; a faster one moves the prior
// to it in proportion to the fraction done, reaching it at options.progress_trust_fraction. Nothing done
// yet: the prior.
double remaining_vocode_seconds(double prior_seconds, double elapsed_seconds, double fraction, const PrerollOptions& options,
                                double recent_pace = 0);

// The audio that must be queued when segments of `audio_seconds` (in order; the first one is being vocoded
// or is next) still take `vocode_seconds` each: the formula above with V_i = vocode_seconds[i].
double preroll_needed_seconds(const std::vector<double>& audio_seconds, const std::vector<double>& vocode_seconds,
                              const PrerollOptions& options);

// The audio (seconds) that must be queued ahead of playback when the vocoder starts on the first of
// `audio_seconds` (the segments still to vocode, in order) at `rtf`: the formula above. 0 for no segment.
double preroll_needed_seconds(const std::vector<double>& audio_seconds, double rtf, const PrerollOptions& options);

// The vocoder speed estimate after a segment measured at `measured` (seconds per audio second): follows a
// slower measurement at once, a faster one halfway (a loaded machine is the risk, not an idle one).
double updated_preroll_rtf(double estimate, double measured);

// The clock of the engine's release times (steady_clock, nanoseconds): no allocation, no lock, no syscall
// on Linux (vDSO), so the output thread may read it.
inline int64_t steady_now_ns() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

}  // namespace kokoro
