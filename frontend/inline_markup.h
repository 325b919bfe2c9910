// misaki's inline markup in English text, as other Kokoro front ends accept it:
//   [Kokoro](/kˈOkəɹO/)   the words in brackets are spoken as the phonemes between the slashes
//   [really](+2), [the](-1), [a](0.5)   the words' stress is raised or lowered (misaki's stress levels)
// Anything else in the parentheses is not markup for misaki either: the bracketed words are read and the
// parenthesised part is dropped, as misaki does. The brackets and parentheses are never spoken; offsets of
// the bracketed words still refer to the caller's text.
#pragma once
#include <optional>
#include <string>
#include <vector>

#include "frontend/en_token.h"
#include "frontend/utf8.h"

namespace kokoro::en {

struct Markup {
  uint32_t begin = 0, end = 0;              // bytes of the bracketed words in the caller's text
  std::optional<std::u32string> phonemes;   // "/.../"
  std::optional<double> stress;             // "+1", "-0.5", ...
};

// The line without the markup's brackets and parenthesised parts; `marks` gets one entry per markup.
std::vector<utf8::CodePoint> strip_markup(const std::vector<utf8::CodePoint>& line, std::vector<Markup>& marks);

// Gives the tokens inside each markup its phonemes (the tokens become one word) or stress.
void apply_markup(std::vector<Token>& tokens, const std::vector<Markup>& marks);

}  // namespace kokoro::en
