// English G2P for one line of text, following misaki's en.G2P: tokenize and tag, split tokens into
// pieces, read each word (or the longest run of pieces the lexicon knows) right to left so that "the",
// "to" and "a" can depend on the next word, fall back to espeak-ng for words no rule reads, then merge the
// pieces back into words. Result: tokens whose phonemes joined with their spaces form the line's phonemes.
#pragma once
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "frontend/en_token.h"
#include "frontend/lexicon.h"
#include "frontend/user_lexicon.h"
#include "frontend/utf8.h"

namespace kokoro::en {

// Phonemes for a word no lexicon rule reads, or nullopt. Receives the word's text as written.
using Fallback = std::function<std::optional<std::u32string>(const std::u32string&)>;

struct G2POptions {
  bool inline_markup = true;                 // misaki's "[word](/phonemes/)" (inline_markup.h)
  std::shared_ptr<const UserLexicon> user;   // wins over everything else; may be null
};

class G2P {
 public:
  G2P(std::shared_ptr<const LexiconData> lexicon, Fallback fallback, G2POptions options = {});

  // Tokens of one line, each with phonemes set (possibly empty for silent tokens).
  std::vector<Token> phonemize_line(const std::vector<utf8::CodePoint>& line) const;
  // The line's words after normalisation (en_normalize.h), as text: what phonemize_line will read.
  std::string normalize_line(const std::vector<utf8::CodePoint>& line) const;

  // Longest text handed to the lexicon or espeak as one word; longer letter runs are cut into pieces
  // of this many characters (no dictionary word is that long) so bad input stays cheap.
  static constexpr size_t kMaxWordLength = 48;
  // Longest run of pieces written without spaces that is resolved as one word; longer runs are resolved
  // in consecutive slices (misaki's merging is quadratic in the run length).
  static constexpr size_t kMaxGroupPieces = 24;

 private:
  using Group = std::vector<Token>;
  std::vector<Group> retokenize(std::vector<Token>& tokens) const;
  void resolve_group(Group& w, TokenContext& ctx) const;
  std::optional<std::u32string> fallback(const std::u32string& text) const;

  // Tokens of a line after markup, user lexicon and normalisation (before tagging).
  std::vector<Token> prepare_line(const std::vector<utf8::CodePoint>& line) const;

  Lexicon lexicon_;
  Fallback fallback_;
  G2POptions options_;
};

// misaki's merge_tokens: one token from consecutive pieces (text with inner spaces, tag of the most
// capitalised piece). With `join_phonemes`, phonemes are concatenated (a space before pieces marked
// prespace) and missing phonemes read as nothing.
Token merge_tokens(const std::vector<Token>& parts, size_t begin, size_t end, bool join_phonemes);

}  // namespace kokoro::en
