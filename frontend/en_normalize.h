// Normalisation of written English before G2P: numbers in their many written forms, money, clock
// times, dates, telephone numbers, units, roman numerals, abbreviations, version numbers and IP
// addresses, hashtags and math symbols become the words people say for them (one pass per family,
// norm_*.cpp, each with its table in tests/data/normalize/). Forms misaki already reads well are left to
// it. Replaced tokens keep their byte ranges (norm_support.h), so word spans still point at the text.
#pragma once
#include <functional>
#include <string>
#include <vector>

#include "frontend/en_token.h"

namespace kokoro::en {

// Rewrites `tokens` (one line, from tokenize_line) in place.
void normalize_tokens(std::vector<Token>& tokens, bool british);

// Calls f on consecutive pieces of a line's tokens (a few hundred each, cut after sentence ends) and
// joins the results: passes that replace tokens stay linear in the length of the line.
void for_each_piece(std::vector<Token>& tokens, const std::function<void(std::vector<Token>&)>& f);

// The words a normalised line says, as text: aliases in place of what was written, spaces as the
// tokens have them ("Call 555-0142 at 2:00 a.m." -> "Call five five five, oh one four two at two a.m.").
std::string normalized_text(const std::vector<Token>& tokens);

}  // namespace kokoro::en
