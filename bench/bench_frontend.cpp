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

namespace {

std::vector<std::string> corpus() {
  std::vector<std::string> out;
  std::ifstream in(std::string(KOKORO_SOURCE_DIR) + "/tests/data/g2p/corpus_en.txt");
  std::string line;
  while (std::getline(in, line))
    if (!line.empty() && line[0] != '#') out.push_back(line);
  return out;
}

void BM_SegmentSentence(benchmark::State& state, const char* lang) {
  kokoro::FrontendOptions opt;
  opt.language = lang;
  const kokoro::Frontend fe(opt);
  const auto sentences = corpus();
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
