// kokoro-bench --streams N: N sessions on one model (engine/model.h), started together, each speaking the
// corpora back to back onto its own simulated real-time device (bench/simulated_device.h), all sharing the
// model's compute scheduler. Each listener hears its utterances one after the other: the next is said once the
// device has played the previous one, so N streams keep N real-time devices busy, as N listeners of a server
// would. What it reports: each utterance's time to first audio, and whether any listener's audio ran dry.
#pragma once
#include <nlohmann/json.hpp>

#include <string>
#include <vector>

#include "bench/bench_runner.h"
#include "bench/gemm_peak.h"
#include "engine/model.h"

namespace kokoro::bench {

struct StreamRun {
  std::vector<UtteranceMeasure> utterances;
  double wall_s = 0;  // from the common start to this stream's last utterance's report
};

struct MultiStreamResult {
  std::string mode;
  int streams = 0, threads = 0, slots = 0;
  bool paced = true;
  std::vector<StreamRun> runs;
  double wall_s = 0, cpu_s = 0, peak_rss_mb = 0, load_ms = 0, loadavg_before = 0, loadavg_after = 0;
  GemmPeak peak;
};

struct MultiStreamOptions {
  int streams = 1;
  SynthesisMode mode = SynthesisMode::slice;
  std::string voice = "af_heart";
  float speed = 1.0f;
  double max_slice_seconds = 0;  // slice mode: the longest slice (0: the default)
  double first_slice_seconds = 0;  // slice mode: the first slice (0: the default, as kokoro-say)
  int repeat = 1;
  // true: the next utterance is said once the device has played the last (listeners); false: as soon as the
  // last is reported, as the single-runner benchmark does (to compare one stream with it side by side).
  bool paced = true;
};

// Runs `texts` (each stream all of them, in order, `repeat` times) on `streams` sessions at once.
MultiStreamResult run_streams(const Model& model, const std::vector<std::string>& texts, const MultiStreamOptions& o);

nlohmann::json to_json(const MultiStreamResult& r);
std::string to_table(const MultiStreamResult& r);

}  // namespace kokoro::bench
