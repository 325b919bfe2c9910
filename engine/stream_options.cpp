// The option helpers of engine/stream_options.h: mode names, and the statistics each mode is recommended to
// use (a voice's calibrated priors for stream mode, the model's statistics predictor for slice mode).
#include "engine/stream_options.h"

#include <cstdlib>
#include <filesystem>

#include "core/error.h"

namespace kokoro {

SynthesisMode parse_synthesis_mode(const std::string& name) {
  if (name == "exact") return SynthesisMode::exact;
  if (name == "slice") return SynthesisMode::slice;
  if (name == "stream") return SynthesisMode::stream;
  throw Error("unknown synthesis mode \"" + name + "\" (exact, slice, stream)");
}

const char* to_string(SynthesisMode mode) {
  switch (mode) {
    case SynthesisMode::exact: return "exact";
    case SynthesisMode::slice: return "slice";
    case SynthesisMode::stream: return "stream";
  }
  return "?";
}

std::string norm_priors_path(const std::string& voice_name) {
  return std::string(KOKORO_DEFAULT_MODEL_DIR) + "/norm-priors-" + voice_name + ".kokoro";
}

std::string stats_predictor_path(const std::string& model_path) {
  std::filesystem::path p(model_path);
  return (p.parent_path() / (p.stem().string() + ".stats-predictor.kokoro")).string();
}

StreamOptions recommended_slice_options(const ModelFile& model, std::string* note) {
  StreamOptions o;
  const char* env = std::getenv("KOKORO_SLICE_PREDICTOR");
  const std::string chosen = env && *env ? env : "";
  if (chosen == "none") {
    if (note) *note = "slice statistics: pooled (KOKORO_SLICE_PREDICTOR=none)";
    return o;
  }
  const std::string path = chosen.empty() ? stats_predictor_path(model.path()) : chosen;
  if (chosen.empty() && !std::filesystem::exists(path)) {
    if (note)
      *note = "slice statistics: pooled (no statistics predictor at " + path +
              "; scripts/fit-stats-predictor makes it, docs/streaming.md)";
    return o;
  }
  o.slice.predictor = std::make_shared<const StatsPredictor>(StatsPredictor::load(path, &model));
  o.slice.predictor_subtract = 1.0;  // the predicted whole-segment statistics (docs/streaming.md: best LSD)
  if (note) *note = "slice statistics: predictor " + path;
  return o;
}

StreamOptions recommended_stream_options(const std::string& voice_name, std::string* note) {
  StreamOptions o;
  const std::string path = norm_priors_path(voice_name);
  if (std::filesystem::exists(path)) {
    o.priors = std::make_shared<const NormPriors>(NormPriors::load(path));
    o.policy = "prior";
    if (note) *note = "stream statistics: priors " + path;
  } else {
    o.policy = "cumulative";
    if (note)
      *note = "stream statistics: cumulative (no priors for voice " + voice_name +
              "; kokoro-stream-eval --voice " + voice_name + " calibrates them)";
  }
  return o;
}

const char* to_string(StreamEvent::Kind kind) {
  switch (kind) {
    case StreamEvent::Kind::utterance_start: return "utterance_start";
    case StreamEvent::Kind::segment_start: return "segment_start";
    case StreamEvent::Kind::word: return "word";
    case StreamEvent::Kind::segment_end: return "segment_end";
    case StreamEvent::Kind::utterance_end: return "utterance_end";
    case StreamEvent::Kind::mark: return "mark";
  }
  return "?";
}

}  // namespace kokoro
