#include "frontend/unicode_text.h"

#include <unicode/normalizer2.h>
#include <unicode/uchar.h>
#include <unicode/unistr.h>

#include <algorithm>

namespace kokoro::text {

bool is_letter(char32_t c) {
  if (c < 0x80) return is_ascii_letter(c);
  return u_isalpha(static_cast<UChar32>(c));
}
bool is_upper_letter(char32_t c) {
  if (c < 0x80) return c >= U'A' && c <= U'Z';
  return u_charType(static_cast<UChar32>(c)) == U_UPPERCASE_LETTER;
}
bool is_lower_letter(char32_t c) {
  if (c < 0x80) return c >= U'a' && c <= U'z';
  return u_charType(static_cast<UChar32>(c)) == U_LOWERCASE_LETTER;
}
bool is_decimal_digit(char32_t c) {
  if (c < 0x80) return is_ascii_digit(c);
  return u_charType(static_cast<UChar32>(c)) == U_DECIMAL_DIGIT_NUMBER;
}
bool is_space(char32_t c) {
  if (c == U' ' || c == U'\t' || c == U'\n' || c == U'\r' || c == U'\f' || c == U'\v') return true;
  if (c < 0x20 || c == 0x7F) return true;  // other C0 controls: a gap, never a character to read
  if (c < 0x80) return false;
  const int8_t t = u_charType(static_cast<UChar32>(c));
  return u_isUWhiteSpace(static_cast<UChar32>(c)) || t == U_CONTROL_CHAR || t == U_FORMAT_CHAR ||
         t == U_LINE_SEPARATOR || t == U_PARAGRAPH_SEPARATOR || t == U_SPACE_SEPARATOR;
}
bool is_symbol_or_emoji(char32_t c) {
  if (c < 0x80) return false;
  const int8_t t = u_charType(static_cast<UChar32>(c));
  return t == U_OTHER_SYMBOL || t == U_MODIFIER_SYMBOL || t == U_PRIVATE_USE_CHAR || t == U_SURROGATE ||
         t == U_UNASSIGNED;
}

static char32_t lower1(char32_t c) {
  if (c < 0x80) return (c >= U'A' && c <= U'Z') ? c + 32 : c;
  return static_cast<char32_t>(u_tolower(static_cast<UChar32>(c)));
}
static char32_t upper1(char32_t c) {
  if (c < 0x80) return (c >= U'a' && c <= U'z') ? c - 32 : c;
  return static_cast<char32_t>(u_toupper(static_cast<UChar32>(c)));
}

std::u32string lower(std::u32string_view s) {
  std::u32string out(s);
  for (auto& c : out) c = lower1(c);
  return out;
}
std::u32string upper(std::u32string_view s) {
  std::u32string out(s);
  for (auto& c : out) c = upper1(c);
  return out;
}
std::u32string capitalize(std::u32string_view s) {
  std::u32string out = lower(s);
  if (!out.empty()) {
    const char32_t first = s[0];
    out[0] = first < 0x80 ? upper1(first) : static_cast<char32_t>(u_totitle(static_cast<UChar32>(first)));
  }
  return out;
}
bool is_alpha(std::u32string_view s) {
  return !s.empty() && std::all_of(s.begin(), s.end(), is_letter);
}
bool is_all_ascii_digits(std::u32string_view s) {
  return !s.empty() && std::all_of(s.begin(), s.end(), is_ascii_digit);
}

std::u32string nfkc(std::u32string_view s) {
  if (std::all_of(s.begin(), s.end(), [](char32_t c) { return c < 0x80; })) return std::u32string(s);
  UErrorCode status = U_ZERO_ERROR;
  const icu::Normalizer2* norm = icu::Normalizer2::getNFKCInstance(status);
  if (U_FAILURE(status)) return std::u32string(s);
  icu::UnicodeString in = icu::UnicodeString::fromUTF32(reinterpret_cast<const UChar32*>(s.data()),
                                                         static_cast<int32_t>(s.size()));
  icu::UnicodeString out = norm->normalize(in, status);
  if (U_FAILURE(status)) return std::u32string(s);
  std::u32string result(static_cast<size_t>(out.countChar32()), U'\0');
  UErrorCode st2 = U_ZERO_ERROR;
  out.toUTF32(reinterpret_cast<UChar32*>(result.data()), static_cast<int32_t>(result.size()), st2);
  return result;
}

bool contains(std::u32string_view s, char32_t c) { return s.find(c) != std::u32string_view::npos; }
bool contains(std::u32string_view s, std::u32string_view part) {
  return s.find(part) != std::u32string_view::npos;
}
bool ends_with(std::u32string_view s, std::u32string_view suffix) {
  return s.size() >= suffix.size() && s.substr(s.size() - suffix.size()) == suffix;
}
bool starts_with(std::u32string_view s, std::u32string_view prefix) {
  return s.size() >= prefix.size() && s.substr(0, prefix.size()) == prefix;
}
void replace_all(std::u32string& s, std::u32string_view from, std::u32string_view to) {
  if (from.empty()) return;
  size_t pos = 0;
  while ((pos = s.find(from, pos)) != std::u32string::npos) {
    s.replace(pos, from.size(), to);
    pos += to.size();
  }
}

}  // namespace kokoro::text
