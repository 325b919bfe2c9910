// The Mandarin dictionary file (zh.kozh): what misaki's legacy zh G2P reads through jieba and pypinyin,
// compiled once at fetch time (kokoro-zhdict, scripts/fetch-assets) from the jieba and pypinyin PyPI
// archives and mmapped at run time, so start-up costs a few page faults and only the pages lookups touch
// become resident.
//
//   words    jieba's prefix dictionary (dict.txt): word -> frequency, and the total of all frequencies
//   hmm      jieba finalseg's BMES model for unknown words: start, transition and per-character emission
//            log probabilities
//   chars    pypinyin's first reading of each character (pinyin_dict.json), numbered ("zhong1")
//   phrases  pypinyin's phrase readings (phrases_dict.json), numbered and space separated
//
// Format (little-endian): a 128-byte header (magic "KOKOZHD1", version, file size, jieba's total, start and
// transition tables, then count and offset of each record array, pool offset and size), record arrays
// sorted by key, and a pool of UTF-8 keys and values. Every offset is bounds-checked when it is read, so
// a damaged file gives wrong readings or an Error naming it, never a crash.
#pragma once
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace kokoro::zh {

// jieba finalseg's MIN_FLOAT: the log probability of what its HMM tables lack.
constexpr double kMinFloat = -3.14e100;

struct DictSources {
  std::string jieba_dict;   // jieba/dict.txt
  std::string prob_start;   // jieba/finalseg/prob_start.py
  std::string prob_trans;   // jieba/finalseg/prob_trans.py
  std::string prob_emit;    // jieba/finalseg/prob_emit.py
  std::string pinyin_json;  // pypinyin/pinyin_dict.json
  std::string phrases_json; // pypinyin/phrases_dict.json
};

// Compiles the sources (throws kokoro::Error naming a file it cannot read or parse).
std::vector<uint8_t> compile_dict(const DictSources& sources);
void write_dict_file(const std::string& path, const std::vector<uint8_t>& image);

// Where the dictionary is looked for: $KOKORO_ZH_DICT, <assets>/zh.kozh, then the build tree's
// lexicons/zh.kozh. Throws kokoro::Error listing them when none exists.
std::string find_dict_file(const std::string& assets_dir);

enum class Found { no, prefix, word };  // absent; only a prefix of longer keys; a key

class Dict {
 public:
  static std::shared_ptr<const Dict> open(const std::string& path);
  ~Dict();
  Dict(const Dict&) = delete;
  Dict& operator=(const Dict&) = delete;

  // jieba: `word` (UTF-8) as a dictionary word (freq set, may be 0) or a prefix of one.
  Found word(std::string_view word, uint32_t& freq) const;
  double log_total() const { return log_total_; }
  // HMM log probabilities, states in the order B, E, M, S.
  double start(int state) const { return start_[state]; }
  double trans(int from, int to) const { return trans_[from][to]; }
  // Emission log probabilities of a character for B, E, M, S; false when it has none.
  bool emit(char32_t c, double out[4]) const;

  // pypinyin: a character's first reading ("" when it has none) and a phrase's readings.
  std::string_view reading(char32_t c) const;
  Found phrase(std::string_view phrase, std::string_view& readings) const;

  size_t mapped_bytes() const { return size_; }

 private:
  Dict() = default;
  std::string_view pool_string(uint32_t offset, uint32_t length) const;
  template <class Rec>
  const Rec* records(uint32_t index) const;
  std::string path_;
  const uint8_t* base_ = nullptr;
  size_t size_ = 0;
  double log_total_ = 0;
  double start_[4]{};
  double trans_[4][4]{};
  uint32_t n_words_ = 0, words_at_ = 0, n_phrases_ = 0, phrases_at_ = 0, n_chars_ = 0, chars_at_ = 0,
           n_emit_ = 0, emit_at_ = 0, pool_at_ = 0, pool_size_ = 0;
};

}  // namespace kokoro::zh
