// One token of English text on its way through G2P (misaki's MToken): the text, a part-of-speech tag
// (Penn Treebank names, as spaCy's tagger gives them; see en_tagger.h), and what G2P has decided so far.
#pragma once
#include <cstdint>
#include <optional>
#include <string>

namespace kokoro::en {

struct Token {
  std::u32string text;
  std::string tag;
  bool space_after = false;
  std::optional<std::u32string> phonemes;  // unset: not resolved yet; empty: silent
  // Byte range in the caller's text; merged tokens span all their parts.
  uint32_t begin = 0;
  uint32_t end = 0;

  // misaki's token attributes ("tk._")
  bool is_head = true;                   // first part of a word written without spaces
  std::optional<std::u32string> alias;   // read this instead of text (e.g. "2" between letters -> "to")
  std::optional<double> stress;          // stress level forced by markup or context
  char32_t currency = 0;                 // '$', '£' or '€' read after the number
  std::string num_flags;                 // markup flags for numbers
  bool prespace = false;                 // join with a space when parts are merged
  int rating = 0;                        // 5 markup, 4 gold, 3 silver/rule, 2 espeak, 1 guess
  // Normalisation (en_normalize.h): tokens written as one thing and read as several words ("5km" ->
  // "five kilometers") share a group id > 0 and the group's byte range; they are merged back into one
  // word after G2P so that word spans still cover what was written.
  uint32_t group = 0;
};

// A pause between words for the taggers' context rules: no token (the line's edge) or punctuation.
inline bool is_pause(const Token* t) {
  return !t || t->tag == "." || t->tag == "," || t->tag == ":" || t->tag == "``" || t->tag == "''" ||
         t->tag == "-LRB-" || t->tag == "-RRB-";
}

// What the words to the right have decided (G2P runs right to left).
struct TokenContext {
  std::optional<bool> future_vowel;  // next word starts with a vowel; unset at a pause or the end
  bool future_to = false;            // next word is "to"
};

}  // namespace kokoro::en
