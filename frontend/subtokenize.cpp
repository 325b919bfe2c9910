#include "frontend/subtokenize.h"

#include "frontend/unicode_text.h"

namespace kokoro::en {

namespace {

using text::is_decimal_digit;
using text::is_letter;
using text::is_lower_letter;
using text::is_upper_letter;

bool is_apos(char32_t c) { return c == U'\'' || c == U'‘' || c == U'’'; }
bool is_sep(char32_t c) { return c == U',' || c == U'.'; }

// (?:^-)?(?:\d?[,.]?\d)+  ==  (?:^-)?[,.]?\d(?:[,.]?\d)*  (greedy); returns the end or `pos` for no match.
size_t match_number(std::u32string_view w, size_t pos) {
  const size_t n = w.size();
  size_t i = pos;
  if (pos == 0 && i < n && w[i] == U'-') ++i;
  if (i + 1 < n && is_sep(w[i]) && is_decimal_digit(w[i + 1])) {
    i += 2;
  } else if (i < n && is_decimal_digit(w[i])) {
    i += 1;
  } else {
    return pos;
  }
  while (i < n) {
    if (is_decimal_digit(w[i])) {
      ++i;
    } else if (i + 1 < n && is_sep(w[i]) && is_decimal_digit(w[i + 1])) {
      i += 2;
    } else {
      break;
    }
  }
  return i;
}

// \p{L}*?(?:['‘’]\p{L})*?\p{Ll}(?=\p{Lu}) : the shortest run ending in a lower-case letter that is
// followed by an upper-case one (camelCase). The run is letters, then apostrophe+letter pairs, so the
// only candidates are inside the leading letters or right after the pairs. Returns the end or `pos`.
size_t match_camel(std::u32string_view w, size_t pos) {
  const size_t n = w.size();
  size_t letters_end = pos;
  while (letters_end < n && is_letter(w[letters_end])) ++letters_end;
  for (size_t k = pos; k + 1 < letters_end; ++k)
    if (is_lower_letter(w[k]) && is_upper_letter(w[k + 1])) return k + 1;
  size_t pairs_end = letters_end;
  while (pairs_end + 1 < n && is_apos(w[pairs_end]) && is_letter(w[pairs_end + 1])) pairs_end += 2;
  if (pairs_end > letters_end && pairs_end + 1 < n && is_lower_letter(w[pairs_end]) &&
      is_upper_letter(w[pairs_end + 1]))
    return pairs_end + 1;
  return pos;
}

// \p{L}+(?:['‘’]\p{L})*
size_t match_word(std::u32string_view w, size_t pos) {
  size_t i = pos;
  while (i < w.size() && is_letter(w[i])) ++i;
  if (i == pos) return pos;
  while (i + 1 < w.size() && is_apos(w[i]) && is_letter(w[i + 1])) i += 2;
  return i;
}

}  // namespace

std::vector<Piece> subtokenize(std::u32string_view w) {
  std::vector<Piece> out;
  size_t pos = 0;
  const size_t n = w.size();
  while (pos < n) {
    const char32_t c = w[pos];
    size_t end = pos;
    if (pos == 0 && is_apos(c)) {  // ^['‘’]+
      end = pos;
      while (end < n && is_apos(w[end])) ++end;
    } else if (is_upper_letter(c) && pos + 2 < n && is_upper_letter(w[pos + 1]) && is_lower_letter(w[pos + 2])) {
      end = pos + 1;  // \p{Lu}(?=\p{Lu}\p{Ll})
    } else if ((end = match_number(w, pos)) != pos) {
    } else if (c == U'-' || c == U'_') {
      end = pos;
      while (end < n && (w[end] == U'-' || w[end] == U'_')) ++end;
    } else if (is_apos(c) && pos + 1 < n && is_apos(w[pos + 1])) {
      end = pos;
      while (end < n && is_apos(w[end])) ++end;
    } else if ((end = match_camel(w, pos)) != pos) {
    } else if ((end = match_word(w, pos)) != pos) {
    } else if (!(c == U'-' || c == U'_' || is_letter(c) || is_apos(c) || is_decimal_digit(c))) {
      end = pos + 1;
    } else if (is_apos(c)) {  // ['‘’]+$
      size_t e = pos;
      while (e < n && is_apos(w[e])) ++e;
      end = e == n ? n : pos;
    }
    if (end == pos) {
      ++pos;  // nothing matches here: the character is skipped, as findall skips it
      continue;
    }
    out.push_back({pos, end});
    pos = end;
  }
  return out;
}

}  // namespace kokoro::en
