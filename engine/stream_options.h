// Settings and events of the streaming engine (engine/stream_engine.h), shared with engine/speaker.h.
#pragma once
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "engine/preroll.h"
#include "engine/slice_planner.h"
#include "vocoder/slice_vocoder.h"
#include "vocoder/stream_norm.h"

namespace kokoro {

class ComputeScheduler;

// Every mode runs the acoustic model (durations, F0, energy) over the same whole-sentence segments, so
// every mode speaks each sentence with the same timing; they differ in how the vocoder gets there.
// exact: every segment is vocoded whole (the reference's statistics; identical to Synthesizer), segment N+1
//        is synthesized while N plays; on a real-time device an utterance starts once its pre-roll covers the
//        vocoding of the segments after it (PrerollOptions).
// slice: the decoder half over the whole segment (exact), the generator over word-aligned slices, each with
//        its own exact statistics, crossfaded; slice lengths follow the audio queued ahead (SlicePlanner), so
//        speech starts after the first slice and never waits for the rest of the sentence.
// stream: the decoder half over the whole segment (exact statistics), the generator in chunks of
//         growing size with a statistics policy (guessed statistics), so the first audio leaves after the
//         first chunk.
enum class SynthesisMode { exact, slice, stream };
SynthesisMode parse_synthesis_mode(const std::string& name);  // "exact" | "slice" | "stream"; throws kokoro::Error
const char* to_string(SynthesisMode mode);

struct StreamOptions {
  // stream mode: chunk sizes in frames (25 ms): the first chunk, then doubling up to the maximum (small
  // first chunks for latency, large later ones for throughput: the kernels are faster on long inputs). The
  // first chunk must outlast the generator's 95 ms look-ahead plus the time to compute the second one, or
  // the device runs dry right after the first audio: 12 is the smallest that measured underrun-free here
  // (docs/streaming.md).
  int first_chunk_frames = 12;
  int max_chunk_frames = 48;
  int source_lead_frames = 2;  // the F0 curve goes to the harmonic source this far ahead (see StreamDecoder)
  // slice mode: where slices end and how long they may be (engine/slice_planner.h), and their context and
  // crossfade (vocoder/slice_vocoder.h).
  SliceSchedule slice_schedule;
  SliceOptions slice;
  // slice mode, nominal bound: the acoustic model and decoder half of a later segment are assumed to take
  // this long (seconds, plus this share of the segment's audio) before its first slice can start.
  double nominal_startup_seconds = 0.1, nominal_startup_rtf = 0.06;

  // Generator statistics (vocoder/stream_norm.h). "prior" (a voice's calibrated priors) measured best;
  // "cumulative" needs no calibration file, hence the default here; Speaker users pick with priors_for_voice.
  std::string policy = "cumulative";
  std::shared_ptr<const NormPriors> priors;     // for the policies that use priors

  // The acoustic worker holds an utterance's later segments until the vocoder has computed the first
  // segment's audio (exact mode: the segment; stream mode: its last chunk). On two cores the first-audio path
  // (and, in stream mode, the chunks right after the first, which must outrun playback) then has the
  // machine to itself instead of sharing it with the next segment's acoustic model, which is not needed
  // before the first segment has played (docs/streaming.md, "time to first audio").
  bool first_segment_first = true;

  // exact mode: hold the start of an utterance's playback until the audio already vocoded covers the
  // vocoding of the segments after it (engine/preroll.h; docs/streaming.md, "exact mode's pre-roll"). Only
  // on a real-time sink: a file cannot run dry.
  PrerollOptions preroll;

  // Bounds, i.e. back-pressure: how far each stage may run ahead of the next.
  // Aligned frames in flight between the acoustic and the vocoder worker (whole segments: one segment always
  // goes, however long).
  std::size_t frame_ring_frames = 1024;
  // Audio between the vocoder worker and the sink writer. Generous, so that the vocoder can work ahead of
  // playback (the next segment while this one plays); barge-in drops it exactly, so size costs no latency.
  double audio_ring_seconds = 20.0;
  std::size_t text_piece_bytes = 4096;   // text handed to the frontend at a time (cut at a line or sentence end)

  // The compute scheduler shared by every session of a model (engine/compute_scheduler.h): each compute item
  // waits for its turn, earliest deadline first, and the session's load feeds admission. Null: no turns
  // (one session alone, as before sessions existed).
  std::shared_ptr<ComputeScheduler> scheduler;

  // Test instrumentation: called by the vocoder worker before each chunk of work (e.g. to make it slow).
  std::function<void()> before_chunk;
  // Test instrumentation, exact mode: called by the vocoder worker at each progress point of a segment's
  // vocoding (the segment's audio seconds, the fraction of its work done), before the pre-roll decides.
  std::function<void(double audio_seconds, double done_fraction)> on_vocode_progress;
  // Test instrumentation: the pre-roll's clock (nanoseconds) instead of steady_clock, for the vocoding times
  // it measures and the release times it sets. The test advances it; it must outlive the engine.
  const std::atomic<int64_t>* preroll_clock_ns = nullptr;
  // Test instrumentation: the clock of streamed text's pause flush (StreamEngine::begin_text; nanoseconds)
  // instead of steady_clock. A test that never advances it never sees the flush, whatever the wall clock does.
  const std::atomic<int64_t>* text_clock_ns = nullptr;
};

// Timestamps for captions. Positions are in the output stream: seconds of audio handed to the sink since
// the engine started (samples / 24000); an event is delivered when the audio up to `time_s` has been handed
// to the sink (add the sink's latency for the moment it is heard).
struct StreamEvent {
  // mark: an SSML <mark name="..."/> reached in the audio (name below; time_s = end_s).
  enum class Kind { utterance_start, segment_start, word, segment_end, utterance_end, mark };
  Kind kind = Kind::utterance_start;
  uint64_t utterance = 0;                  // what say() returned
  std::size_t text_begin = 0, text_end = 0;  // bytes in the utterance's text (segment and word events)
  double time_s = 0, end_s = 0;            // start, and end for segments and words
  std::string name;                        // mark events: the mark's name
};
const char* to_string(StreamEvent::Kind kind);

// Where kokoro-stream-eval caches a voice's calibrated priors: <model dir>/norm-priors-<voice>.kokoro, the model
// dir being models/ in a build tree and the data directory of an install (core/assets.h).
std::string norm_priors_path(const std::string& voice_name);
// The stream settings docs/streaming.md recommends for a voice: fixed calibrated priors ("prior") when the
// voice has a priors file, else cumulative statistics. `note` (optional) says which and why.
StreamOptions recommended_stream_options(const std::string& voice_name, std::string* note = nullptr);

// Where kokoro-stats-fit writes a model's learned statistics predictor: beside the model file,
// <dir>/<stem>.stats-predictor.kokoro (models/kokoro-v1_0.stats-predictor.kokoro).
std::string stats_predictor_path(const std::string& model_path);
// The predictor shipped with the engine for kokoro-v1_0 (data/kokoro-v1_0.stats-predictor.kokoro, installed
// to <data>/data/; core/assets.h): the installed copies, then the source tree's; existing or not.
std::vector<std::string> shipped_stats_predictor_paths();
// The slice settings docs/streaming.md recommends: a statistics predictor standing in for the columns a
// slice has not computed (whole-segment statistics, predictor_subtract 1), else pooled statistics alone.
// Which predictor: KOKORO_SLICE_PREDICTOR=<file> (missing, corrupt or made for another model: an error;
// =none turns the predictor off), else the first of the file beside the model (a user's own fit) and the
// shipped one that was fitted for this model (StatsPredictor::mismatch); one that was not is skipped with a
// warning (logged once per file). Throws kokoro::Error for a corrupt file. `note` (optional) says which and why.
StreamOptions recommended_slice_options(const ModelFile& model, std::string* note = nullptr);

}  // namespace kokoro
