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
#include "vocoder/stats_predictor.h"

namespace kokoro {

class ComputeScheduler;

// Every mode runs the acoustic model (durations, F0, energy) over the same whole-sentence segments, so
// every mode speaks each sentence with the same timing; they differ in how the vocoder gets there.
// exact: every segment is vocoded whole (the reference's statistics; identical to Synthesizer), segment N+1
//        is synthesized while N plays; on a real-time device an utterance starts once its pre-roll covers the
//        vocoding of the segments after it (PrerollOptions).
// slice: the early-audio mode. The decoder half over the whole segment (exact), then the generator in
//        slices that carry every convolution's state to the next (vocoder/stream_decoder.h: no context is
//        recomputed, no crossfade), each AdaIN layer normalised with the learned statistics predictor's
//        whole-segment statistics (vocoder/stats_predictor.h), so speech starts after the first short slice.
//        A segment of 3 s or more starts before its decoder half (early_predictor below).
//        Without a predictor for the model the engine speaks in exact mode (and says so).
// ("stream", the chunked vocoder with guessed statistics, was merged into slice: parse_synthesis_mode says so.)
enum class SynthesisMode { exact, slice };
SynthesisMode parse_synthesis_mode(const std::string& name);  // "exact" | "slice"; throws kokoro::Error
const char* to_string(SynthesisMode mode);
// Slice lengths given in seconds (the programs' --first-slice, --max-slice) as frames of 25 ms, at least one.
int slice_frames(double seconds);

struct StreamOptions {
  // slice mode: slice lengths in frames (25 ms): the first slice, then doubling up to the maximum (a short
  // first slice for latency, longer later ones for throughput: the kernels are faster on long inputs). The
  // first slice is that much audio: its push reaches the generator's 95 ms look-ahead further
  // (StreamDecoder::kFeaturesLookaheadFrames). It must outlast the computing of the second one, or the device runs
  // dry right after the first audio (docs/streaming.md).
  int first_chunk_frames = 4;  // of audio: the first push reaches the generator's look-ahead further
  int max_chunk_frames = 48;
  int source_lead_frames = 2;  // the F0 curve goes to the harmonic source this far ahead (StreamDecoder::kFeaturesSourceLeadFrames)
  // slice mode: the model's statistics predictor (recommended_slice_options finds it). Every slice of a
  // segment is normalised with its predicted whole-segment statistics, so the audio does not depend on where
  // slices end (docs/streaming.md).
  std::shared_ptr<const StatsPredictor> predictor;
  // slice mode, the early start (issue 28; docs/streaming.md, "The early start"): a segment of at least
  // early_start_min_frames starts without waiting for its F0/energy curves and decoder half. Its first
  // early_frames of audio come from the curves' first frames and the whole decoder in slices, normalised by
  // this early predictor's statistics (kokoro-stats-fit --early: predicted from the aligned text and shared
  // prosody features, known once the durations are); meanwhile-queued audio covers the exact path, which then
  // runs from the segment's start as without the early start and takes over after a crossfade of
  // early_crossfade_frames. So only the first early_frames_for(F) (0.3 s up to a 10 s segment) differ from
  // slice mode without it. Null: no early start (every segment waits for its decoder half).
  std::shared_ptr<const StatsPredictor> early_predictor;
  int early_start_min_frames = 120;  // 3 s: shorter segments' decoder half costs less than the early start saves
  int early_frames = 12;             // at least 12 frames (0.3 s) ...
  // ... and at least this share of the segment's frames (early_frames_for). The early audio must cover the exact
  // path's restart, which grows with the segment (its F0/energy curves and decoder half run over all of it:
  // ~0.27 s for a 20 s sentence on the yardstick machine, against 0.3 s of early audio), or the pre-roll holds
  // the first slice until it can; deterministic (the segment's length only), as the early start itself.
  double early_frames_share = 0.03;
  int64_t early_frames_for(int64_t segment_frames) const;
  // The early start's first slice (audio frames; at most first_chunk_frames): 2 frames took ~10 ms off a long
  // sentence's first audio against 4 (docs/benchmarks.md, "The early start"), 1 another ~4 ms against 2 (its
  // push of 15 aligned frames already completes 1015 samples, 42 ms of audio, while the next 1-frame push takes
  // ~10 ms). The next slices double (2, 4, ... frames), each computed while the audio before it plays; the
  // pre-roll holds playback where a slower machine could not follow.
  int early_first_frames = 1;
  int early_crossfade_frames = 1;
  // slice mode: an utterance's first sentence is a segment of its own (Frontend::segment's
  // first_sentence_alone), so that its first audio waits for that sentence's acoustic model and decoder half,
  // not for every sentence that fits in 510 phonemes with it. Sentences are never split; the ones after it are
  // grouped as the reference groups them. false: the reference's segments (kokoro-bench's baseline).
  bool first_sentence_alone = true;

  // The acoustic worker holds an utterance's later segments until the vocoder has computed the first
  // segment's audio (exact mode: the segment; slice mode: its last slice). On two cores the first-audio path
  // (and, in slice mode, the slices right after the first, which must outrun playback) then has the
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

// Where kokoro-stats-fit writes a model's learned statistics predictor: beside the model file,
// <dir>/<stem>.stats-predictor.kokoro (models/kokoro-v1_0.stats-predictor.kokoro).
std::string stats_predictor_path(const std::string& model_path);
// The predictor shipped with the engine for kokoro-v1_0 (data/kokoro-v1_0.stats-predictor.kokoro, installed
// to <data>/data/; core/assets.h): the installed copies, then the source tree's; existing or not.
std::vector<std::string> shipped_stats_predictor_paths();
// The slice settings docs/streaming.md recommends: the model's statistics predictor, else none (the engine
// then speaks slice mode as exact mode).
// Which predictor: KOKORO_SLICE_PREDICTOR=<file> (missing, corrupt or made for another model: an error;
// =none turns the predictor off), else the first of the file beside the model (a user's own fit) and the
// shipped one that was fitted for this model (StatsPredictor::mismatch); one that was not is skipped with a
// warning (logged once per file). Throws kokoro::Error for a corrupt file. `note` (optional) says which and why.
StreamOptions recommended_slice_options(const ModelFile& model, std::string* note = nullptr);
// Where a model's early predictor is looked for beside it: <dir>/<stem>.early-stats-predictor.kokoro.
std::string early_stats_predictor_path(const std::string& model_path);
// The early predictor shipped for kokoro-v1_0 (data/kokoro-v1_0.early-stats-predictor.kokoro): installed copies,
// then the source tree's; existing or not.
std::vector<std::string> shipped_early_stats_predictor_paths();

}  // namespace kokoro
