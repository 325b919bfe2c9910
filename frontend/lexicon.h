// misaki's English lexicon rules over its gold and silver dictionaries (<assets>/lexicons/
// {us,gb}_{gold,silver}.json): lookup with part-of-speech variants, capitalisation, spelling out of
// acronyms, -s/-ed/-ing suffixes on known stems, special function words, symbols and numbers.
//
// The data is loaded once per (file, accent) and shared by every Frontend in the process.
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

struct LexiconData {
  bool british = false;
  std::unordered_map<std::u32string, LexiconEntry> gold;
  std::unordered_map<std::u32string, LexiconEntry> silver;
  size_t max_key_length = 0;  // in code points: longer words are never in the dictionaries
  // Loads <dir>/{us,gb}_{gold,silver}.json, adding misaki's capitalised/lower-case variants.
  static std::shared_ptr<const LexiconData> load(const std::string& lexicon_dir, bool british);
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
  bool in_gold(const std::u32string& w) const { return data_->gold.count(w) != 0; }
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
