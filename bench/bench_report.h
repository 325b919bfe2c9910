// kokoro-bench's results: aggregation over utterances, the people's table, the machines' JSON, and gnuplot
// PNGs (latency CDF, per-stage bars).
#pragma once
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "bench/bench_runner.h"
#include "bench/cold_start.h"
#include "bench/gemm_peak.h"
#include "core/model_file.h"

namespace kokoro::bench {

struct CorpusResult {
  std::string name;
  std::vector<UtteranceMeasure> runs;  // every utterance of every repetition
};

struct BenchResult {
  std::string mode;
  int threads = 1;
  std::string precision = "fp32";  // core/precision.h
  double load_ms = 0;           // model file open + engine construction
  double frontend_load_ms = 0;  // lexicons, espeak-ng
  double peak_rss_mb = 0;
  double cpu_s = 0;            // user + system CPU time of the timed corpus runs (all threads)
  double loadavg_before = 0, loadavg_after = 0;  // 1-minute load average around the timed runs
  double rss_after_load_mb = 0;      // model mapped and checked, engine built
  double rss_after_frontend_mb = 0;  // + the runner (frontend lexicons, espeak-ng, voice)
  GemmPeak peak;
  double text_side_ms_20 = 0;   // ALBERT + prosody + text encoder for 20 phoneme tokens (median)
  StageTimes text_side_stages_20;
  std::string onednn_isa;                     // what oneDNN's fp32 products run on
  double text_side_baseline_ms_20 = 0;         // the same with the Eigen linear_rows baseline, same run
  double text_side_baseline_albert_ms_20 = 0;  // ... of which ALBERT
  std::vector<CorpusResult> corpora;
  ColdStartResult cold;        // empty: not measured (--cold-runs 0)
  std::string cold_corpus;     // the corpus its sentences came from
};

double percentile(std::vector<double> v, double p);  // p in [0, 100], linear interpolation

// What the machine did around a run, as --streams and --feed-wps write it: wall_s, cpu_s, loadavg_before/after,
// gemm_peak_gflops_1/_n, gemm_peak_threads.
void add_run_context(nlohmann::json& j, double wall_s, double cpu_s, double loadavg_before, double loadavg_after,
                     const GemmPeak& peak);

nlohmann::json to_json(const BenchResult& r, const ModelFile& model);
std::string to_table(const BenchResult& r, const ModelFile& model);
// Writes ttfa_cdf.png and stages.png into dir (created if needed) with gnuplot; throws when gnuplot fails.
void write_plots(const BenchResult& r, const std::string& dir);

}  // namespace kokoro::bench
