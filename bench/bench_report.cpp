#include "bench/bench_report.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "bench/flop_model.h"
#include "core/error.h"
#include "core/kernel_family.h"

namespace kokoro::bench {

namespace {

// The work model's FLOPs of the synthesis stages, on the engine's stages (engine/stage_report.h).
std::array<double, kEngineStages> engine_stage_flops(const std::array<double, kStageCount>& f) {
  std::array<double, kEngineStages> e{};
  e[static_cast<int>(EngineStage::acoustic)] = f[kAlbert] + f[kProsody] + f[kTextEncoder];
  e[static_cast<int>(EngineStage::decoder)] = f[kDecoder];
  e[static_cast<int>(EngineStage::source)] = f[kSource];
  e[static_cast<int>(EngineStage::generator)] = f[kGenerator] + f[kIstft];
  return e;
}

struct Totals {
  double compute_ms = 0, audio_s = 0, frontend_ms = 0;
  EngineStages stages;  // summed over utterances
  std::array<double, kEngineStages> flops{};
  std::vector<double> ttfa;
  size_t segments = 0;
  size_t dry_utterances = 0;  // utterances that would have run dry on a real-time device
  double dry_ms = 0, max_dry_ms = 0;
};

Totals totals(const std::vector<const CorpusResult*>& corpora, const ModelFile& model) {
  Totals t;
  for (const CorpusResult* c : corpora)
    for (const UtteranceMeasure& u : c->runs) {
      t.compute_ms += u.compute_ms;
      t.audio_s += u.audio_s;
      t.frontend_ms += u.frontend_ms;
      t.ttfa.push_back(u.ttfa_ms);
      if (u.underruns > 0) ++t.dry_utterances;
      t.dry_ms += u.dry_ms;
      t.max_dry_ms = std::max(t.max_dry_ms, u.dry_ms);
      for (int i = 0; i < kEngineStages; ++i) {
        t.stages.total_ms[i] += u.stages.total_ms[i];
        t.stages.before_first_audio_ms[i] += u.stages.before_first_audio_ms[i];
      }
      t.segments += u.segment_count;
      for (const SegmentMeasure& s : u.segments) {
        const auto f = engine_stage_flops(stage_flops(model, s.tokens, s.frames));
        for (int i = 0; i < kEngineStages; ++i) t.flops[i] += f[i];
      }
    }
  return t;
}

// Mean per utterance of the stages' parts before the first audio, and of the wait between them (TTFA minus
// their sum): the parts of the mean TTFA.
double mean_before(const Totals& t, int stage) { return t.ttfa.empty() ? 0.0 : t.stages.before_first_audio_ms[stage] / t.ttfa.size(); }
double mean_wait(const Totals& t) {
  if (t.ttfa.empty()) return 0;
  double ttfa = 0;
  for (double v : t.ttfa) ttfa += v;
  return std::max(0.0, (ttfa - t.stages.sum_before_first_audio_ms()) / t.ttfa.size());
}

std::vector<const CorpusResult*> all(const BenchResult& r) {
  std::vector<const CorpusResult*> v;
  for (const auto& c : r.corpora) v.push_back(&c);
  return v;
}

nlohmann::json summary(const Totals& t) {
  nlohmann::json j;
  j["utterances"] = t.ttfa.size();
  j["segments"] = t.segments;
  j["audio_s"] = t.audio_s;
  j["compute_s"] = t.compute_ms / 1e3;
  j["rtf"] = t.audio_s > 0 ? t.compute_ms / 1e3 / t.audio_s : 0.0;
  j["ttfa_ms_p50"] = percentile(t.ttfa, 50);
  j["ttfa_ms_p95"] = percentile(t.ttfa, 95);
  j["ttfa_ms_max"] = percentile(t.ttfa, 100);
  j["dry_utterances"] = t.dry_utterances;  // would have run dry on a real-time device
  j["dry_ms_total"] = t.dry_ms;
  j["dry_ms_max_per_utterance"] = t.max_dry_ms;
  return j;
}

// The median of each cold process's first audio minus the warm engine's TTFA on its sentence just before it.
double paired_difference_p50(const ColdStartResult& c) {
  std::vector<double> d;
  for (size_t i = 0; i < c.paired_warm_ms.size() && i < c.first_audio_ms.size(); ++i)
    d.push_back(c.first_audio_ms[i] - c.paired_warm_ms[i]);
  return percentile(d, 50);
}

}  // namespace

double percentile(std::vector<double> v, double p) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  const double pos = p / 100.0 * (v.size() - 1);
  const size_t lo = static_cast<size_t>(std::floor(pos)), hi = std::min(v.size() - 1, lo + 1);
  return v[lo] + (v[hi] - v[lo]) * (pos - lo);
}

void add_run_context(nlohmann::json& j, double wall_s, double cpu_s, double loadavg_before, double loadavg_after,
                     const GemmPeak& peak) {
  j["wall_s"] = wall_s;
  j["cpu_s"] = cpu_s;
  j["loadavg_before"] = loadavg_before;
  j["loadavg_after"] = loadavg_after;
  j["gemm_peak_gflops_1"] = peak.gflops_1;
  j["gemm_peak_gflops_n"] = peak.gflops_n;
  j["gemm_peak_contended"] = peak.contended;
  j["gemm_peak_threads"] = peak.threads;
}

nlohmann::json to_json(const BenchResult& r, const ModelFile& model) {
  const Totals t = totals(all(r), model);
  nlohmann::json j = summary(t);
  j["mode"] = r.mode;
  j["threads"] = r.threads;
  j["precision"] = r.precision;
  j["onednn_isa"] = r.onednn_isa;
  j["kernel_family"] = kernel_family();
  j["load_ms"] = r.load_ms;
  j["frontend_load_ms"] = r.frontend_load_ms;
  j["peak_rss_mb"] = r.peak_rss_mb;
  j["cpu_s"] = r.cpu_s;
  j["rtf_cpu"] = t.audio_s > 0 ? r.cpu_s / t.audio_s : 0.0;
  j["loadavg_1m"] = {r.loadavg_before, r.loadavg_after};
  j["rss_after_load_mb"] = r.rss_after_load_mb;
  j["rss_after_frontend_mb"] = r.rss_after_frontend_mb;
  j["gemm_peak_gflops"] = {{"1", r.peak.gflops_1}, {std::to_string(r.peak.threads), r.peak.gflops_n}};
  j["gemm_peak_contended"] = r.peak.contended;
  j["text_side_ms_20_tokens"] = r.text_side_ms_20;
  for (int i : {kAlbert, kProsody, kTextEncoder}) j["text_side_20_tokens_stages_ms"][stage_name(i)] = r.text_side_stages_20.ms[i];
  j["text_side_ms_20_tokens_eigen_baseline"] = r.text_side_baseline_ms_20;
  j["albert_ms_20_tokens_eigen_baseline"] = r.text_side_baseline_albert_ms_20;
  j["frontend_ms"] = t.frontend_ms;
  nlohmann::json stages = nlohmann::json::array();
  for (int i = 0; i < kEngineStages; ++i) {
    const double ms = t.stages.total_ms[i];
    const double gflops = ms > 0 ? t.flops[i] / (ms * 1e6) : 0.0;
    stages.push_back({{"name", engine_stage_name(static_cast<EngineStage>(i))},
                      {"ms", ms},
                      {"ms_per_audio_s", t.audio_s > 0 ? ms / t.audio_s : 0.0},
                      {"before_first_audio_ms_mean", mean_before(t, i)},
                      {"gflop", t.flops[i] / 1e9},
                      {"gflops", gflops},
                      {"of_peak", r.peak.gflops_n > 0 ? gflops / r.peak.gflops_n : 0.0}});
  }
  j["stages"] = stages;
  j["before_first_audio_wait_ms_mean"] = mean_wait(t);  // TTFA not spent in any stage (queues, compute turns)
  for (const auto& c : r.corpora) j["corpora"][c.name] = summary(totals({&c}, model));
  if (!r.cold.first_audio_ms.empty()) {
    const CorpusResult* warm = nullptr;
    for (const auto& c : r.corpora)
      if (c.name == r.cold_corpus) warm = &c;
    nlohmann::json cold = {{"corpus", r.cold_corpus},
                           {"runs", r.cold.first_audio_ms.size()},
                           {"first_audio_ms_p50", percentile(r.cold.first_audio_ms, 50)},
                           {"first_audio_ms_p95", percentile(r.cold.first_audio_ms, 95)},
                           {"first_audio_from_say_ms_p50", percentile(r.cold.from_say_ms, 50)},
                           {"exit_ms_p50", percentile(r.cold.exit_ms, 50)},
                           {"exit_ms_p95", percentile(r.cold.exit_ms, 95)}};
    if (warm) {
      const double warm_p50 = percentile(totals({warm}, model).ttfa, 50);
      cold["warm_ttfa_ms_p50"] = warm_p50;
      cold["cold_minus_warm_ms_p50"] = percentile(r.cold.first_audio_ms, 50) - warm_p50;
    }
    if (!r.cold.paired_warm_ms.empty()) {
      cold["paired_warm_ttfa_ms_p50"] = percentile(r.cold.paired_warm_ms, 50);
      cold["paired_cold_minus_warm_ms_p50"] = paired_difference_p50(r.cold);
    }
    j["cold"] = cold;
  }
  return j;
}

std::string to_table(const BenchResult& r, const ModelFile& model) {
  std::ostringstream o;
  char line[256];
  const Totals t = totals(all(r), model);
  std::snprintf(line, sizeof line,
                "kokoro-bench  mode %s  threads %d  precision %s  kernels %s  load %.0f ms (frontend %.0f ms)  peak RSS %.0f MB (model %.0f, "
                "+frontend %.0f)\n",
                r.mode.c_str(), r.threads, r.precision.c_str(), kernel_family(), r.load_ms, r.frontend_load_ms, r.peak_rss_mb, r.rss_after_load_mb,
                r.rss_after_frontend_mb);
  o << line;
  o << "oneDNN products: " << r.onednn_isa << "\n";
  if (r.peak.gflops_n > 0)
    std::snprintf(line, sizeof line, "GEMM peak (Eigen 1024^3): %.0f GFLOP/s on 1 thread, %.0f on %d\n", r.peak.gflops_1,
                  r.peak.gflops_n, r.peak.threads);
  else
    std::snprintf(line, sizeof line, "GEMM peak: not measured (--no-peak)\n");
  o << line << contended_warning(r.peak);
  std::snprintf(line, sizeof line,
                "CPU time %.2f s for %.2f s of audio (CPU RTF %.3f, all threads); load average %.2f before, %.2f after\n\n",
                r.cpu_s, t.audio_s, t.audio_s > 0 ? r.cpu_s / t.audio_s : 0.0, r.loadavg_before, r.loadavg_after);
  o << line;
  o << "corpus     utts  segs   audio s   compute s     RTF   TTFA p50   p95      max (ms)   ran dry  dry ms (max)\n";
  auto row = [&](const std::string& name, const Totals& c) {
    std::snprintf(line, sizeof line, "%-9s %5zu %5zu %9.2f %11.3f %7.3f %9.1f %6.1f %8.1f %9zu %7.0f (%.0f)\n", name.c_str(),
                  c.ttfa.size(), c.segments, c.audio_s, c.compute_ms / 1e3,
                  c.audio_s > 0 ? c.compute_ms / 1e3 / c.audio_s : 0.0, percentile(c.ttfa, 50), percentile(c.ttfa, 95),
                  percentile(c.ttfa, 100), c.dry_utterances, c.dry_ms, c.max_dry_ms);
    o << line;
  };
  for (const auto& c : r.corpora) row(c.name, totals({&c}, model));
  row("all", t);
  if (!r.cold.first_audio_ms.empty()) {
    double warm_p50 = 0;
    for (const auto& c : r.corpora)
      if (c.name == r.cold_corpus) warm_p50 = percentile(totals({&c}, model).ttfa, 50);
    const double cold_p50 = percentile(r.cold.first_audio_ms, 50);
    std::snprintf(line, sizeof line,
                  "cold      %5zu  new kokoro-say processes on %s: first audio p50 %.0f, p95 %.0f ms from their start "
                  "(warm TTFA p50 %.0f ms: %+.0f ms); exit p50 %.0f ms\n",
                  r.cold.first_audio_ms.size(), r.cold_corpus.c_str(), cold_p50, percentile(r.cold.first_audio_ms, 95),
                  warm_p50, cold_p50 - warm_p50, percentile(r.cold.exit_ms, 50));
    o << line;
    if (!r.cold.paired_warm_ms.empty()) {
      std::snprintf(line, sizeof line,
                    "          paired: the warm engine on each process's sentence just before it: TTFA p50 %.0f ms, "
                    "cold minus warm p50 %+.0f ms\n",
                    percentile(r.cold.paired_warm_ms, 50), paired_difference_p50(r.cold));
      o << line;
    }
  }
  // Per stage: the mean part of an utterance's first audio, and all of its time over the run.
  o << "\nstage        before first audio   ms total   ms per audio s   share   GFLOP   GFLOP/s   of peak\n"
       "             (ms, mean per utt.)\n";
  const double total_ms = t.stages.sum_total_ms();
  auto stage_row = [&](const char* name, double before, double ms, double flops) {
    const double gflops = ms > 0 ? flops / (ms * 1e6) : 0;
    const double share = total_ms > 0 ? 100 * ms / total_ms : 0.0, per_s = t.audio_s > 0 ? ms / t.audio_s : 0.0;
    int n = std::snprintf(line, sizeof line, "%-12s %18.1f %10.1f %16.2f %6.1f%%", name, before, ms, per_s, share);
    if (flops > 0 && r.peak.gflops_n > 0)
      std::snprintf(line + n, sizeof line - n, " %7.2f %9.1f %8.0f%%", flops / 1e9, gflops, 100 * gflops / r.peak.gflops_n);
    else if (flops > 0)
      std::snprintf(line + n, sizeof line - n, " %7.2f %9.1f        -", flops / 1e9, gflops);
    o << line << "\n";
  };
  for (int i = 0; i < kEngineStages; ++i)
    stage_row(engine_stage_name(static_cast<EngineStage>(i)), mean_before(t, i), t.stages.total_ms[i], t.flops[i]);
  std::snprintf(line, sizeof line, "%-12s %18.1f   (queues and compute turns between the stages)\n", "waiting", mean_wait(t));
  o << line;
  double ttfa_mean = 0;
  for (double v : t.ttfa) ttfa_mean += v / t.ttfa.size();
  std::snprintf(line, sizeof line, "%-12s %18.1f   (mean time to first audio)\n", "= TTFA", ttfa_mean);
  o << line;
  std::snprintf(line, sizeof line,
                "\ntext side for 20 phoneme tokens (ALBERT + prosody + text encoder, median): %.1f ms "
                "(%.1f + %.1f + %.1f)\n",
                r.text_side_ms_20, r.text_side_stages_20.ms[kAlbert], r.text_side_stages_20.ms[kProsody],
                r.text_side_stages_20.ms[kTextEncoder]);
  o << line;
  std::snprintf(line, sizeof line,
                "  same run with Eigen's linear_rows (the baseline): %.1f ms (ALBERT %.1f): current is %.2fx faster\n",
                r.text_side_baseline_ms_20, r.text_side_baseline_albert_ms_20,
                r.text_side_ms_20 > 0 ? r.text_side_baseline_ms_20 / r.text_side_ms_20 : 0.0);
  o << line;
  o << "GFLOP/s counts direct-convolution work: a fast-convolution kernel does fewer operations, so its rate can\n"
       "exceed the GEMM peak.\n";
  return o.str();
}

void write_plots(const BenchResult& r, const std::string& dir) {
  namespace fs = std::filesystem;
  fs::create_directories(dir);
  const fs::path d(dir);
  // TTFA CDF: one data block per corpus.
  {
    std::ofstream f(d / "ttfa.dat");
    for (const auto& c : r.corpora) {
      std::vector<double> v;
      for (const auto& u : c.runs) v.push_back(u.ttfa_ms);
      std::sort(v.begin(), v.end());
      f << "# " << c.name << "\n";
      for (size_t i = 0; i < v.size(); ++i) f << v[i] << " " << (i + 1.0) / v.size() << "\n";
      f << "\n\n";
    }
  }
  // Per stage, all corpora together: the mean part of an utterance's first audio, and its time per second of
  // audio (the engine's stages in every mode, engine/stage_report.h).
  double max_before = 0, max_per_s = 0;
  {
    Totals t;
    for (const auto& c : r.corpora)
      for (const auto& u : c.runs) {
        t.audio_s += u.audio_s;
        t.ttfa.push_back(u.ttfa_ms);
        for (int i = 0; i < kEngineStages; ++i) {
          t.stages.total_ms[i] += u.stages.total_ms[i];
          t.stages.before_first_audio_ms[i] += u.stages.before_first_audio_ms[i];
        }
      }
    std::ofstream f(d / "stages.dat");
    for (int i = 0; i < kEngineStages; ++i) {
      const double before = mean_before(t, i), per_s = t.audio_s > 0 ? t.stages.total_ms[i] / t.audio_s : 0;
      f << engine_stage_name(static_cast<EngineStage>(i)) << " " << before << " " << per_s << "\n";
      max_before = std::max(max_before, before);
      max_per_s = std::max(max_per_s, per_s);
    }
    f << "waiting " << mean_wait(t) << " 0\n";
    max_before = std::max(max_before, mean_wait(t));
  }
  std::ofstream g(d / "plots.gp");
  g << "set terminal pngcairo noenhanced size 900,540 font 'sans,11'\n"
    << "set output '" << (d / "ttfa_cdf.png").string() << "'\n"
    << "set title 'Time to first audio, mode " << r.mode << ", " << r.threads << " thread(s)'\n"
    << "set xlabel 'TTFA (ms)'; set ylabel 'fraction of utterances'; set key bottom right; set grid\n"
    << "set yrange [0:1.02]\n"
    << "plot ";
  for (size_t i = 0; i < r.corpora.size(); ++i)
    g << (i ? ", " : "") << "'" << (d / "ttfa.dat").string() << "' index " << i
      << " using 1:2 with steps lw 2 title '" << r.corpora[i].name << "'";
  // Two panels: what the first audio waits for, and where the compute goes. A range of at least 1 keeps
  // gnuplot from refusing an all-zero panel ("empty y range").
  const std::string dat = (d / "stages.dat").string();
  g << "\nset terminal pngcairo noenhanced size 1200,540 font 'sans,11'\n"
    << "set output '" << (d / "stages.png").string() << "'\n"
    << "set multiplot layout 1,2 title 'By stage, mode " << r.mode << ", " << r.threads << " thread(s)'\n"
    << "set xlabel ''; unset key; set style fill solid 0.8; set boxwidth 0.7; set xtics rotate by -30; set grid ytics\n"
    << "set title 'Before the first audio (ms, mean per utterance)'; set ylabel 'ms'\n"
    << "set yrange [0:" << std::max(1.0, 1.1 * max_before) << "]\n"
    << "plot '" << dat << "' using 0:2:xtic(1) with boxes lc rgb '#d5773a'\n"
    << "set title 'All the work (ms per second of audio)'; set ylabel 'ms per audio second'\n"
    << "set yrange [0:" << std::max(1.0, 1.1 * max_per_s) << "]\n"
    << "plot '" << dat << "' every ::0::" << kEngineStages - 1 << " using 0:3:xtic(1) with boxes lc rgb '#3a7bd5'\n"
    << "unset multiplot\n";
  g.close();
  const std::string cmd = "gnuplot '" + (d / "plots.gp").string() + "'";
  if (std::system(cmd.c_str()) != 0)
    throw Error("kokoro-bench --plot: gnuplot failed on " + (d / "plots.gp").string() +
                " (install it with scripts/install-deps.sh)");
}

}  // namespace kokoro::bench
