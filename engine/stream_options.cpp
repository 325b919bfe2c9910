// The option helpers of engine/stream_options.h: mode names, and the statistics each mode is recommended to
// use (a voice's calibrated priors for stream mode, the model's statistics predictor for slice mode).
#include "engine/stream_options.h"

#include <spdlog/spdlog.h>

#include <cstdlib>
#include <filesystem>
#include <mutex>
#include <set>

#include "core/assets.h"
#include "core/error.h"
#include "core/install_paths.h"

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
  std::string dir = build_tree().models;
  if (dir.empty()) {
    const std::vector<std::string> installed = installed_data_dirs();
    dir = installed.empty() ? configured_data_dir() : installed.front();
  }
  return dir + "/norm-priors-" + voice_name + ".kokoro";
}

std::string stats_predictor_path(const std::string& model_path) {
  std::filesystem::path p(model_path);
  return (p.parent_path() / (p.stem().string() + ".stats-predictor.kokoro")).string();
}

std::vector<std::string> shipped_stats_predictor_paths() {
  const std::string name = "kokoro-v1_0.stats-predictor.kokoro";
  std::vector<std::string> out;
  for (const std::string& d : installed_data_dirs()) out.push_back(d + "/data/" + name);
  if (const BuildTree& tree = build_tree(); tree.found()) out.push_back(tree.source + "/data/" + name);
  return out;
}

namespace {

// Each skipped file's warning once per process (the C API asks whenever a call changes voice, speed or mode).
void warn_once(const std::string& message) {
  static std::mutex mutex;
  static std::set<std::string> warned;
  std::lock_guard<std::mutex> lock(mutex);
  if (warned.insert(message).second) spdlog::warn("{}", message);
}

StreamOptions with_predictor(std::shared_ptr<const StatsPredictor> predictor) {
  StreamOptions o;
  o.slice.predictor = std::move(predictor);
  o.slice.predictor_subtract = 1.0;  // the predicted whole-segment statistics (docs/streaming.md: best LSD)
  return o;
}

}  // namespace

StreamOptions recommended_slice_options(const ModelFile& model, std::string* note) {
  const char* env = std::getenv("KOKORO_SLICE_PREDICTOR");
  const std::string chosen = env && *env ? env : "";
  if (chosen == "none") {
    if (note) *note = "slice statistics: pooled (KOKORO_SLICE_PREDICTOR=none)";
    return StreamOptions{};
  }
  if (!chosen.empty()) {  // named explicitly: anything wrong with it is an error, never a silent fallback
    auto p = std::make_shared<const StatsPredictor>(StatsPredictor::load(chosen, &model));
    if (note) *note = "slice statistics: predictor " + chosen + " (KOKORO_SLICE_PREDICTOR)";
    return with_predictor(std::move(p));
  }
  std::vector<std::string> candidates = {stats_predictor_path(model.path())};
  for (const std::string& s : shipped_stats_predictor_paths()) candidates.push_back(s);
  std::string skipped;
  for (const std::string& path : candidates) {
    if (!std::filesystem::exists(path)) continue;
    auto p = std::make_shared<StatsPredictor>(StatsPredictor::load(path));
    const std::string why = p->mismatch(model);
    if (!why.empty()) {
      warn_once("statistics predictor " + path + " not used: " + why);
      skipped += (skipped.empty() ? "" : "; ") + path + " is for another model";
      continue;
    }
    if (note) *note = "slice statistics: predictor " + path;
    return with_predictor(std::move(p));
  }
  if (note)
    *note = "slice statistics: pooled (" +
            (skipped.empty() ? "no statistics predictor at " + candidates.front() : skipped) +
            "; scripts/fit-stats-predictor makes one for this model, docs/streaming.md)";
  return StreamOptions{};
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
