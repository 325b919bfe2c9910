// Exact mode's pre-roll rule (issue 16): when to start playing an utterance whose segments are vocoded
// whole, one after the other, so that the device never runs dry between them.
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
// the wait for a segment's acoustic model). The engine applies it in engine/stream_engine_preroll.cpp, with
// rtf = the vocoder's measured speed plus the acoustic model's: while a segment is vocoded the acoustic
// worker computes the next one on the same cores.
#pragma once
#include <chrono>
#include <cstdint>
#include <vector>

namespace kokoro {

struct PrerollOptions {
  bool enabled = true;          // exact mode on a real-time sink only (slice mode has its planner)
  double nominal_rtf = 0.3;     // vocoder seconds per audio second until a segment has been measured
  double nominal_acoustic_rtf = 0.06;  // acoustic model seconds per audio second, likewise
  double margin_seconds = 0.25; // added to the required pre-roll
  double margin_share = 0.2;    // every estimated vocoding time is taken this much longer
  // Estimating a later segment's audio from its phonemes before its acoustic model has run: frames per
  // phoneme at speed 1 until measured (the acoustic worker then uses the ratio it has seen).
  double nominal_frames_per_phoneme = 3.0;
};

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
