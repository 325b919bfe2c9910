// misaki's English lexicon rules over its gold and silver dictionaries (<assets>/lexicons/
// {us,gb}_{gold,silver}.json): lookup with part-of-speech variants, capitalisation, spelling out of
// acronyms, -s/-ed/-ing suffixes on known stems, special function words, symbols and numbers.
//
// The data is loaded once per (directory, accent) and shared by every Frontend in the process. It is read from
// the compact binary form (lexicon_binary.h), mmapped; the JSON is only parsed when no up-to-date binary
// form exists (then it is compiled once into a cache directory, see LexiconData::load).
#pragma once
#include <memory>
#include <optional>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "frontend/en_token.h"

namespace kokoro::en {

struct LexiconEntry {
  // A plain entry has one reading; a heteronym has readings per tag, "DEFAULT" always among them
  // (a reading may be absent: such a tag spells the word out).
  std::optional<std::u32string> plain;
  std::vector<std::pair<std::string, std::optional<std::u32string>>> by_tag;
  bool is_heteronym() const { return !by_tag.empty(); }
};

class BinaryLexicon;

struct LexiconData {
  bool british = false;
  std::shared_ptr<const BinaryLexicon> dicts;  // gold and silver, grown with misaki's capitalised variants
  std::string origin;                          // the file (or JSON) the dictionaries came from

  // The lexicons of <dir> (<dir>/{us,gb}_{gold,silver}.json): the first binary form that matches those
  // JSON files (or, without JSON, exists) among <dir>/{us,gb}.kolex, the build tree's and the user cache's;
  // otherwise the JSON is compiled (slow, logged) and the result cached for the next start. A damaged
  // binary lexicon beside the JSON or in the build tree is an Error naming it.
  static std::shared_ptr<const LexiconData> load(const std::string& lexicon_dir, bool british);
  static std::shared_ptr<const LexiconData> from_binary(std::shared_ptr<const BinaryLexicon> dicts,
                                                        std::string origin);
};

struct Reading {
  std::optional<std::u32string> phonemes;
  int rating = 0;
  bool found() const { return phonemes.has_value(); }
};

class Lexicon {
 public:
  explicit Lexicon(std::shared_ptr<const LexiconData> data) : data_(std::move(data)) {}

  // Phonemes for one token (or a merged run of sub-tokens), given what the words to its right decided.
  Reading operator()(const Token& tk, const TokenContext& ctx) const;
  // Plain dictionary lookup (used for number words, symbols, currencies).
  Reading lookup(std::u32string word, std::optional<std::string> tag, std::optional<double> stress,
                 const TokenContext* ctx) const;
  bool british() const { return data_->british; }
  bool in_gold(const std::u32string& w) const;
  bool is_heteronym(const std::u32string& w) const;

 private:
  Reading get_word(std::u32string word, const std::string& tag, std::optional<double> stress,
                   const TokenContext& ctx) const;
  Reading special_case(const std::u32string& word, const std::string& tag, std::optional<double> stress,
                       const TokenContext& ctx) const;
  Reading spell_letters(const std::u32string& word) const;  // misaki's get_NNP
  bool is_known(const std::u32string& word) const;
  Reading stem_s(const std::u32string& word, const std::string& tag, std::optional<double> stress,
                 const TokenContext* ctx) const;
  Reading stem_ed(const std::u32string& word, const std::string& tag, std::optional<double> stress,
                  const TokenContext* ctx) const;
  Reading stem_ing(const std::u32string& word, const std::string& tag, std::optional<double> stress,
                   const TokenContext* ctx) const;
  Reading get_number(std::u32string word, char32_t currency, bool is_head) const;
  std::u32string append_currency(std::u32string ps, char32_t currency) const;

 public:
  // Suffix rules on a stem's phonemes (exposed for numbers: "1990s", "80ed").
  std::optional<std::u32string> add_s(const std::optional<std::u32string>& stem) const;
  std::optional<std::u32string> add_ed(const std::optional<std::u32string>& stem) const;
  std::optional<std::u32string> add_ing(const std::optional<std::u32string>& stem) const;
  static bool is_number(const std::u32string& word, bool is_head);

 private:
  std::shared_ptr<const LexiconData> data_;
};

// misaki's reduction of a Penn tag to the classes heteronyms are keyed by (VERB, NOUN, ADV, ADJ).
std::string parent_tag(const std::string& tag);

}  // namespace kokoro::en
