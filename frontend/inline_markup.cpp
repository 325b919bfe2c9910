#include "frontend/inline_markup.h"

#include <cstdlib>

#include "frontend/unicode_text.h"

namespace kokoro::en {

namespace {

// misaki's reading of the parenthesised part: an integer with an optional sign, "0.5"/"+0.5"/"-0.5", or
// "/phonemes/".
void parse_feature(const std::u32string& f, Markup& m) {
  if (f.size() > 1 && f.front() == U'/' && f.back() == U'/') {
    std::u32string ps = f.substr(1);
    while (!ps.empty() && ps.back() == U'/') ps.pop_back();
    m.phonemes = ps;
    return;
  }
  if (f == U"0.5" || f == U"+0.5") {
    m.stress = 0.5;
    return;
  }
  if (f == U"-0.5") {
    m.stress = -0.5;
    return;
  }
  const size_t start = !f.empty() && (f[0] == U'+' || f[0] == U'-') ? 1 : 0;
  if (f.size() > start && f.size() <= 3 && text::is_all_ascii_digits(f.substr(start))) {
    int v = 0;
    for (size_t i = start; i < f.size(); ++i) v = v * 10 + static_cast<int>(f[i] - U'0');
    m.stress = f[0] == U'-' ? -v : v;
  }
}

}  // namespace

std::vector<utf8::CodePoint> strip_markup(const std::vector<utf8::CodePoint>& line, std::vector<Markup>& marks) {
  std::vector<utf8::CodePoint> out;
  out.reserve(line.size());
  size_t i = 0;
  const size_t n = line.size();
  while (i < n) {
    // "[" words "]" "(" feature ")": words without "]", feature without ")", as misaki's regex.
    if (line[i].cp == U'[') {
      size_t close = i + 1;
      while (close < n && line[close].cp != U']') ++close;
      if (close > i + 1 && close + 1 < n && line[close + 1].cp == U'(') {
        size_t end = close + 2;
        while (end < n && line[end].cp != U')') ++end;
        if (end < n) {
          Markup m;
          m.begin = line[i + 1].begin;
          m.end = line[close - 1].end;
          std::u32string feature;
          for (size_t k = close + 2; k < end; ++k) feature.push_back(line[k].cp);
          parse_feature(feature, m);
          for (size_t k = i + 1; k < close; ++k) out.push_back(line[k]);
          if (m.phonemes || m.stress) marks.push_back(std::move(m));
          i = end + 1;
          continue;
        }
      }
    }
    out.push_back(line[i]);
    ++i;
  }
  return out;
}

void apply_markup(std::vector<Token>& tokens, const std::vector<Markup>& marks) {
  for (const Markup& m : marks) {
    size_t b = 0;
    while (b < tokens.size() && tokens[b].begin < m.begin) ++b;
    size_t e = b;
    while (e < tokens.size() && tokens[e].end <= m.end) ++e;
    if (b >= e) continue;
    if (m.stress) {
      for (size_t k = b; k < e; ++k) tokens[k].stress = m.stress;
      continue;
    }
    // One word spoken as given, covering all the bracketed text.
    Token t = tokens[b];
    for (size_t k = b + 1; k < e; ++k) {
      if (tokens[k - 1].space_after) t.text.push_back(U' ');
      t.text += tokens[k].text;
    }
    t.end = tokens[e - 1].end;
    t.space_after = tokens[e - 1].space_after;
    t.phonemes = m.phonemes;
    t.tag = "NN";
    t.rating = 5;
    tokens.erase(tokens.begin() + static_cast<std::ptrdiff_t>(b + 1), tokens.begin() + static_cast<std::ptrdiff_t>(e));
    tokens[b] = std::move(t);
  }
}

}  // namespace kokoro::en
