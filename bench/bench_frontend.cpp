// Frontend speed: text -> phoneme segments for typical sentences (the G2P agreement corpus, which has
// news, dialogue, numbers, names and technical text), per sentence; plus tokenization to ids and a
// paragraph that needs chunking. Goal: <= 1 ms per typical sentence.
#include <benchmark/benchmark.h>
#include <nlohmann/json.hpp>

#include <fstream>
#include <string>
#include <vector>

#include "core/assets.h"
#include "frontend/frontend.h"
#include "process_stats.h"

namespace {

std::vector<std::string> corpus(const char* path = "/tests/data/g2p/corpus_en.txt") {
  std::vector<std::string> out;
  std::ifstream in(std::string(KOKORO_SOURCE_DIR) + path);
  std::string line;
  while (std::getline(in, line))
    if (!line.empty() && line[0] != '#') out.push_back(line);
  return out;
}

void BM_SegmentSentence(benchmark::State& state, const char* lang) {
  kokoro::FrontendOptions opt;
  opt.language = lang;
  const kokoro::Frontend fe(opt);
  const auto sentences = std::string(lang) == "ja" ? corpus("/tests/data/ja/corpus.txt") : corpus();
  if (sentences.empty()) {
    state.SkipWithError("corpus missing");
    return;
  }
  for (const auto& s : sentences) fe.segment(s);  // warm the espeak-ng cache as a running engine would
  size_t i = 0;
  for (auto _ : state) {
    benchmark::DoNotOptimize(fe.segment(sentences[i]));
    i = (i + 1) % sentences.size();
  }
  state.SetItemsProcessed(state.iterations());
  state.counters["us_per_sentence"] =
      benchmark::Counter(static_cast<double>(state.iterations()), benchmark::Counter::kIsRate | benchmark::Counter::kInvert);
}
BENCHMARK_CAPTURE(BM_SegmentSentence, en_us, "en-us")->Unit(benchmark::kMicrosecond);
BENCHMARK_CAPTURE(BM_SegmentSentence, en_gb, "en-gb")->Unit(benchmark::kMicrosecond);
BENCHMARK_CAPTURE(BM_SegmentSentence, ja, "ja")->Unit(benchmark::kMicrosecond);

// RssAnon or RssFile of this process now, MB.
double rss_kind_mb(const char* kind) {
  std::ifstream f("/proc/self/status");
  std::string key;
  double kb = 0;
  while (f >> key) {
    if (key == std::string(kind) + ":") {
      f >> kb;
      return kb / 1024;
    }
  }
  return 0;
}

// Japanese start-up: MeCab maps UniDic (unidic-lite) and misaki's word list is read; resident memory
// added by the dictionary after start-up and after reading the whole Japanese corpus (only the pages
// lookups touch become resident).
void BM_JapaneseStartup(benchmark::State& state) {
  const double rss0 = kokoro::bench::current_rss_mb(), anon0 = rss_kind_mb("RssAnon"), file0 = rss_kind_mb("RssFile");
  double rss_loaded = 0, rss_used = 0, anon = 0, file = 0, faults = 0;
  for (auto _ : state) {
    kokoro::FrontendOptions opt;
    opt.language = "ja";
    const kokoro::Frontend fe(opt);
    state.PauseTiming();
    rss_loaded = kokoro::bench::current_rss_mb() - rss0;
    rusage r0{}, r1{};
    getrusage(RUSAGE_SELF, &r0);
    for (const auto& s : corpus("/tests/data/ja/corpus.txt")) fe.segment(s);
    getrusage(RUSAGE_SELF, &r1);
    faults = static_cast<double>(r1.ru_minflt - r0.ru_minflt + r1.ru_majflt - r0.ru_majflt);
    rss_used = kokoro::bench::current_rss_mb() - rss0;
    anon = rss_kind_mb("RssAnon") - anon0;
    file = rss_kind_mb("RssFile") - file0;
    state.ResumeTiming();
  }
  state.counters["rss_mb_loaded"] = rss_loaded;
  state.counters["rss_mb_after_corpus"] = rss_used;
  state.counters["anon_mb"] = anon;  // private memory (word list, MeCab's buffers)
  state.counters["file_mb"] = file;
  state.counters["page_faults"] = faults;  // each maps up to 16 neighbouring cached pages (fault-around)  // dictionary pages mapped from the file (clean, shared, reclaimable)
}
BENCHMARK(BM_JapaneseStartup)->Unit(benchmark::kMillisecond)->Iterations(5);

// Words no lexicon knows go to espeak-ng each time (cold cache): the slow path.
void BM_SegmentUnknownWords(benchmark::State& state) {
  const kokoro::Frontend fe(kokoro::FrontendOptions{});
  size_t n = 0;
  for (auto _ : state) {
    const std::string s = "Zorblax" + std::to_string(n++) + "quen met Vrintholm at Kessaby.";
    benchmark::DoNotOptimize(fe.segment(s));
  }
}
BENCHMARK(BM_SegmentUnknownWords)->Unit(benchmark::kMicrosecond);

void BM_SegmentParagraph(benchmark::State& state) {
  const kokoro::Frontend fe(kokoro::FrontendOptions{});
  std::string text;
  for (const auto& s : corpus()) text += s + " ";
  text.resize(20000);
  for (auto _ : state) benchmark::DoNotOptimize(fe.segment(text));
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations() * text.size()));
}
BENCHMARK(BM_SegmentParagraph)->Unit(benchmark::kMillisecond);

void BM_SegmentSpanish(benchmark::State& state) {
  kokoro::FrontendOptions opt;
  opt.language = "es";
  const kokoro::Frontend fe(opt);
  for (auto _ : state)
    benchmark::DoNotOptimize(fe.segment("El ayuntamiento aprobó el martes un nuevo presupuesto para las escuelas."));
}
BENCHMARK(BM_SegmentSpanish)->Unit(benchmark::kMicrosecond);

// Mandarin (frontend/zh_g2p.h) on its agreement corpus (news, conversation, numbers, names, mixed script),
// per sentence; and what opening the Mandarin frontend costs (dictionary mmap, vocabulary).
std::vector<std::string> corpus_zh() {
  std::vector<std::string> out;
  std::ifstream in(std::string(KOKORO_SOURCE_DIR) + "/tests/data/zh/corpus.txt");
  std::string line;
  while (std::getline(in, line))
    if (!line.empty() && line[0] != '#') out.push_back(line);
  return out;
}

void BM_SegmentMandarin(benchmark::State& state) {
  kokoro::FrontendOptions opt;
  opt.language = "zh";
  const kokoro::Frontend fe(opt);
  const auto sentences = corpus_zh();
  if (sentences.empty()) {
    state.SkipWithError("corpus missing");
    return;
  }
  for (const auto& s : sentences) fe.segment(s);  // fault in the dictionary pages a running engine has
  size_t i = 0;
  for (auto _ : state) {
    benchmark::DoNotOptimize(fe.segment(sentences[i]));
    i = (i + 1) % sentences.size();
  }
  state.counters["us_per_sentence"] =
      benchmark::Counter(static_cast<double>(state.iterations()), benchmark::Counter::kIsRate | benchmark::Counter::kInvert);
}
BENCHMARK(BM_SegmentMandarin)->Unit(benchmark::kMicrosecond);

void BM_OpenMandarin(benchmark::State& state) {
  kokoro::FrontendOptions opt;
  opt.language = "zh";
  for (auto _ : state) benchmark::DoNotOptimize(kokoro::Frontend(opt));
}
BENCHMARK(BM_OpenMandarin)->Unit(benchmark::kMillisecond);

void BM_Tokenize(benchmark::State& state) {
  const auto vocab = kokoro::Vocab::load(kokoro::find_assets_dir() + "/config.json");
  const std::string ps = "ðə sˈɪTi kˈWnsᵊl vˈOTᵻd ˌɔn tˈuzdˌA tʊ əpɹˈuv ɐ nˈu bˈʌʤət fɔɹ pˈʌblɪk skˈulz.";
  for (auto _ : state) benchmark::DoNotOptimize(kokoro::tokenize(ps, vocab));
}
BENCHMARK(BM_Tokenize);

}  // namespace

BENCHMARK_MAIN();
