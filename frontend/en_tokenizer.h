// Splits a line of English into tokens the way spaCy's English tokenizer (which misaki runs first) does
// for everything that changes the phonemes: punctuation at either end of a word is its own token,
// so are ellipses, commas and periods between letters, hyphens and colons between words; abbreviations
// such as "Dr.", "e.g." and "U.S." keep their periods; URLs and e-mail addresses are expanded into words
// ("dot", "slash", "at"). Contractions stay whole ("don't"): misaki merges spaCy's pieces back anyway.
// Tokens carry byte ranges into the caller's text; tags are filled in by en_tagger.
#pragma once
#include <vector>

#include "frontend/en_token.h"
#include "frontend/utf8.h"

namespace kokoro::en {

// `line` is one line of the input (no newlines), decoded; offsets in it are the caller's.
std::vector<Token> tokenize_line(const std::vector<utf8::CodePoint>& line);

}  // namespace kokoro::en
