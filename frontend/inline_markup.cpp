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
  const size_t n = line.size();
  // Next "]" and ")" at or after each position, so that text full of unclosed brackets stays linear.
  std::vector<size_t> next_bracket(n + 1, n), next_paren(n + 1, n);
  for (size_t k = n; k-- > 0;) {
    next_bracket[k] = line[k].cp == U']' ? k : next_bracket[k + 1];
    next_paren[k] = line[k].cp == U')' ? k : next_paren[k + 1];
  }
  size_t i = 0;
  while (i < n) {
    // "[" words "]" "(" feature ")": words without "]", feature without ")", as misaki's regex.
    if (line[i].cp == U'[') {
      const size_t close = next_bracket[i + 1];
      if (close > i + 1 && close + 1 < n && line[close + 1].cp == U'(') {
        const size_t end = next_paren[close + 2];
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
  if (marks.empty()) return;
  // Marks and tokens are both in text order: one pass, building the result anew.
  std::vector<Token> out;
  out.reserve(tokens.size());
  size_t next = 0;  // first token not yet moved to `out`
  for (const Markup& m : marks) {
    size_t b = next;
    while (b < tokens.size() && tokens[b].begin < m.begin) ++b;
    size_t e = b;
    while (e < tokens.size() && tokens[e].end <= m.end) ++e;
    for (size_t k = next; k < b; ++k) out.push_back(std::move(tokens[k]));
    next = b;
    if (b >= e) continue;
    if (m.stress) {
      for (size_t k = b; k < e; ++k) {
        tokens[k].stress = m.stress;
        out.push_back(std::move(tokens[k]));
      }
      next = e;
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
    out.push_back(std::move(t));
    next = e;
  }
  for (size_t k = next; k < tokens.size(); ++k) out.push_back(std::move(tokens[k]));
  tokens = std::move(out);
}

}  // namespace kokoro::en
