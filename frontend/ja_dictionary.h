// The Japanese G2P's data, fetched at setup time (scripts/fetch-assets) and never at run time:
//   <dir>/unidic-lite/   UniDic 2.1.2 for MeCab (PyPI unidic-lite 1.0.8's dicdir, the dictionary
//                        misaki's fugashi tagger falls back to); mapped by libmecab, so only the pages a
//                        lookup touches become resident
//   <dir>/ja_words.txt   misaki 0.9.4's list of words written as one (sorted, one per line), which joins
//                        MeCab's tokens into the words misaki speaks without a pause between them
// <dir>: $KOKORO_JA_DATA, else <data>/ja of an installed engine, else <models>/ja of the build tree.
#pragma once
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace MeCab {
class Model;
}

namespace kokoro::ja {

// The directory to use, or throws kokoro::Error listing what was tried and how to get the data.
std::string find_data_dir();

// Sorted word list, looked up by binary search.
class WordList {
 public:
  static WordList load(const std::string& path);  // throws kokoro::Error
  bool contains(std::string_view word) const;
  size_t longest() const { return longest_; }  // in code points
  size_t size() const { return lines_.size(); }

 private:
  std::string data_;
  std::vector<std::string_view> lines_;
  size_t longest_ = 0;
};

class Dictionary {
 public:
  explicit Dictionary(const std::string& dir);  // throws kokoro::Error naming the missing file
  ~Dictionary();
  MeCab::Model& model() const { return *model_; }
  const WordList& words() const { return words_; }

 private:
  std::unique_ptr<MeCab::Model> model_;
  WordList words_;
};

}  // namespace kokoro::ja
