// kokoro-bench: end-to-end speed of the engine on fixed corpora (bench/corpus/): RTF (compute time / audio
// time, lower is faster), time to first audio, per-stage time and achieved GFLOP/s against the measured
// GEMM peak, text-side time for 20 tokens, model load time and peak RSS.
//
//   build/bin/kokoro-bench                          all corpora, slice mode (the programs' default), table
//   build/bin/kokoro-bench --streams 4              4 sessions on one model at once, each onto its own
//                                                   simulated real-time device (bench/multi_stream.h)
//   build/bin/kokoro-bench --corpus short,medium --repeat 5 --threads 2
//   build/bin/kokoro-bench --json > bench.json      machine-readable (keys: rtf, ttfa_ms_p50, ttfa_ms_p95,
//                                                   peak_rss_mb, load_ms, mode, threads, stages, corpora...)
//   build/bin/kokoro-bench --plot docs/bench        ttfa_cdf.png and stages.png (gnuplot)
//   build/bin/kokoro-bench --phoneme-file P.txt     one phoneme string per line, no frontend (bench/peers/)
//   build/bin/kokoro-bench --feed-wps 4             text streaming in: each corpus fed word by word at 4 words/s,
//                                                   the delay from each sentence's end to its audio (bench/text_feed.h)
//   build/bin/kokoro-bench --cold-runs 0            skip the cold figure (new kokoro-say processes, bench/cold_start.h)
//
// Each corpus file is read as one utterance per non-empty line, except passage.txt, which is one utterance
// (a ~2-minute text the frontend splits into segments). One untimed warm-up utterance runs first.
#include <CLI/CLI.hpp>
#include <spdlog/spdlog.h>
#include <sys/resource.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <optional>
#include <sstream>

#include "bench/process_stats.h"
#include "bench/bench_report.h"
#include "bench/bench_runner.h"
#include "bench/cold_start.h"
#include "bench/gemm_peak.h"
#include "bench/multi_stream.h"
#include "bench/text_feed.h"
#include "core/assets.h"
#include "core/error.h"
#include "core/kernels.h"
#include "core/onednn_matmul.h"
#include "core/parallel.h"
#include "core/kernel_family.h"
#include "core/precision.h"
#include "apps/common/malloc_tuning.h"

using namespace kokoro;
using namespace kokoro::bench;

namespace {

double ms_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
}

// One item per non-empty line (lines starting with '#' are comments), or the whole file as one item.
std::vector<std::string> read_items(const std::string& path, bool whole) {
  std::ifstream f(path);
  if (!f) throw Error("kokoro-bench: cannot read corpus " + path);
  std::vector<std::string> items;
  if (whole) {
    std::stringstream ss;
    ss << f.rdbuf();
    items.push_back(ss.str());
  } else {
    for (std::string line; std::getline(f, line);)
      if (line.find_first_not_of(" \t\r") != std::string::npos && line[0] != '#') items.push_back(line);
  }
  if (items.empty()) throw Error("kokoro-bench: corpus " + path + " is empty");
  return items;
}

std::vector<std::string> read_corpus(const std::string& dir, const std::string& name) {
  return read_items(dir + "/" + name + ".txt", name == "passage");
}

// The corpora named in a comma-separated list, each with its items; throws when none is named.
std::vector<std::pair<std::string, std::vector<std::string>>> read_corpora(const std::string& dir, const std::string& names) {
  std::vector<std::pair<std::string, std::vector<std::string>>> out;
  for (std::stringstream ss(names); ss.good();) {
    std::string name;
    std::getline(ss, name, ',');
    if (!name.empty()) out.emplace_back(name, read_corpus(dir, name));
  }
  if (out.empty()) throw Error("kokoro-bench: no corpus selected");
  return out;
}

// The JSON on stdout (--json) or the table, and the JSON into json_file when one is named.
void print_result(const nlohmann::json& j, const std::string& table, bool json, const std::string& json_file) {
  if (!json_file.empty()) std::ofstream(json_file) << j.dump(2) << "\n";
  if (json)
    std::cout << j.dump(2) << "\n";
  else
    std::cout << table;
}

// ALBERT + prosody + text encoder on the first 20 phoneme tokens of a fixed sentence (median of `runs`).
void measure_text_side(const Synthesizer& synth, const std::string& assets, BenchResult& r, int runs) {
  FrontendOptions fo;
  fo.assets_dir = assets;
  const Frontend fe(fo);
  const Vocab vocab = Vocab::from_config(synth.model().config(), synth.model().path());
  const auto segs = fe.segment("The weather service expects light rain this afternoon, so bring a jacket.");
  std::vector<int64_t> ids = tokenize(segs.at(0).phonemes, vocab);
  if (ids.size() < 20) throw Error("kokoro-bench: text-side sentence has fewer than 20 tokens");
  ids.resize(20);
  ids.insert(ids.begin(), 0);
  ids.push_back(0);
  const VoicePack voice = VoicePack::resolve("af_heart", assets);
  std::vector<double> totals, baseline_totals, baseline_albert;
  std::vector<StageTimes> stages;
  StageTimer timer;
  AlignedFeatures feats;
  // Current kernels and the Eigen linear_rows baseline alternate, so that a busy machine slows both alike.
  for (int i = 0; i < runs + 1; ++i)
    for (const bool baseline : {false, true}) {
      std::optional<ScopedLinearRowsBaseline> eigen;
      if (baseline) eigen.emplace();
      timer.start();
      synth.acoustic().forward(ids, voice.style_for(20), 1.0f, feats, &timer.trace());
      timer.stop();
      if (i == 0) continue;  // warm-up
      StageTimes t = timer.times();
      t.ms[kOther] = 0;  // the tail after t_en is the asr repeat, not text-side work
      const double total = t.ms[kAlbert] + t.ms[kProsody] + t.ms[kTextEncoder];
      if (baseline) {
        baseline_totals.push_back(total);
        baseline_albert.push_back(t.ms[kAlbert]);
        continue;
      }
      totals.push_back(total);
      stages.push_back(t);
    }
  r.text_side_ms_20 = percentile(totals, 50);
  r.text_side_baseline_ms_20 = percentile(baseline_totals, 50);
  r.text_side_baseline_albert_ms_20 = percentile(baseline_albert, 50);
  // the stages of the median run
  size_t best = 0;
  for (size_t i = 0; i < totals.size(); ++i)
    if (std::abs(totals[i] - r.text_side_ms_20) < std::abs(totals[best] - r.text_side_ms_20)) best = i;
  r.text_side_stages_20 = stages[best];
}

// --quality: bench/quality/run.sh (Python, PyPI once; docs in bench/quality/README.md) on the same mode and
// precision with the kokoro-say beside this binary; its summaries (WER, DNSMOS, LSD/MCD, duration, level,
// leak for the system, the whole-sentence exact reference and the seed-to-seed floor) go into the JSON.
nlohmann::json run_quality(const std::string& mode, const std::string& precision, const std::string& voice) {
  const std::filesystem::path bin_dir = std::filesystem::read_symlink("/proc/self/exe").parent_path();
  const std::string say_mode = mode == "engine-exact" ? "exact" : mode;
  const std::string name = "kokoro-bench-" + say_mode + "-" + precision + "-" + voice;
  const std::string harness = std::string(KOKORO_SOURCE_DIR) + "/bench/quality/run.sh";
  const std::string cmd = "'" + harness + "' --name " + name + " --bin '" + (bin_dir / "kokoro-say").string() +
                          "' -- --mode " + say_mode + " --precision " + precision + " --voice " + voice + " 1>&2";
  std::fprintf(stderr, "kokoro-bench: quality: %s\n", cmd.c_str());
  if (std::system(cmd.c_str()) != 0) throw Error("kokoro-bench: the quality harness failed (command above)");
  const std::string path = std::string(KOKORO_SOURCE_DIR) + "/bench/quality/results/" + name + ".json";
  std::ifstream f(path);
  if (!f) throw Error("kokoro-bench: the quality harness wrote no " + path);
  const nlohmann::json r = nlohmann::json::parse(f);
  return {{"results", path},
          {"system", r.at("system").at("summary")},
          {"reference", r.at("reference").at("summary")},
          {"floor", r.at("floor").at("summary")},
          {"reference_args", r.at("reference_args")}};
}

}  // namespace

int main(int argc, char** argv) {
  kokoro::app::tune_malloc_for_tensors();  // before any allocation worth tuning
  CLI::App app{"kokoro-bench: RTF, time to first audio, per-stage time and memory of the kokoro-rt engine"};
  std::string mode = "slice", corpora = "short,medium,long,passage", corpus_dir = std::string(KOKORO_SOURCE_DIR) + "/bench/corpus";
  std::string model_path, assets, plot_dir, json_file, voice = "af_heart";
  int repeat = 3, threads = num_threads(), text_runs = 20;
  size_t first_words = 0;
  std::string phoneme_file, precision_opt;
  bool json = false, no_peak = false, quality = false;
  app.add_option("--mode", mode,
                 "exact (Synthesizer per segment, stages split), engine-exact or slice (the streaming engine "
                 "in that mode onto a simulated real-time device)")
      ->check(CLI::IsMember({"exact", "engine-exact", "slice"}))->capture_default_str();
  app.add_option("--corpus", corpora, "Comma-separated corpora from the corpus directory")->capture_default_str();
  app.add_option("--corpus-dir", corpus_dir, "Where <name>.txt corpora live")->capture_default_str();
  app.add_option("--repeat", repeat, "Timed repetitions of each corpus")->capture_default_str()->check(CLI::Range(1, 1000));
  app.add_option("--threads", threads, "Kernel threads (the caller included)")->capture_default_str()->check(CLI::Range(1, 64));
  app.add_option("--voice", voice, "Voice")->capture_default_str();
  app.add_option("--first-words", first_words, "Cut the first segment after N words (0: never, as kokoro-say); the segments after the cut are whole sentences that grow with the audio before them")->capture_default_str();
  double max_slice = 0, first_slice = 0;
  bool reference_segments = false;
  app.add_flag("--reference-segments", reference_segments,
               "Slice mode: segment as the reference does (the first sentence grouped with the next ones up to 510 "
               "phonemes) instead of the first sentence alone: the baseline of issue 28's first step");
  bool no_preroll = false;
  app.add_flag("--no-preroll", no_preroll,
               "Engine modes: no pre-roll, so that TTFA is when the first audio is ready, not when a machine too slow "
               "for its slices would let it play (what kokoro-say -o and so the cold figure report)");
  app.add_option("--max-slice", max_slice, "Slice mode: the longest slice in seconds (0: the default, as kokoro-say)");
  app.add_option("--first-slice", first_slice, "Slice mode: the first slice in seconds (0: the default, as kokoro-say)");
  app.add_option("--text-runs", text_runs, "Runs of the 20-token text-side measurement")->capture_default_str()->check(CLI::Range(1, 1000));
  app.add_option("--model", model_path, "Model file (default: KOKORO_MODEL or models/kokoro-v1_0.kokoro)");
  app.add_option("--assets", assets, "Assets directory (voices, lexicons)");
  app.add_flag("--json", json, "Print JSON on stdout instead of the table");
  app.add_option("--json-file", json_file, "Also write the JSON to this file");
  app.add_option("--plot", plot_dir, "Write ttfa_cdf.png and stages.png into this directory (gnuplot)");
  app.add_option("--precision", precision_opt, "fp32, bf16, bf16-all or int8 (default: KOKORO_PRECISION, then the programs' default: int8 where the CPU has AVX512-VNNI and -BF16, bf16-all where it has AVX512-BF16, else fp32)")
      ->check(CLI::IsMember({"fp32", "bf16", "bf16-all", "int8"}));
  app.add_flag("--no-peak", no_peak, "Skip the GEMM peak measurement");
  int streams = 0, slots = 0;
  app.add_option("--streams", streams,
                 "N sessions on one model at once (engine/model.h), started together, each speaking the corpora back "
                 "to back onto its own simulated real-time device; reports TTFA per stream and overall and dry "
                 "utterances (0: the single-runner benchmark)")
      ->check(CLI::Range(0, 64));
  bool back_to_back = false;
  app.add_flag("--back-to-back", back_to_back,
               "With --streams: say the next utterance as soon as the last is reported, not once it has played "
               "(as the single-runner benchmark does: for a side-by-side of --streams 1 with it)");
  app.add_option("--slots", slots, "With --streams: compute items at once over all sessions (0: the threads)")
      ->check(CLI::Range(0, 64));
  app.add_flag("--quality", quality,
               "Also run bench/quality (ASR word errors, DNSMOS, LSD/MCD against whole-sentence exact mode; needs PyPI "
               "once) on this mode and precision; adds a \"quality\" object to the JSON");
  app.add_option("--phoneme-file", phoneme_file, "Time these phoneme strings (one segment per line) instead of corpora");
  double feed_wps = 0;
  app.add_option("--feed-wps", feed_wps,
                 "Feed each corpus word by word at this many words per second into one streamed utterance (text that "
                 "streams in) and report each sentence's delay from its last character to its first audio, beside the "
                 "same feed read line by line (0: off)")
      ->check(CLI::Range(0.0, 1000.0));
  int cold_runs = 8;
  app.add_option("--cold-runs", cold_runs,
                 "New kokoro-say processes, one per sentence of the short corpus, for the cold figure: first audio from "
                 "the process's start, beside the warm TTFA (0: skip)")
      ->capture_default_str()->check(CLI::Range(0, 1000));
  std::string cold_say;
  app.add_option("--cold-say", cold_say,
                 "The kokoro-say the cold figure starts (default: the one beside kokoro-bench; another build's, for a "
                 "before/after in one run)");
  bool verbose = false;
  app.add_flag("-v,--verbose", verbose,
               "The engine's debug log on stderr (per segment: acoustic model, early start, pre-roll decisions)");
  CLI11_PARSE(app, argc, argv);
  if (verbose) spdlog::set_level(spdlog::level::debug);

  try {
    if (no_preroll && mode == "exact") throw Error("kokoro-bench: --no-preroll is for the engine modes (exact mode has no pre-roll)");
    check_requested_kernel_family();  // KOKORO_KERNELS: measure the family asked for, or say why not
    set_num_threads(threads);
    if (!precision_opt.empty()) set_precision(parse_precision(precision_opt, "--precision"));
    else if (!std::getenv("KOKORO_PRECISION")) set_precision(recommended_precision());
    BenchResult r;
    r.precision = precision_name(precision());
    r.onednn_isa = onednn_isa();
    r.mode = mode;
    r.threads = threads;
    assets = find_assets_dir(assets);

    if (feed_wps > 0) {
      if (streams > 0 || !phoneme_file.empty() || quality || !plot_dir.empty() || first_words > 0)
        throw Error("--feed-wps takes corpora only (no --streams, --phoneme-file, --quality, --plot or --first-words)");
      ModelOptions mo;
      mo.model_path = default_model_path(model_path);
      mo.assets_dir = assets;
      const std::shared_ptr<Model> model = Model::open(mo);
      model->synthesizer()->model().persist_prepared_weights();
      std::vector<std::pair<std::string, std::string>> texts;
      for (const auto& [name, items] : read_corpora(corpus_dir, corpora)) {
        std::string text;  // the corpus as its file has it: one item a line (passage: one item of many lines)
        for (const std::string& item : items) text += item + "\n";
        texts.emplace_back(name, std::move(text));
      }
      FeedOptions fo;
      fo.words_per_second = feed_wps;
      fo.mode = mode == "engine-exact" ? SynthesisMode::exact : parse_synthesis_mode(mode);
      fo.voice = voice;
      fo.max_slice_seconds = max_slice;
      fo.first_slice_seconds = first_slice;
      fo.repeat = repeat;
      FeedResult fr = run_text_feed(*model, texts, fo);
      // Again after the feed: the forms only its sentences used (the early start's, on a build whose store has
      // not been written yet) are prepared on the heap in this run; the next run reads them from the store.
      model->synthesizer()->model().persist_prepared_weights();
      fr.threads = threads;
      if (!no_peak) fr.peak = measure_gemm_peak(threads);
      nlohmann::json j = to_json(fr);
      j["precision"] = precision_name(precision());
      j["kernel_family"] = kernel_family();
      j["corpora_names"] = corpora;
      print_result(j, to_table(fr), json, json_file);
      return 0;
    }

    if (streams > 0) {
      if (!phoneme_file.empty() || quality || !plot_dir.empty() || first_words > 0)
        throw Error("--streams takes corpora only (no --phoneme-file, --quality, --plot or --first-words)");
      const auto t0 = std::chrono::steady_clock::now();
      ModelOptions mo;
      mo.model_path = default_model_path(model_path);
      mo.assets_dir = assets;
      mo.compute_slots = slots;
      const std::shared_ptr<Model> model = Model::open(mo);
      std::vector<std::string> texts;
      for (const auto& [name, items] : read_corpora(corpus_dir, corpora)) texts.insert(texts.end(), items.begin(), items.end());
      MultiStreamOptions so;
      so.streams = streams;
      so.mode = mode == "engine-exact" ? SynthesisMode::exact : parse_synthesis_mode(mode);
      so.voice = voice;
      so.max_slice_seconds = max_slice;
      so.first_slice_seconds = first_slice;
      so.repeat = repeat;
      so.paced = !back_to_back;
      const double load_ms = ms_since(t0);
      model->synthesizer()->model().persist_prepared_weights();
      MultiStreamResult mr = run_streams(*model, texts, so);
      mr.threads = threads;
      mr.load_ms = load_ms;
      if (!no_peak) mr.peak = measure_gemm_peak(threads);
      nlohmann::json j = to_json(mr);
      j["precision"] = precision_name(precision());
      j["kernel_family"] = kernel_family();
      j["corpora"] = corpora;
      print_result(j, to_table(mr), json, json_file);
      return 0;
    }

    auto t0 = std::chrono::steady_clock::now();
    auto synth = std::make_shared<const Synthesizer>(Synthesizer::open(default_model_path(model_path)));
    r.load_ms = ms_since(t0);
    r.rss_after_load_mb = current_rss_mb();
    t0 = std::chrono::steady_clock::now();
    RunnerOptions ro;
    ro.voice = voice;
    ro.first_words = first_words;
    ro.max_slice_seconds = max_slice;
    ro.first_slice_seconds = first_slice;
    ro.reference_segments = reference_segments;
    ro.preroll = !no_preroll;
    ro.phoneme_input = !phoneme_file.empty();
    std::unique_ptr<Runner> runner = make_runner(mode, synth, assets, ro);
    r.frontend_load_ms = ms_since(t0);
    r.rss_after_frontend_mb = current_rss_mb();

    std::vector<std::pair<std::string, std::vector<std::string>>> texts;
    if (!phoneme_file.empty()) texts.emplace_back("phonemes", read_items(phoneme_file, false));
    else texts = read_corpora(corpus_dir, corpora);

    runner->run(texts.front().second.front());  // warm-up: first-touch of weights and buffers
    // As kokoro-say and kokoro-jack do: the prepared weights go to the user's store, and from then on they
    // are read from it (file pages, released between the parts of a segment) instead of the heap. Again
    // after each corpus, for the forms that only longer inputs use (not counted in the CPU time).
    double persist_cpu_s = 0;
    auto persist = [&] {
      const double c0 = cpu_seconds();
      synth->model().persist_prepared_weights();
      persist_cpu_s += cpu_seconds() - c0;
    };
    persist();
    r.loadavg_before = loadavg_1m();
    const double cpu0 = cpu_seconds();
    for (const auto& [name, items] : texts) {
      CorpusResult c;
      c.name = name;
      for (int rep = 0; rep < repeat; ++rep)
        for (const auto& text : items) c.runs.push_back(runner->run(text));
      r.corpora.push_back(std::move(c));
      persist();
      if (!json) std::fprintf(stderr, "kokoro-bench: %s done\n", name.c_str());
    }
    r.cpu_s = cpu_seconds() - cpu0 - persist_cpu_s;
    r.loadavg_after = loadavg_1m();
    // Peak RSS of the engine on the corpora, before the extra measurements (which load a second frontend).
    r.peak_rss_mb = peak_rss_mb();
    measure_text_side(*synth, assets, r, text_runs);
    if (cold_runs > 0 && phoneme_file.empty()) {
      ColdStartOptions co;
      co.say_binary = !cold_say.empty() ? cold_say
                                        : (std::filesystem::read_symlink("/proc/self/exe").parent_path() / "kokoro-say").string();
      co.args = {"--mode", mode == "engine-exact" ? "exact" : mode, "--precision", r.precision, "--voice", voice,
                 "--threads", std::to_string(threads), "--model", default_model_path(model_path), "--assets", assets};
      if (max_slice > 0) co.args.insert(co.args.end(), {"--max-slice", std::to_string(max_slice)});
      if (first_slice > 0) co.args.insert(co.args.end(), {"--first-slice", std::to_string(first_slice)});
      if (first_words > 0) co.args.insert(co.args.end(), {"--first-words", std::to_string(first_words)});
      co.sentences = read_corpus(corpus_dir, "short");
      co.runs = cold_runs;
      co.warm_ttfa_ms = [&](const std::string& sentence) { return runner->run(sentence).ttfa_ms; };
      r.cold = measure_cold_start(co);
      r.cold_corpus = "short";
      if (!json) std::fprintf(stderr, "kokoro-bench: cold start done\n");
    }
    if (!no_peak) r.peak = measure_gemm_peak(threads);

    nlohmann::json j = to_json(r, synth->model());
    if (quality) j["quality"] = run_quality(mode, r.precision, voice);
    print_result(j, to_table(r, synth->model()), json, json_file);
    if (!plot_dir.empty()) write_plots(r, plot_dir);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "kokoro-bench: %s\n", e.what());
    return 1;
  }
  return 0;
}
