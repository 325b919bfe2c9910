#include "frontend/norm_support.h"

#include <algorithm>

#include "frontend/unicode_text.h"
#include "frontend/utf8.h"

namespace kokoro::en::norm {

std::string ascii(std::u32string_view s) {
  std::string out;
  out.reserve(s.size());
  for (char32_t c : s) out.push_back(c < 0x80 ? static_cast<char>(c) : '\x7f');
  return out;
}

std::string ascii(const Token& t) { return ascii(t.text); }

bool is_free(const Token& t) { return !t.alias && !t.phonemes && t.group == 0; }

// Whether the first word.size() characters of `t` are `word` (ASCII); no allocation, as this runs for
// every token and every table entry.
bool starts_ascii(const std::u32string& t, std::string_view word) {
  if (t.size() < word.size()) return false;
  for (size_t k = 0; k < word.size(); ++k)
    if (t[k] != static_cast<unsigned char>(word[k])) return false;
  return true;
}

bool is_one_of(const std::vector<Token>& toks, size_t i, std::initializer_list<std::string_view> options) {
  if (i >= toks.size() || !is_free(toks[i])) return false;
  const std::u32string& t = toks[i].text;
  for (std::string_view o : options)
    if (t.size() == o.size() && starts_ascii(t, o)) return true;
  return false;
}

size_t abbreviation_at(const std::vector<Token>& toks, size_t i, std::string_view word, bool dot_optional) {
  if (i >= toks.size() || !is_free(toks[i])) return 0;
  const std::u32string& t = toks[i].text;
  if (!starts_ascii(t, word)) return 0;
  if (t.size() == word.size() + 1 && t.back() == U'.') return 1;
  if (t.size() != word.size()) return 0;
  if (joined(toks, i) && is_one_of(toks, i + 1, {"."})) return 2;
  return dot_optional ? 1 : 0;
}

bool all_digits(std::string_view s) {
  return !s.empty() && std::all_of(s.begin(), s.end(), [](char c) { return c >= '0' && c <= '9'; });
}

std::optional<long> int_value(std::string_view s) {
  if (!all_digits(s) || s.size() > 9) return std::nullopt;
  long v = 0;
  for (char c : s) v = v * 10 + (c - '0');
  return v;
}

bool is_plain_number(std::string_view s) {
  if (!s.empty() && s[0] == '-') s.remove_prefix(1);
  if (s.empty() || s.size() > 30) return false;
  const size_t dot = s.find('.');
  std::string_view int_part = s.substr(0, dot);
  if (dot != std::string_view::npos) {
    const std::string_view frac = s.substr(dot + 1);
    if (!all_digits(frac)) return false;
  }
  if (int_part.empty()) return dot != std::string_view::npos;
  // Digits, optionally grouped by commas in threes.
  if (all_digits(int_part)) return true;
  const size_t first = int_part.find(',');
  if (first == 0 || first > 3) return false;
  for (size_t i = first; i < int_part.size(); i += 4) {
    if (int_part[i] != ',' || i + 4 > int_part.size() || !all_digits(int_part.substr(i + 1, 3))) return false;
  }
  return all_digits(int_part.substr(0, first));
}

Words number_words(std::string_view s) {
  if (!is_plain_number(s)) return {};
  Words out;
  if (s[0] == '-') {
    out.emplace_back("minus");
    s.remove_prefix(1);
  }
  std::string digits;
  for (char c : s)
    if (c != ',') digits.push_back(c);
  const size_t dot = digits.find('.');
  if (dot != std::string::npos) {
    append(out, decimal_words(std::string_view(digits).substr(0, dot), std::string_view(digits).substr(dot + 1)));
  } else if (digits.size() == 4 && s.find(',') == std::string_view::npos) {
    append(out, year_words(digits));
  } else {
    append(out, cardinal_words(digits));
  }
  return out;
}

bool is_singular(std::string_view s) {
  if (!s.empty() && s[0] == '-') s.remove_prefix(1);
  return s == "1";
}

Words digits_spoken(std::string_view digits, bool zero_as_oh) {
  Words out = digit_words(digits);
  if (zero_as_oh)
    for (auto& w : out)
      if (w == "zero") w = "oh";
  return out;
}

void append(Words& out, const Words& more) { out.insert(out.end(), more.begin(), more.end()); }

Words split_words(std::string_view text) {
  Words out;
  size_t i = 0;
  while (i < text.size()) {
    while (i < text.size() && text[i] == ' ') ++i;
    size_t j = i;
    while (j < text.size() && text[j] != ' ') ++j;
    if (j > i) out.emplace_back(text.substr(i, j - i));
    i = j;
  }
  return out;
}

void read_as(std::vector<Token>& toks, size_t i, std::string_view words) {
  const size_t end = replace(toks, i, i + 1, split_words(words));
  toks[end - 1].space_after = true;
}

size_t replace(std::vector<Token>& toks, size_t b, size_t e, const Words& words) {
  if (b >= e || words.empty()) return e;
  const Token first = toks[b];
  const Token& last = toks[e - 1];
  const uint32_t begin = first.begin, end = last.end;
  const bool space_after = last.space_after;
  std::vector<Token> out;
  out.reserve(words.size());
  for (const auto& w : words) {
    Token t;
    t.begin = begin;
    t.end = end;
    t.group = begin + 1;
    t.space_after = true;
    if (w == "," || w == ".") {
      t.text = utf8::to_u32(w);
      t.phonemes = t.text;
      t.tag = w == "," ? "," : ".";
      t.rating = 4;
      if (!out.empty()) out.back().space_after = false;
    } else {
      t.text = utf8::to_u32(w);
      t.alias = t.text;
      // The article "a" ("two and a half") is unstressed; everything else reads as a noun would.
      t.tag = w == "a" ? "DT" : (std::isupper(static_cast<unsigned char>(w[0])) ? "NNP" : "NN");
      if (w == "point") t.stress = -2;  // as misaki reads the "point" of a decimal
    }
    out.push_back(std::move(t));
  }
  out.back().space_after = space_after;
  // A word written right before the span ("ca.5km") is still a word of its own.
  if (b > 0 && !toks[b - 1].text.empty() && (text::is_letter(toks[b - 1].text.back()) ||
                                              text::is_decimal_digit(toks[b - 1].text.back())))
    toks[b - 1].space_after = true;
  toks.erase(toks.begin() + static_cast<std::ptrdiff_t>(b), toks.begin() + static_cast<std::ptrdiff_t>(e));
  toks.insert(toks.begin() + static_cast<std::ptrdiff_t>(b), out.begin(), out.end());
  return b + out.size();
}

}  // namespace kokoro::en::norm
