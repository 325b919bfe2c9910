// A user lexicon for English: words the caller wants read their way, winning over the built-in
// dictionaries, the normalisers and the tagger. A file has one entry per line:
//
//   # comment (also after an entry)
//   Kokoro    /kˈOkəɹO/       phonemes between slashes, in Kokoro's symbols (see docs or kokoro-phonemize)
//   nginx     engine x         a respelling: the words are read by the normal rules instead
//   SQL       sequel
//   C++       C plus plus      a key may be several tokens written together ("C++", "Wi-Fi")
//
// Key and reading are separated by whitespace (the key has none). Case rules: a key with any capital
// letter matches only that exact spelling ("US" is not "us"); an all-lower-case key matches the word in
// any capitalisation ("nginx" matches "Nginx" and "NGINX"). An exact-case entry wins over a lower-case
// one. A respelling is read by the built-in rules only (entries do not apply inside respellings).
#pragma once
#include <memory>
#include <optional>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "frontend/en_token.h"

namespace kokoro::en {

class UserLexicon {
 public:
  // Reads `file` (if not empty) then `entries` (later entries win on the same key). Throws kokoro::Error
  // naming the file and line of a malformed entry, or a file that cannot be read.
  static std::shared_ptr<const UserLexicon> load(const std::string& file,
                                                 const std::vector<std::pair<std::string, std::string>>& entries);
  void add(const std::string& key, const std::string& reading, const std::string& where);
  bool empty() const { return exact_.empty() && any_case_.empty(); }
  size_t size() const { return exact_.size() + any_case_.size(); }

  // Replaces matching tokens of a line (before normalisation) with their readings.
  void apply(std::vector<Token>& tokens) const;

 private:
  struct Reading {
    std::optional<std::u32string> phonemes;
    std::vector<std::string> respelling;
  };
  const Reading* find(const std::u32string& written) const;
  std::unordered_map<std::u32string, Reading> exact_, any_case_;
  size_t longest_key_ = 0;  // in tokens is unknown; in code points, to bound matching
};

}  // namespace kokoro::en
