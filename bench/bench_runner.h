// How kokoro-bench drives an engine: one Runner per synthesis mode, each turning a text utterance into audio
// and reporting when the first audio became available (TTFA), the compute time and the per-stage split.
//
//   exact   ExactRunner: frontend -> Synthesizer::synthesize per segment (engine/synthesizer.h), one after
//           the other; TTFA is frontend + first segment. Per-stage times are split.
//   slice, stream, engine-exact
//           EngineRunner: engine/stream_engine.h in that mode onto a simulated real-time device
//           (bench/simulated_device.h); TTFA is the engine's first_audio_ms. Per-stage times are not split.
// Every runner reports whether the utterance would have run dry on a real-time device that starts at the
// first audio (ExactRunner: segments back to back, no overlap; EngineRunner: the device itself).
#pragma once
#include <memory>
#include <string>
#include <vector>

#include "bench/stage_timer.h"
#include "core/voice.h"
#include "engine/synthesizer.h"
#include "frontend/frontend.h"
#include "frontend/vocab.h"

namespace kokoro::bench {

struct SegmentMeasure {
  int64_t tokens = 0;  // ids including the two boundary tokens
  int64_t frames = 0;  // asr frames (25 ms each)
  StageTimes stages;
};

struct UtteranceMeasure {
  double ttfa_ms = 0;      // from the text's arrival to the first audio sample being available
  double compute_ms = 0;   // total wall time: frontend and every segment
  double frontend_ms = 0;  // text -> phoneme segments -> ids
  double audio_s = 0;
  int underruns = 0;       // times a real-time device would have run dry
  double dry_ms = 0;       // silence it would have played in total
  std::vector<SegmentMeasure> segments;
};

struct RunnerOptions {
  std::string voice = "af_heart";
  bool phoneme_input = false;  // utterances are phoneme strings (one segment each): the peers' inputs
  size_t first_words = 0;  // cut the first segment after N words (0: whole sentences, as kokoro-say)
  float speed = 1.0f;
  double max_slice_seconds = 0;  // slice mode: the longest slice (0: the engine's default, as kokoro-say)
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
