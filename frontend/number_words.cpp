#include "frontend/number_words.h"

#include <array>

namespace kokoro::en {

namespace {

constexpr std::array<const char*, 20> kUnits = {
    "zero",    "one",     "two",       "three",    "four",     "five",    "six",
    "seven",   "eight",   "nine",      "ten",      "eleven",   "twelve",  "thirteen",
    "fourteen", "fifteen", "sixteen",  "seventeen", "eighteen", "nineteen"};
constexpr std::array<const char*, 10> kTens = {"",      "",      "twenty",  "thirty", "forty",
                                               "fifty", "sixty", "seventy", "eighty", "ninety"};
// Index k names 1000^k.
constexpr std::array<const char*, 12> kScales = {
    "",           "thousand",    "million",    "billion",   "trillion",  "quadrillion",
    "quintillion", "sextillion", "septillion", "octillion", "nonillion", "decillion"};

std::string_view strip_leading_zeros(std::string_view d) {
  while (d.size() > 1 && d.front() == '0') d.remove_prefix(1);
  return d;
}

void below_thousand(int n, Words& out) {
  if (n >= 100) {
    out.emplace_back(kUnits[n / 100]);
    out.emplace_back("hundred");
    n %= 100;
  }
  if (n >= 20) {
    out.emplace_back(kTens[n / 10]);
    if (n % 10) out.emplace_back(kUnits[n % 10]);
  } else if (n > 0) {
    out.emplace_back(kUnits[n]);
  }
}

}  // namespace

Words digit_words(std::string_view digits) {
  Words out;
  for (char c : digits) out.emplace_back(kUnits[c - '0']);
  return out;
}

Words cardinal_words(std::string_view digits) {
  digits = strip_leading_zeros(digits);
  if (digits.empty()) return {};
  if (digits.size() > kMaxNamedDigits) return digit_words(digits);
  if (digits == "0") return {"zero"};
  Words out;
  const size_t groups = (digits.size() + 2) / 3;
  size_t pos = 0;
  for (size_t g = groups; g-- > 0;) {
    const size_t len = digits.size() - pos - 3 * g;
    int value = 0;
    for (size_t i = 0; i < len; ++i) value = value * 10 + (digits[pos + i] - '0');
    pos += len;
    if (value == 0) continue;
    below_thousand(value, out);
    if (g > 0) out.emplace_back(kScales[g]);
  }
  return out;
}

Words ordinal_words(std::string_view digits) {
  Words out = cardinal_words(digits);
  if (out.empty()) return out;
  std::string& last = out.back();
  static const std::array<std::pair<const char*, const char*>, 12> irregular = {{
      {"one", "first"}, {"two", "second"}, {"three", "third"}, {"four", "fourth"}, {"five", "fifth"},
      {"six", "sixth"}, {"seven", "seventh"}, {"eight", "eighth"}, {"nine", "ninth"}, {"ten", "tenth"},
      {"eleven", "eleventh"}, {"twelve", "twelfth"}}};
  for (const auto& [card, ord] : irregular) {
    if (last == card) {
      last = ord;
      return out;
    }
  }
  if (last.back() == 'y') last = last.substr(0, last.size() - 1) + "ie";
  last += "th";
  return out;
}

Words year_words(std::string_view digits) {
  digits = strip_leading_zeros(digits);
  if (digits.size() > 4) return cardinal_words(digits);
  int val = 0;
  for (char c : digits) val = val * 10 + (c - '0');
  const int high = val / 100, low = val % 100;
  if (high == 0 || (high % 10 == 0 && low < 10) || high >= 100) return cardinal_words(digits);
  Words out = cardinal_words(std::to_string(high));
  if (low == 0) {
    out.emplace_back("hundred");
  } else if (low < 10) {
    out.emplace_back("oh");
    out.emplace_back(kUnits[low]);
  } else {
    Words l = cardinal_words(std::to_string(low));
    out.insert(out.end(), l.begin(), l.end());
  }
  return out;
}

Words decimal_words(std::string_view int_part, std::string_view frac_part) {
  while (!frac_part.empty() && frac_part.back() == '0') frac_part.remove_suffix(1);
  Words out = int_part.empty() ? Words{"zero"} : cardinal_words(int_part);
  if (frac_part.empty()) return out;
  out.emplace_back("point");
  for (char c : frac_part) out.emplace_back(kUnits[c - '0']);
  return out;
}

}  // namespace kokoro::en
