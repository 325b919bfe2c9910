#include "engine/stage_report.h"

#include <numeric>

#include "engine/vocode_stage_split.h"

namespace kokoro {

const char* engine_stage_name(EngineStage stage) {
  static const char* const names[kEngineStages] = {"frontend", "acoustic", "decoder", "source", "generator", "output"};
  const int i = static_cast<int>(stage);
  return i >= 0 && i < kEngineStages ? names[i] : "?";
}

double EngineStages::sum_total_ms() const { return std::accumulate(total_ms.begin(), total_ms.end(), 0.0); }

double EngineStages::sum_before_first_audio_ms() const {
  return std::accumulate(before_first_audio_ms.begin(), before_first_audio_ms.end(), 0.0);
}

void EngineStages::add(EngineStage s, double ms, bool before_first_audio) {
  total_ms[static_cast<int>(s)] += ms;
  if (before_first_audio) before_first_audio_ms[static_cast<int>(s)] += ms;
}

VocodeStageSplit::VocodeStageSplit(Record record) : record_(std::move(record)) {
  trace_ = [this](const std::string& name, const Tensor&) {
    EngineStage stage;
    if (name == "dec_decode_3")
      stage = EngineStage::decoder;
    else if (name == "gen_har")
      stage = EngineStage::source;
    else if (name == "audio")
      stage = EngineStage::generator;
    else
      return;
    const Clock::time_point now = Clock::now();
    record_(stage, last_, now);
    last_ = now;
  };
}

const Trace* VocodeStageSplit::start() {
  last_ = Clock::now();
  return &trace_;
}

}  // namespace kokoro
