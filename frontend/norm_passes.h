// The English normalisation passes, one per family of written forms (norm_*.cpp). Each finds its forms
// in a line's tokens and replaces them with the words people say (norm_support.h: replace), leaving
// everything else to misaki's rules. en_normalize.cpp runs them in order.
#pragma once
#include <vector>

#include "frontend/en_token.h"

namespace kokoro::en::norm {

struct Dialect {
  bool british = false;
};

void normalize_web(std::vector<Token>& toks, const Dialect& d);            // versions, IPs, #tags
void normalize_phone_numbers(std::vector<Token>& toks, const Dialect& d);  // 555-0142, +44 20 ...
void normalize_dates(std::vector<Token>& toks, const Dialect& d);          // 2024-03-15, July 4, 4 July
void normalize_times(std::vector<Token>& toks, const Dialect& d);          // 2:00 a.m., 14:00, 2pm
void normalize_money(std::vector<Token>& toks, const Dialect& d);          // $2.3M, ¥500, €5bn
void normalize_units(std::vector<Token>& toks, const Dialect& d);          // 5 km, 20°C, 60 W
void normalize_numbers(std::vector<Token>& toks, const Dialect& d);        // 1/3, 2 1/2, 10-20
void normalize_roman(std::vector<Token>& toks, const Dialect& d);          // World War II, Henry VIII
void normalize_abbreviations(std::vector<Token>& toks, const Dialect& d);  // St., Prof., Apt., No.
void normalize_math(std::vector<Token>& toks, const Dialect& d);           // 2^8, ≠
void normalize_emoji(std::vector<Token>& toks, const Dialect& d);          // 😀 -> grinning face
void normalize_temperatures(std::vector<Token>& toks, const Dialect& d);   // 98.6°F, 20 °C, -40 °F
void normalize_ratios(std::vector<Token>& toks, const Dialect& d);         // 16:9, 1:100 (not 10:30)

}  // namespace kokoro::en::norm
