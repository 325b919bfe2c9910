#include "frontend/line_filter.h"

#include <unicode/uchar.h>

#include <algorithm>

#include "frontend/emoji.h"
#include "frontend/unicode_text.h"

namespace kokoro {

namespace {

using CPs = std::vector<utf8::CodePoint>;

bool is_letter_or_number(char32_t c) {
  if (c < 0x80) return text::is_ascii_letter(c) || text::is_ascii_digit(c);
  return u_isalpha(static_cast<UChar32>(c)) || (U_GET_GC_MASK(static_cast<UChar32>(c)) & U_GC_N_MASK) != 0;
}

// The emoji sequence at i (a keycap starts with an ASCII digit, '#' or '*').
size_t emoji_at(const CPs& line, size_t i) {
  const char32_t c = line[i].cp;
  if (c < 0x80 && !(text::is_ascii_digit(c) || c == U'#' || c == U'*')) return 0;
  return emoji::sequence_length(line, i);
}

size_t skip_spaces(const CPs& line, size_t k) {
  while (k < line.size() && text::is_space(line[k].cp)) ++k;
  return k;
}

bool same_code_points(const CPs& line, size_t a, size_t b, size_t len) {
  for (size_t k = 0; k < len; ++k)
    if (line[a + k].cp != line[b + k].cp) return false;
  return true;
}

}  // namespace

void filter_line(CPs& line, bool drop_emoji) {
  const size_t n = line.size();
  size_t w = 0;  // the line is rewritten in place: w never passes i
  size_t i = 0;
  while (i < n) {
    const char32_t c = line[i].cp;
    if (const size_t len = emoji_at(line, i)) {
      // The same emoji again (spaces between or not) is the same emoji once.
      size_t end = i + len;
      for (;;) {
        const size_t k = skip_spaces(line, end);
        if (k + len > n || !same_code_points(line, i, k, len) || emoji_at(line, k) != len) break;
        end = k + len;
      }
      if (drop_emoji) {
        // Gone without a trace: "it 😀!" -> "it!", but "hi😀there" -> "hi there".
        const bool mark_follows = end == n || (!text::is_space(line[end].cp) && !is_letter_or_number(line[end].cp) &&
                                               !emoji_at(line, end));
        if (mark_follows) {
          while (w > 0 && text::is_space(line[w - 1].cp)) --w;
        } else if (w > 0 && !text::is_space(line[w - 1].cp) && !text::is_space(line[end].cp)) {
          line[w++] = {U' ', line[i].begin, line[end - 1].end};
        }
      } else {
        for (size_t k = i; k < i + len; ++k) line[w++] = line[k];
        line[w - 1].end = line[end - 1].end;
      }
      i = end;
      continue;
    }
    if (text::is_space(c) || text::is_decimal_digit(c)) {
      line[w++] = line[i++];
      continue;
    }
    if (is_letter_or_number(c)) {
      size_t j = i + 1;
      while (j < n && line[j].cp == c) ++j;
      for (size_t k = i; k < std::min(j, i + kMaxRepeat); ++k) line[w++] = line[k];
      line[w - 1].end = line[j - 1].end;
      i = j;
      continue;
    }
    // Punctuation, symbols, marks: repeats with only spaces between count as one run.
    size_t count = 0, k = i, kept_until = i;
    for (;;) {
      if (++count <= kMaxRepeat) {
        while (kept_until <= k) line[w++] = line[kept_until++];
      } else {
        line[w - 1].end = line[k].end;
      }
      const size_t next = skip_spaces(line, k + 1);
      if (next >= n || line[next].cp != c) break;
      k = next;
    }
    i = k + 1;
  }
  line.resize(w);
}

LineContent line_content(const CPs& line) {
  bool marks = false;
  for (size_t k = 0; k < line.size(); ++k) {
    const char32_t c = line[k].cp;
    if (is_letter_or_number(c)) return LineContent::speech;
    if (text::is_space(c) || c == utf8::kReplacement) continue;
    if (c >= 0x80 && emoji_at(line, k)) return LineContent::speech;
    marks = true;
  }
  return marks ? LineContent::marks_only : LineContent::nothing;
}

}  // namespace kokoro
