#include "frontend/espeak_g2p.h"

#include <algorithm>

#include "frontend/espeak.h"
#include "frontend/unicode_text.h"

namespace kokoro {

EnglishEspeakFallback::EnglishEspeakFallback(bool british)
    : british_(british), voice_(british ? "en-gb" : "en-us") {
  Espeak::instance();  // fail at construction, not at the first unknown word
}

std::optional<std::u32string> EnglishEspeakFallback::operator()(const std::u32string& word) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (auto it = cache_.find(word); it != cache_.end()) return it->second;
  }
  const std::string ipa = Espeak::instance().phonemize(voice_, utf8::encode(word));
  std::u32string ps = espeak_to_misaki_english(utf8::to_u32(ipa), british_);
  std::lock_guard<std::mutex> lock(mu_);
  if (cache_.size() >= kCacheLimit) cache_.clear();
  cache_.emplace(word, ps);
  return ps;
}

namespace {

struct Range {
  size_t begin, end;  // indices into the line's code points
};

// Sentences (ending in . ! ? runs followed by a space), then pieces of at most kMaxPieceChars.
std::vector<Range> pieces_of(const std::vector<utf8::CodePoint>& line, size_t max_chars) {
  std::vector<Range> sentences;
  size_t start = 0;
  for (size_t i = 0; i < line.size(); ++i) {
    const char32_t c = line[i].cp;
    if ((c == U'.' || c == U'!' || c == U'?') && (i + 1 == line.size() || text::is_space(line[i + 1].cp))) {
      sentences.push_back({start, i + 1});
      start = i + 1;
    }
  }
  if (start < line.size()) sentences.push_back({start, line.size()});
  std::vector<Range> out;
  for (Range r : sentences) {
    while (r.end - r.begin > max_chars) {
      size_t cut = r.begin + max_chars;
      while (cut > r.begin + max_chars / 2 && !text::is_space(line[cut].cp)) --cut;
      if (!text::is_space(line[cut].cp)) cut = r.begin + max_chars;
      out.push_back({r.begin, cut});
      r.begin = cut;
    }
    out.push_back(r);
  }
  return out;
}

}  // namespace

EspeakLanguageG2P::EspeakLanguageG2P(std::string language) : language_(std::move(language)) {
  Espeak::instance().phonemize(language_, "");  // checks the voice exists
}

std::vector<Unit> EspeakLanguageG2P::phonemize_line(const std::vector<utf8::CodePoint>& line) const {
  std::vector<Unit> units;
  for (const Range& piece : pieces_of(line, kMaxPieceChars)) {
    // Input words (whitespace separated) with their byte ranges.
    std::vector<Range> in_words;
    std::u32string text;
    for (size_t i = piece.begin; i < piece.end; ++i) {
      char32_t c = line[i].cp;
      if (c == U'«') c = U'“';
      if (c == U'»') c = U'”';
      if (text::is_space(c)) c = U' ';
      text.push_back(c);
      if (c != U' ' && (i == piece.begin || text::is_space(line[i - 1].cp))) in_words.push_back({i, i + 1});
      if (c != U' ') in_words.back().end = i + 1;
    }
    if (in_words.empty()) continue;
    const std::u32string ps =
        espeak_to_misaki_other(utf8::to_u32(Espeak::instance().phonemize(language_, utf8::encode(text))));
    // Output words, each with its punctuation split off so the chunker can cut at it.
    std::vector<std::u32string> out_words;
    size_t i = 0;
    while (i < ps.size()) {
      while (i < ps.size() && ps[i] == U' ') ++i;
      size_t j = i;
      while (j < ps.size() && ps[j] != U' ') ++j;
      if (j > i) out_words.push_back(ps.substr(i, j - i));
      i = j;
    }
    const size_t n_in = in_words.size(), n_out = out_words.size();
    for (size_t k = 0; k < n_out; ++k) {
      // espeak may read one written word as several (numbers): spread output words over input words.
      const Range& src = in_words[std::min(n_in - 1, k * n_in / std::max<size_t>(n_out, 1))];
      const uint32_t b = line[src.begin].begin, e = line[src.end - 1].end;
      const std::u32string& w = out_words[k];
      size_t lo = 0, hi = w.size();
      while (lo < hi && is_espeak_mark(w[lo])) ++lo;
      while (hi > lo && is_espeak_mark(w[hi - 1])) --hi;
      for (size_t m = 0; m < lo; ++m) units.push_back({std::u32string(1, w[m]), false, b, e, false});
      if (hi > lo) units.push_back({w.substr(lo, hi - lo), false, b, e, true});
      for (size_t m = hi; m < w.size(); ++m) units.push_back({std::u32string(1, w[m]), false, b, e, false});
      if (!units.empty()) units.back().space_after = true;
    }
  }
  if (!units.empty()) units.back().space_after = false;
  return units;
}

}  // namespace kokoro
