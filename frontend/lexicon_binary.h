// The compact binary form of one accent's lexicons (<accent>.kolex): misaki's gold and silver
// dictionaries, already grown with their capitalisation variants, as sorted UTF-8 keys over a string pool.
// It is mmapped at run time and looked up by binary search, so opening it costs a few page faults instead of
// parsing 6 MB of JSON into hash maps (~400 ms, ~110 MB resident). Format (little-endian, see
// frontend/README.md "Binary lexicons"):
//
//   header (96 bytes)  magic "KOKOLEXB", version, flags (bit 0: British), file size, checksum of the
//                      body, longest key in code points, the size and content hash of each source JSON,
//                      per dictionary its record count and offset, the pool's offset and size
//   records            per dictionary, sorted by key bytes: {u32 key offset, u16 key bytes, u16 0,
//                      u32 value offset} (12 bytes)
//   pool               keys (UTF-8) and values: 0, u16 n, n bytes (plain reading) or
//                      1, u8 tags, per tag {u8 n, tag, u8 has reading, u16 n, n bytes}
//
// Every offset read is bounds-checked, so a damaged file is an Error naming it, never a crash.
#pragma once
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "frontend/lexicon.h"

namespace kokoro::en {

inline constexpr char kLexiconMagic[8] = {'K', 'O', 'K', 'O', 'L', 'E', 'X', 'B'};
inline constexpr uint32_t kLexiconVersion = 1;

// What a compiled lexicon was made from: each JSON's byte size and content hash. A compiled lexicon whose
// sources differ from the JSON beside it is stale.
struct LexiconSource {
  uint64_t gold_size = 0, gold_hash = 0, silver_size = 0, silver_hash = 0;
  bool operator==(const LexiconSource&) const = default;
};

// Hash of a file's bytes (64-bit, not cryptographic); throws naming the file if it cannot be read.
uint64_t hash_file_contents(const std::string& path, uint64_t* size = nullptr);
// The same, remembered per file version in the user cache (core/verified_files.h) for files of 1 MB or
// more, so that an unchanged JSON lexicon is not read at every start.
uint64_t hash_file(const std::string& path, uint64_t* size = nullptr);
LexiconSource lexicon_source(const std::string& gold_json, const std::string& silver_json);

// One dictionary parsed from misaki's JSON and grown with its capitalisation variants (misaki's
// grow_dictionary), ordered by key.
using ParsedDict = std::map<std::u32string, LexiconEntry>;
ParsedDict parse_lexicon_json(const std::string& path, size_t& max_key_length);

// The binary image of both dictionaries.
std::vector<uint8_t> compile_lexicon(const ParsedDict& gold, const ParsedDict& silver, bool british,
                                     size_t max_key_length, const LexiconSource& source);
// Parses <dir>/<us|gb>_{gold,silver}.json and compiles them.
std::vector<uint8_t> compile_lexicon_dir(const std::string& lexicon_dir, bool british);
// Writes an image to path via path.tmp + rename, so readers never see half a file.
void write_lexicon_file(const std::string& path, const std::vector<uint8_t>& image);

// A validated binary lexicon, in a read-only mapping or in memory.
class BinaryLexicon {
 public:
  // Maps and validates the file (size, magic, version, checksum, tables inside the file); throws an Error
  // naming it when it is missing, truncated, corrupt or of another version.
  static std::shared_ptr<const BinaryLexicon> open(const std::string& path);
  // Same checks over an image held in memory (the JSON fallback, tests); name is used in messages.
  static std::shared_ptr<const BinaryLexicon> from_image(std::vector<uint8_t> image, std::string name);
  ~BinaryLexicon();
  BinaryLexicon(const BinaryLexicon&) = delete;
  BinaryLexicon& operator=(const BinaryLexicon&) = delete;

  enum Dict { gold = 0, silver = 1 };
  std::optional<LexiconEntry> find(Dict d, const std::u32string& word) const;
  bool contains(Dict d, const std::u32string& word) const;
  size_t size(Dict d) const { return dicts_[d].count; }
  // The i-th key of a dictionary in key order (tests, tools).
  std::u32string key_at(Dict d, size_t i) const;

  bool british() const { return british_; }
  size_t max_key_length() const { return max_key_length_; }
  const LexiconSource& source() const { return source_; }
  const std::string& name() const { return name_; }
  size_t bytes() const { return size_; }

 private:
  BinaryLexicon() = default;
  void validate();
  [[noreturn]] void corrupt(const std::string& what) const;
  std::string_view key_view(Dict d, size_t i) const;
  LexiconEntry decode_value(uint32_t offset) const;
  int64_t find_index(Dict d, std::string_view key) const;

  struct DictTable {
    uint32_t count = 0;
    uint32_t records = 0;  // file offset of the first record
  };
  std::string name_;
  std::vector<uint8_t> owned_;  // the image when it is not mapped
  const uint8_t* base_ = nullptr;
  size_t size_ = 0;
  bool mapped_ = false;
  uint64_t body_hash_ = 0;  // of the bytes after the header, as read
  bool british_ = false;
  size_t max_key_length_ = 0;
  LexiconSource source_;
  DictTable dicts_[2];
  uint32_t pool_ = 0, pool_size_ = 0;
};

}  // namespace kokoro::en
