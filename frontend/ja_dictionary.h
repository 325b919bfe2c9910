// The Japanese G2P's data, fetched at setup time (scripts/fetch-assets) and never at run time:
//   <dir>/unidic-lite/   UniDic 2.1.2 for MeCab (PyPI unidic-lite 1.0.8's dicdir, the dictionary
//                        misaki's fugashi tagger falls back to); mapped by libmecab, so only the pages a
//                        lookup touches become resident
//   <dir>/ja_words.txt   misaki 0.9.4's list of words written as one (sorted, one per line), which joins
//                        MeCab's tokens into the words misaki speaks without a pause between them
// <dir>: $KOKORO_JA_DATA, else <data>/ja of an installed engine, else <models>/ja of the build tree.
#pragma once
#include <atomic>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
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
  // Called after each line: every kReleaseEvery lines, drops the dictionary pages this process has mapped
  // in (they stay in the page cache; the next lookup maps them back with a minor fault). MeCab's files are
  // 260 MB and lookups touch pages all over them: without this a long Japanese session keeps ~110 MB of
  // them resident (310 sentences); with it, what kReleaseEvery lines touch. Releasing after every line
  // costs ~0.8 ms a line (the refaults); every 8 lines keeps the 310-sentence corpus at 29 MB resident
  // (+23 MB of dictionary pages) for ~0.1-0.3 ms a line. Safe while other threads look words up.
  void line_done() const;
  static constexpr unsigned kReleaseEvery = 8;

 private:
  std::unique_ptr<MeCab::Model> model_;
  WordList words_;
  std::vector<std::pair<void*, size_t>> mapped_;  // MeCab's mappings of the dictionary files
  mutable std::atomic<unsigned> lines_{0};
};

}  // namespace kokoro::ja
