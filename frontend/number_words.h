// English number names, as the num2words package spells them for misaki ("and" left out, hyphenated
// tens split into two words): the words are looked up in the lexicon one by one afterwards.
//   cardinal("1234")  -> one thousand two hundred thirty four
//   ordinal("21")     -> twenty first          year("1905") -> nineteen oh five
//   decimal("3.14")   -> three point one four  (integer-valued decimals such as "2.0" read as "two")
// Inputs are strings of ASCII digits (no sign, no separators). Numbers of more than kMaxNamedDigits digits
// have no names here; callers read them digit by digit instead.
#pragma once
#include <string>
#include <string_view>
#include <vector>

namespace kokoro::en {

inline constexpr size_t kMaxNamedDigits = 36;  // up to "decillion"

using Words = std::vector<std::string>;

Words cardinal_words(std::string_view digits);
Words ordinal_words(std::string_view digits);
Words year_words(std::string_view digits);
// "int.frac" where either part may be empty; trailing zeros of the fraction are dropped as Python's
// float repr drops them.
Words decimal_words(std::string_view int_part, std::string_view frac_part);
Words digit_words(std::string_view digits);  // "one two three"

}  // namespace kokoro::en
