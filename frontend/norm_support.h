// Shared pieces of the English normalisers (norm_*.cpp, driven by en_normalize.h): matching tokens by
// their ASCII text, reading written numbers as misaki would, and replacing a run of tokens by the words
// that are said for it.
#pragma once
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "frontend/en_token.h"
#include "frontend/number_words.h"

namespace kokoro::en::norm {

// The token's text in ASCII; any other character becomes '\x7f' so that it never matches a pattern.
std::string ascii(const Token& t);
std::string ascii(std::u32string_view s);
// Not produced or claimed by an earlier rule (no alias, no phonemes, no group).
bool is_free(const Token& t);
// Token i exists, is free and its ASCII text is one of `options` (exact, case-sensitive).
bool is_one_of(const std::vector<Token>& toks, size_t i, std::initializer_list<std::string_view> options);
// Tokens i and i+1 are written together (no space between).
inline bool joined(const std::vector<Token>& toks, size_t i) { return i + 1 < toks.size() && !toks[i].space_after; }
// A word ending in "." may come as one token ("Jan.") or as the word and a "." token; returns how many
// tokens the abbreviation `word` + "." takes at i (0: not there). `dot_optional`: "Jan" alone counts too.
size_t abbreviation_at(const std::vector<Token>& toks, size_t i, std::string_view word, bool dot_optional);

bool all_digits(std::string_view s);
// Value of 1..9 ASCII digits; nullopt otherwise.
std::optional<long> int_value(std::string_view s);
// "12", "1,234", "2.5", ".5", "-3": a number as misaki's number rule reads it alone.
bool is_plain_number(std::string_view s);
// Words for such a number as misaki reads it alone: four digits are a year ("2024" -> twenty twenty
// four), decimals say "point" and each digit, commas group thousands, a leading "-" is "minus".
Words number_words(std::string_view s);
// True when the number takes the singular ("1 kilometer", "-1 degree"; "1.0" and "0.5" are plural).
bool is_singular(std::string_view s);
// Digits one by one; zero is "oh" or "zero".
Words digits_spoken(std::string_view digits, bool zero_as_oh);
void append(Words& out, const Words& more);
Words split_words(std::string_view text);  // "miles per hour" -> {miles, per, hour}

// Replaces tokens [b, e) with one token per word (the word "," is a short pause). The new tokens share
// the span's byte range and a group id, so that G2P merges them back into one spoken word. Returns the
// index after the inserted tokens. Capitalised words keep their case ("March", "Saint").
size_t replace(std::vector<Token>& toks, size_t b, size_t e, const Words& words);
// Reads token i as `words`, spaced from its neighbours (e.g. "-" between numbers read "to").
void read_as(std::vector<Token>& toks, size_t i, std::string_view words);

}  // namespace kokoro::en::norm
