#include "lv2/cue_text.h"

#include <array>
#include <cctype>
#include <string>

namespace kokoro::lv2 {
namespace {

bool is_space(char c) { return c == ' ' || c == '\t' || c == '\r' || c == '\f' || c == '\v'; }
bool is_space_or_break(char c) { return is_space(c) || c == '\n'; }

bool starts_with(std::string_view s, std::size_t i, std::string_view prefix) { return s.substr(i, prefix.size()) == prefix; }

// Sentence ends and the characters that close a sentence after them, as UTF-8.
constexpr std::array<std::string_view, 4> kTerminators = {".", "!", "?", "\xE2\x80\xA6"};          // . ! ? …
constexpr std::array<std::string_view, 3> kFullWidthTerminators = {"\xE3\x80\x82", "\xEF\xBC\x81",  // 。！
                                                                   "\xEF\xBC\x9F"};                  // ？
constexpr std::array<std::string_view, 12> kClosers = {
    "\"", "'", ")", "]", "\xE2\x80\x9D", "\xE2\x80\x99", "\xC2\xBB",  // ” ’ »
    "\xE3\x80\x8D", "\xE3\x80\x8F", "\xEF\xBC\x89", "\xE3\x80\x8B", "\xE3\x80\x91"};  // 」 』 ） 》 】

// A period after these is not a sentence end (compared without case).
constexpr std::array<std::string_view, 16> kAbbreviations = {"mr", "mrs", "ms", "dr", "prof", "st", "jr", "sr",
                                                             "vs", "mt", "no", "fig", "e.g", "i.e", "cf", "approx"};

std::size_t match_any(std::string_view s, std::size_t i, const auto& set) {
  for (std::string_view t : set)
    if (starts_with(s, i, t)) return t.size();
  return 0;
}

// The word just before position `dot` (a '.'): letters and inner dots back to a space or the line start.
bool abbreviation_before(std::string_view line, std::size_t dot) {
  std::size_t b = dot;
  while (b > 0 && !is_space(line[b - 1]) && line[b - 1] != '(' && line[b - 1] != '"') --b;
  const std::string_view word = line.substr(b, dot - b);
  if (word.size() == 1 && std::isalpha(static_cast<unsigned char>(word[0]))) return true;  // an initial: "J. Smith"
  std::string lower;
  for (char c : word) lower += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  for (std::string_view a : kAbbreviations)
    if (lower == a) return true;
  return false;
}

void add_trimmed(std::string_view text, std::size_t b, std::size_t e, std::vector<Cue>& out) {
  while (b < e && is_space_or_break(text[b])) ++b;
  while (e > b && is_space_or_break(text[e - 1])) --e;
  if (b < e) out.push_back({b, e});
}

void split_line(std::string_view text, std::size_t line_begin, std::size_t line_end, std::vector<Cue>& out) {
  const std::string_view line = text.substr(0, line_end);  // indices stay those of the text
  std::size_t start = line_begin, i = line_begin;
  while (i < line_end) {
    std::size_t n = match_any(line, i, kFullWidthTerminators);
    bool full_width = n > 0;
    if (!full_width) n = match_any(line, i, kTerminators);
    if (n == 0) {
      ++i;
      continue;
    }
    std::size_t j = i + n;
    // A run of terminators ("?!", "...") and the closers after it belong to the sentence.
    for (std::size_t m; (m = match_any(line, j, kTerminators) + match_any(line, j, kFullWidthTerminators)) > 0;) j += m;
    for (std::size_t m; (m = match_any(line, j, kClosers)) > 0;) j += m;
    const bool at_space = j >= line_end || is_space(line[j]);
    const bool single_period = n == 1 && line[i] == '.' && j == i + 1;
    if ((full_width || at_space) && !(single_period && abbreviation_before(line, i))) {
      add_trimmed(text, start, j, out);
      start = j;
    }
    i = j;
  }
  add_trimmed(text, start, line_end, out);
}

}  // namespace

bool is_ssml(std::string_view t) {
  std::size_t i = starts_with(t, 0, "\xEF\xBB\xBF") ? 3 : 0;
  for (;;) {  // the prologue the engine skips: whitespace, <?xml ...?>, comments
    while (i < t.size() && is_space_or_break(t[i])) ++i;
    if (!starts_with(t, i, "<?xml") && !starts_with(t, i, "<!--")) break;
    const std::size_t e = t.find('>', i);
    if (e == std::string_view::npos) return false;
    i = e + 1;
  }
  return starts_with(t, i, "<speak") && i + 6 < t.size() &&
         (t[i + 6] == '>' || t[i + 6] == '/' || is_space_or_break(t[i + 6]));
}

std::vector<Cue> split_cues(std::string_view text) {
  std::vector<Cue> cues;
  if (is_ssml(text)) {
    add_trimmed(text, 0, text.size(), cues);
    return cues;
  }
  std::size_t line_begin = 0;
  while (line_begin <= text.size()) {
    std::size_t line_end = text.find('\n', line_begin);
    if (line_end == std::string_view::npos) line_end = text.size();
    split_line(text, line_begin, line_end, cues);
    line_begin = line_end + 1;
  }
  return cues;
}

}  // namespace kokoro::lv2
