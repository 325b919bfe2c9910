// The option helpers of engine/stream_options.h: mode names, and where slice mode's statistics predictor comes from.
#include "engine/stream_options.h"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <future>
#include <mutex>
#include <set>

#include "core/assets.h"
#include "core/error.h"
#include "core/install_paths.h"
#include "engine/synthesizer.h"

namespace kokoro {

SynthesisMode parse_synthesis_mode(const std::string& name) {
  if (name == "exact") return SynthesisMode::exact;
  if (name == "slice") return SynthesisMode::slice;
  if (name == "stream")
    throw Error("synthesis mode \"stream\" was retired: slice mode (the default) is now the chunked vocoder that "
                "carries its state from slice to slice, normalised by the statistics predictor (docs/streaming.md); "
                "use --mode slice or --mode exact");
  throw Error("unknown synthesis mode \"" + name + "\" (exact, slice)");
}

const char* to_string(SynthesisMode mode) {
  switch (mode) {
    case SynthesisMode::exact: return "exact";
    case SynthesisMode::slice: return "slice";
  }
  return "?";
}

int slice_frames(double seconds) {
  if (!(seconds > 0) || seconds > 3600) throw Error("slice length must be in (0, 3600] seconds");
  return std::max(1, static_cast<int>(std::lround(seconds * kSampleRate / kSamplesPerFrame)));
}

std::string stats_predictor_path(const std::string& model_path) {
  std::filesystem::path p(model_path);
  return (p.parent_path() / (p.stem().string() + ".stats-predictor.kokoro")).string();
}

namespace {

std::vector<std::string> shipped_data_paths(const std::string& name) {
  std::vector<std::string> out;
  for (const std::string& d : installed_data_dirs()) out.push_back(d + "/data/" + name);
  if (const BuildTree& tree = build_tree(); tree.found()) out.push_back(tree.source + "/data/" + name);
  return out;
}

}  // namespace

std::vector<std::string> shipped_stats_predictor_paths() { return shipped_data_paths("kokoro-v1_0.stats-predictor.kokoro"); }

std::string early_stats_predictor_path(const std::string& model_path) {
  std::filesystem::path p(model_path);
  return (p.parent_path() / (p.stem().string() + ".early-stats-predictor.kokoro")).string();
}

std::vector<std::string> shipped_early_stats_predictor_paths() {
  return shipped_data_paths("kokoro-v1_0.early-stats-predictor.kokoro");
}

namespace {

// Each skipped file's warning once per process (the C API asks whenever a call changes voice, speed or mode).
void warn_once(const std::string& message) {
  static auto* mutex = new std::mutex;  // never destroyed: sessions' threads may call at exit
  static auto* warned = new std::set<std::string>;
  std::lock_guard<std::mutex> lock(*mutex);
  if (warned->insert(message).second) spdlog::warn("{}", message);
}

// An early predictor (statistics of the whole decoder from its inputs, kokoro-stats-fit --early) serves the
// early start only: over a whole segment its statistics cost 5-7 dB LSD (docs/streaming.md, "Predicting the
// decoder half's statistics"), so the slices after a segment's first 0.3 s take the predictor fitted on the
// decoder's output.
constexpr const char* kEarlyPredictorRefused =
    "an early predictor (features known before the F0 and energy curves) serves only the early start "
    "(KOKORO_EARLY_PREDICTOR); the slices take one fitted on the decoder's output (kokoro-stats-fit without --early, "
    "docs/streaming.md)";

// The early start's predictor: KOKORO_EARLY_PREDICTOR=<file> (anything wrong with it is an error) or =none,
// else the first of the file beside the model and the shipped one that serves the model. Null: none.
std::shared_ptr<const StatsPredictor> find_early_predictor(const ModelFile& model, std::string& note) {
  const char* env = std::getenv("KOKORO_EARLY_PREDICTOR");
  const std::string chosen = env && *env ? env : "";
  if (chosen == "none") {
    note = "; no early start (KOKORO_EARLY_PREDICTOR=none)";
    return nullptr;
  }
  auto why_not = [&](const StatsPredictor& p) {
    return p.early() ? p.mismatch(model) : std::string("not an early predictor (kokoro-stats-fit --early makes one)");
  };
  if (!chosen.empty()) {
    auto p = std::make_shared<const StatsPredictor>(StatsPredictor::load(chosen));
    if (const std::string why = why_not(*p); !why.empty()) throw Error("early predictor " + chosen + ": " + why);
    note = "; early start: predictor " + chosen + " (KOKORO_EARLY_PREDICTOR)";
    return p;
  }
  std::vector<std::string> candidates = {early_stats_predictor_path(model.path())};
  for (const std::string& s : shipped_early_stats_predictor_paths()) candidates.push_back(s);
  for (const std::string& path : candidates) {
    if (!std::filesystem::exists(path)) continue;
    // A file found (not named) that an earlier version fitted (another feature layout) is passed over, not
    // fatal: the programs still speak. A damaged one is an error, as for the slices' predictor.
    std::shared_ptr<const StatsPredictor> p;
    try {
      p = std::make_shared<const StatsPredictor>(StatsPredictor::load(path));
    } catch (const OutdatedPredictorError& e) {
      warn_once(std::string("early predictor not used: ") + e.what());
      continue;
    }
    if (const std::string why = why_not(*p); !why.empty()) {
      warn_once("early predictor " + path + " not used: " + why);
      continue;
    }
    note = "; early start: predictor " + path;
    return p;
  }
  note = "; no early start (no early predictor for this model at " + candidates.front() + ")";
  return nullptr;
}

StreamOptions with_predictor(std::shared_ptr<const StatsPredictor> predictor) {
  StreamOptions o;
  o.predictor = std::move(predictor);
  return o;
}

// The slices' predictor (recommended_slice_options without the early start).
StreamOptions slices_options(const ModelFile& model, std::string* note) {
  const char* env = std::getenv("KOKORO_SLICE_PREDICTOR");
  const std::string chosen = env && *env ? env : "";
  if (chosen == "none") {
    if (note) *note = "no statistics predictor (KOKORO_SLICE_PREDICTOR=none): slice mode speaks as exact mode";
    return StreamOptions{};
  }
  if (!chosen.empty()) {  // named explicitly: anything wrong with it is an error, never a silent fallback
    auto p = std::make_shared<const StatsPredictor>(StatsPredictor::load(chosen, &model));
    if (p->early()) throw Error("statistics predictor " + chosen + ": " + kEarlyPredictorRefused);
    if (note) *note = "slice statistics: predictor " + chosen + " (KOKORO_SLICE_PREDICTOR)";
    return with_predictor(std::move(p));
  }
  std::vector<std::string> candidates = {stats_predictor_path(model.path())};
  for (const std::string& s : shipped_stats_predictor_paths()) candidates.push_back(s);
  std::string skipped;
  for (const std::string& path : candidates) {
    if (!std::filesystem::exists(path)) continue;
    std::shared_ptr<StatsPredictor> p;
    try {
      p = std::make_shared<StatsPredictor>(StatsPredictor::load(path));
    } catch (const OutdatedPredictorError& e) {  // found, not named, fitted by an earlier version: passed over
      warn_once(std::string("statistics predictor not used: ") + e.what());
      skipped += (skipped.empty() ? "" : "; ") + path + " is of an earlier version";
      continue;
    }
    const std::string why = p->early() ? kEarlyPredictorRefused : p->mismatch(model);
    if (!why.empty()) {
      warn_once("statistics predictor " + path + " not used: " + why);
      skipped += (skipped.empty() ? "" : "; ") + path + (p->early() ? " is an early predictor" : " is for another model");
      continue;
    }
    if (note) *note = "slice statistics: predictor " + path;
    return with_predictor(std::move(p));
  }
  if (note)
    *note = "slice mode speaks as exact mode: " +
            (skipped.empty() ? "no statistics predictor at " + candidates.front() : skipped) +
            " (scripts/fit-stats-predictor makes one for this model, docs/streaming.md)";
  return StreamOptions{};
}

}  // namespace

StreamOptions recommended_slice_options(const ModelFile& model, std::string* note) {
  // The early start's predictor loads beside the slices' one: each costs ~8 ms in a new process, on the way
  // to its first audio (kokoro-say reads them right after the model opens).
  std::string early_note;
  auto early = std::async(std::launch::async, [&] { return find_early_predictor(model, early_note); });
  StreamOptions o = slices_options(model, note);
  if (o.predictor) {  // without the slices' predictor slice mode speaks as exact mode: no early start either
    o.early_predictor = early.get();
    if (note) *note += early_note;
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

int64_t StreamOptions::early_frames_for(int64_t segment_frames) const {
  const double share = std::ceil(early_frames_share * static_cast<double>(std::max<int64_t>(segment_frames, 0)));
  return std::max<int64_t>(early_frames, static_cast<int64_t>(share));
}

}  // namespace kokoro
