// What the engine reports about each utterance once it is spoken, interrupted or failed.
#pragma once
#include <cstddef>
#include <cstdint>
#include <vector>
#include <string>

#include "engine/stage_report.h"

namespace kokoro {

struct UtteranceReport {
  std::string text;
  size_t segments = 0;
  double first_audio_ms = 0;  // from say() to the first samples handed to the sink (TTFA before the device)
  double preroll_ms = 0;      // exact mode: how long audio ready to play waited for the pre-roll rule (part of the above)
  double audio_seconds = 0;   // speech produced
  double synth_seconds = 0;   // wall time spent synthesizing
  EngineStages stages;        // per stage: its time, and the part of it before the first audio
  struct SegmentSize {
    int64_t tokens = 0;  // token ids, the two boundary tokens included
    int64_t frames = 0;  // aligned frames (25 ms each)
  };
  std::vector<SegmentSize> segment_sizes;  // each segment the acoustic model ran on (for work counts: kokoro-bench)
  bool interrupted = false;
  std::string error;          // non-empty when the utterance failed
};

}  // namespace kokoro
