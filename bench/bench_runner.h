// How kokoro-bench drives an engine: one Runner per synthesis mode, each turning a text utterance into audio
// and reporting when the first audio became available (TTFA), the compute time and the per-stage split.
//
//   exact   ExactRunner: frontend -> Synthesizer::synthesize per segment (engine/synthesizer.h), one after
//           the other; TTFA is frontend + first segment. Stage times from the trace (bench/stage_timer.h).
//   slice, stream, engine-exact
//           EngineRunner: engine/stream_engine.h in that mode onto a simulated real-time device
//           (bench/simulated_device.h); TTFA is the engine's first_audio_ms, stage times its report's
//           (engine/stage_report.h).
// Every runner reports whether the utterance would have run dry on a real-time device that starts at the
// first audio (ExactRunner: segments back to back, no overlap; EngineRunner: the device itself).
#pragma once
#include <memory>
#include <string>
#include <vector>

#include "bench/stage_timer.h"
#include "core/voice.h"
#include "engine/stage_report.h"
#include "engine/synthesizer.h"
#include "frontend/frontend.h"
#include "frontend/vocab.h"

namespace kokoro::bench {

struct SegmentMeasure {  // for the work model (bench/flop_model.h)
  int64_t tokens = 0;  // ids including the two boundary tokens
  int64_t frames = 0;  // asr frames (25 ms each)
};

struct UtteranceMeasure {
  double ttfa_ms = 0;      // from the text's arrival to the first audio sample being available
  double compute_ms = 0;   // total wall time: frontend and every segment
  double frontend_ms = 0;  // text -> phoneme segments -> ids
  EngineStages stages;     // per stage, before the first audio and in all (frontend_ms included)
  double audio_s = 0;
  int underruns = 0;       // times a real-time device would have run dry
  double dry_ms = 0;       // silence it would have played in total
  size_t segment_count = 0;
  std::vector<SegmentMeasure> segments;  // each segment's size
};

struct RunnerOptions {
  std::string voice = "af_heart";
  bool phoneme_input = false;  // utterances are phoneme strings (one segment each): the peers' inputs
  size_t first_words = 0;  // cut the first segment after N words (0: whole sentences, as kokoro-say)
  float speed = 1.0f;
  double max_slice_seconds = 0;  // slice mode: the longest slice (0: the engine's default, as kokoro-say)
  double first_slice_seconds = 0;  // slice mode: the first slice (0: the default, as kokoro-say)
  bool reference_segments = false;  // slice mode: the reference's segments (no first sentence alone): a baseline
  // The engine modes' pre-roll (engine/preroll.h). Off: TTFA is when the first audio is ready, not when a
  // machine too slow for its slices lets it play: what a file sink (kokoro-say -o, the cold figure) reports.
  bool preroll = true;
};

class Runner {
 public:
  virtual ~Runner() = default;
  virtual UtteranceMeasure run(const std::string& text) = 0;
};

// mode "exact", "engine-exact" or "slice"; throws kokoro::Error for an unknown or retired mode.
std::unique_ptr<Runner> make_runner(const std::string& mode, std::shared_ptr<const Synthesizer> synth,
                                    const std::string& assets_dir, const RunnerOptions& options);

}  // namespace kokoro::bench
