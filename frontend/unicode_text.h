// Character classes and case mapping on UTF-32 strings, with the meaning Python's str methods have
// (misaki's rules are written with them): is_alpha = every character a letter, lower/upper/capitalize
// per code point. Backed by ICU.
#pragma once
#include <string>
#include <string_view>

namespace kokoro::text {

bool is_letter(char32_t c);        // \p{L}
bool is_upper_letter(char32_t c);  // \p{Lu}
bool is_lower_letter(char32_t c);  // \p{Ll}
bool is_decimal_digit(char32_t c); // \d (Unicode Nd)
bool is_space(char32_t c);         // white space or a control/format character we treat as a gap
bool is_symbol_or_emoji(char32_t c);  // \p{So}, \p{Sk}, \p{Sm}, private use: pictographs and the like
inline bool is_ascii_digit(char32_t c) { return c >= U'0' && c <= U'9'; }
inline bool is_ascii_letter(char32_t c) { return (c >= U'a' && c <= U'z') || (c >= U'A' && c <= U'Z'); }

std::u32string lower(std::u32string_view s);
std::u32string upper(std::u32string_view s);
std::u32string capitalize(std::u32string_view s);  // first upper, rest lower (Python's str.capitalize)
bool is_alpha(std::u32string_view s);              // non-empty and all letters
bool is_all_ascii_digits(std::u32string_view s);   // non-empty and all 0-9
inline bool is_lower_form(std::u32string_view s) { return lower(s) == s; }
inline bool is_upper_form(std::u32string_view s) { return upper(s) == s; }
// NFKC normalization (misaki normalizes each word so); ASCII input is returned as is without ICU.
std::u32string nfkc(std::u32string_view s);

bool contains(std::u32string_view s, char32_t c);
bool contains(std::u32string_view s, std::u32string_view part);
bool ends_with(std::u32string_view s, std::u32string_view suffix);
bool starts_with(std::u32string_view s, std::u32string_view prefix);
void replace_all(std::u32string& s, std::u32string_view from, std::u32string_view to);

}  // namespace kokoro::text
