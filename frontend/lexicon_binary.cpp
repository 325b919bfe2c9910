#include "frontend/lexicon_binary.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <nlohmann/json.hpp>

#include "core/error.h"
#include "core/verified_files.h"
#include "frontend/unicode_text.h"
#include "frontend/utf8.h"

namespace kokoro::en {

namespace {

constexpr size_t kHeaderSize = 96;
constexpr off_t kRecordFrom = 1 << 20;  // bytes: smaller files are checked at every open, never recorded
constexpr size_t kRecordSize = 12;
constexpr uint8_t kPlain = 0, kHeteronym = 1;

template <typename T>
T read_le(const uint8_t* p) {
  T v;
  std::memcpy(&v, p, sizeof(T));  // x86-64 only: little-endian host (as core/model_file.cpp)
  return v;
}

template <typename T>
void put(std::vector<uint8_t>& out, T v) {
  const auto* p = reinterpret_cast<const uint8_t*>(&v);
  out.insert(out.end(), p, p + sizeof(T));
}

template <typename T>
void put_at(std::vector<uint8_t>& out, size_t at, T v) {
  std::memcpy(out.data() + at, &v, sizeof(T));
}

// 64-bit multiply-xorshift over 8-byte words: ~GB/s, enough to tell a damaged or different file.
struct Hasher {
  uint64_t h = 0x9e3779b97f4a7c15ull;
  uint8_t tail[8] = {};
  size_t tail_n = 0;
  uint64_t total = 0;
  void mix(uint64_t w) {
    h ^= w;
    h *= 0xff51afd7ed558ccdull;
    h ^= h >> 32;
  }
  void update(const uint8_t* p, size_t n) {
    total += n;
    while (tail_n > 0 && tail_n < 8 && n > 0) {
      tail[tail_n++] = *p++;
      --n;
    }
    if (tail_n == 8) {
      mix(read_le<uint64_t>(tail));
      tail_n = 0;
    }
    for (; n >= 8; p += 8, n -= 8) mix(read_le<uint64_t>(p));
    while (n > 0) {
      tail[tail_n++] = *p++;
      --n;
    }
  }
  uint64_t final() {
    uint64_t w = 0;
    std::memcpy(&w, tail, tail_n);
    mix(w);
    mix(total);
    return h;
  }
};

uint64_t hash_bytes(const uint8_t* p, size_t n) {
  Hasher h;
  h.update(p, n);
  return h.final();
}

LexiconEntry parse_entry(const nlohmann::json& v, const std::string& file, const std::string& key) {
  LexiconEntry e;
  if (v.is_string()) {
    e.plain = utf8::to_u32(v.get<std::string>());
  } else if (v.is_object()) {
    bool has_default = false;
    for (const auto& [tag, ps] : v.items()) {
      has_default |= tag == "DEFAULT";
      if (ps.is_null()) {
        e.by_tag.emplace_back(tag, std::nullopt);
      } else if (ps.is_string()) {
        e.by_tag.emplace_back(tag, utf8::to_u32(ps.get<std::string>()));
      } else {
        throw Error(file + ": entry '" + key + "' has a non-string reading for tag " + tag);
      }
    }
    if (!has_default) throw Error(file + ": heteronym '" + key + "' has no DEFAULT reading");
  } else {
    throw Error(file + ": entry '" + key + "' is neither a string nor an object");
  }
  return e;
}

void put_string(std::vector<uint8_t>& out, const std::string& s, size_t max, const std::string& what) {
  if (s.size() > max) throw Error("lexicon " + what + " is too long for the binary form: " + s);
  if (max <= 0xff)
    put<uint8_t>(out, static_cast<uint8_t>(s.size()));
  else
    put<uint16_t>(out, static_cast<uint16_t>(s.size()));
  out.insert(out.end(), s.begin(), s.end());
}

void put_value(std::vector<uint8_t>& pool, const LexiconEntry& e) {
  if (!e.is_heteronym()) {
    pool.push_back(kPlain);
    put_string(pool, utf8::encode(e.plain.value_or(U"")), 0xffff, "reading");
    return;
  }
  if (e.by_tag.size() > 0xff) throw Error("lexicon heteronym with more than 255 tags");
  pool.push_back(kHeteronym);
  put<uint8_t>(pool, static_cast<uint8_t>(e.by_tag.size()));
  for (const auto& [tag, reading] : e.by_tag) {
    put_string(pool, tag, 0xff, "tag");
    put<uint8_t>(pool, reading ? 1 : 0);
    put_string(pool, reading ? utf8::encode(*reading) : std::string(), 0xffff, "reading");
  }
}

}  // namespace

uint64_t hash_file(const std::string& path, uint64_t* size) {
  // A file hashed before and unchanged since (core/verified_files.h) is not read again. Small files are
  // cheap to hash and not recorded.
  struct stat st {};
  std::string identity;
  if (::stat(path.c_str(), &st) == 0 && st.st_size >= kRecordFrom) {
    identity = file_identity(st, "lexicon json hash");
    const auto note = verified_note(path, identity);
    if (note && note->size() == 16 && note->find_first_not_of("0123456789abcdef") == std::string::npos) {
      if (size) *size = static_cast<uint64_t>(st.st_size);
      return std::stoull(*note, nullptr, 16);
    }
  }
  const uint64_t hash = hash_file_contents(path, size);
  if (!identity.empty()) {
    char hex[17];
    std::snprintf(hex, sizeof hex, "%016llx", static_cast<unsigned long long>(hash));
    record_verified(path, identity, hex);
  }
  return hash;
}

uint64_t hash_file_contents(const std::string& path, uint64_t* size) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw Error("cannot open lexicon " + path);
  Hasher h;
  std::vector<uint8_t> buf(1 << 20);
  while (in) {
    in.read(reinterpret_cast<char*>(buf.data()), static_cast<std::streamsize>(buf.size()));
    h.update(buf.data(), static_cast<size_t>(in.gcount()));
  }
  if (in.bad()) throw Error("cannot read lexicon " + path);
  if (size) *size = h.total;
  return h.final();
}

LexiconSource lexicon_source(const std::string& gold_json, const std::string& silver_json) {
  LexiconSource s;
  s.gold_hash = hash_file(gold_json, &s.gold_size);
  s.silver_hash = hash_file(silver_json, &s.silver_size);
  return s;
}

// misaki's grow_dictionary: "word" also answers for "Word", and "Word" for "word"; real entries win.
ParsedDict parse_lexicon_json(const std::string& path, size_t& max_len) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw Error("cannot open lexicon " + path);
  nlohmann::json j;
  try {
    j = nlohmann::json::parse(in);
  } catch (const std::exception& e) {
    throw Error("lexicon " + path + " is not valid JSON: " + e.what());
  }
  if (!j.is_object()) throw Error("lexicon " + path + " is not a JSON object");
  ParsedDict d;
  for (const auto& [k, v] : j.items()) {
    std::u32string key = utf8::to_u32(k);
    max_len = std::max(max_len, key.size());
    d.emplace(std::move(key), parse_entry(v, path, k));
  }
  std::vector<std::pair<std::u32string, LexiconEntry>> grown;
  for (const auto& [k, v] : d) {
    if (k.size() < 2) continue;
    const std::u32string lower = text::lower(k);
    if (k == lower) {
      std::u32string cap = text::capitalize(k);
      if (cap != k) grown.emplace_back(std::move(cap), v);
    } else if (k == text::capitalize(lower)) {
      grown.emplace_back(lower, v);
    }
  }
  for (auto& [k, v] : grown) d.emplace(std::move(k), std::move(v));  // emplace never overwrites
  return d;
}

std::vector<uint8_t> compile_lexicon(const ParsedDict& gold, const ParsedDict& silver, bool british,
                                     size_t max_key_length, const LexiconSource& source) {
  const ParsedDict* dicts[2] = {&gold, &silver};
  std::vector<uint8_t> pool;
  std::map<std::vector<uint8_t>, uint32_t> value_offsets;  // equal values are stored once
  std::vector<uint8_t> records[2];
  for (int d = 0; d < 2; ++d) {
    // Keys ordered by their UTF-8 bytes, which is code point order, i.e. the map's order.
    std::vector<std::pair<std::string, const LexiconEntry*>> keys;
    for (const auto& [k, v] : *dicts[d]) keys.emplace_back(utf8::encode(k), &v);
    if (!std::is_sorted(keys.begin(), keys.end(), [](const auto& a, const auto& b) { return a.first < b.first; }))
      throw Error("internal error: lexicon keys out of byte order");
    for (const auto& [key, entry] : keys) {
      if (key.size() > 0xffff) throw Error("lexicon key too long for the binary form: " + key);
      const auto key_off = static_cast<uint32_t>(pool.size());
      pool.insert(pool.end(), key.begin(), key.end());
      std::vector<uint8_t> value;
      put_value(value, *entry);
      const auto [it, fresh] = value_offsets.emplace(std::move(value), static_cast<uint32_t>(pool.size()));
      if (fresh) pool.insert(pool.end(), it->first.begin(), it->first.end());
      const uint32_t value_off = it->second;
      put<uint32_t>(records[d], key_off);
      put<uint16_t>(records[d], static_cast<uint16_t>(key.size()));
      put<uint16_t>(records[d], 0);
      put<uint32_t>(records[d], value_off);
    }
  }
  const uint64_t records_bytes = records[0].size() + records[1].size();
  const uint64_t total = kHeaderSize + records_bytes + pool.size();
  if (total > 0xffffffffull) throw Error("lexicon too large for the binary form");
  const auto pool_off = static_cast<uint32_t>(kHeaderSize + records_bytes);
  // Pool offsets in the records are relative to the pool: make them absolute.
  std::vector<uint8_t> out(kHeaderSize, 0);
  for (int d = 0; d < 2; ++d)
    for (size_t r = 0; r < records[d].size(); r += kRecordSize) {
      put_at<uint32_t>(records[d], r, read_le<uint32_t>(records[d].data() + r) + pool_off);
      put_at<uint32_t>(records[d], r + 8, read_le<uint32_t>(records[d].data() + r + 8) + pool_off);
    }
  out.insert(out.end(), records[0].begin(), records[0].end());
  out.insert(out.end(), records[1].begin(), records[1].end());
  out.insert(out.end(), pool.begin(), pool.end());
  std::memcpy(out.data(), kLexiconMagic, 8);
  put_at<uint32_t>(out, 8, kLexiconVersion);
  put_at<uint32_t>(out, 12, british ? 1u : 0u);
  put_at<uint64_t>(out, 16, total);
  put_at<uint32_t>(out, 32, static_cast<uint32_t>(max_key_length));
  put_at<uint64_t>(out, 40, source.gold_size);
  put_at<uint64_t>(out, 48, source.gold_hash);
  put_at<uint64_t>(out, 56, source.silver_size);
  put_at<uint64_t>(out, 64, source.silver_hash);
  put_at<uint32_t>(out, 72, static_cast<uint32_t>(gold.size()));
  put_at<uint32_t>(out, 76, static_cast<uint32_t>(kHeaderSize));
  put_at<uint32_t>(out, 80, static_cast<uint32_t>(silver.size()));
  put_at<uint32_t>(out, 84, static_cast<uint32_t>(kHeaderSize + records[0].size()));
  put_at<uint32_t>(out, 88, pool_off);
  put_at<uint32_t>(out, 92, static_cast<uint32_t>(pool.size()));
  put_at<uint64_t>(out, 24, hash_bytes(out.data() + kHeaderSize, out.size() - kHeaderSize));
  return out;
}

std::vector<uint8_t> compile_lexicon_dir(const std::string& lexicon_dir, bool british) {
  const std::string prefix = lexicon_dir + "/" + (british ? "gb" : "us");
  const std::string gold_path = prefix + "_gold.json", silver_path = prefix + "_silver.json";
  size_t max_len = 0;
  const ParsedDict gold = parse_lexicon_json(gold_path, max_len);
  const ParsedDict silver = parse_lexicon_json(silver_path, max_len);
  return compile_lexicon(gold, silver, british, max_len, lexicon_source(gold_path, silver_path));
}

void write_lexicon_file(const std::string& path, const std::vector<uint8_t>& image) {
  const std::string tmp = path + ".tmp" + std::to_string(::getpid());
  {
    std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
    if (!out) throw Error("cannot write " + tmp);
    out.write(reinterpret_cast<const char*>(image.data()), static_cast<std::streamsize>(image.size()));
    if (!out.flush()) {
      std::remove(tmp.c_str());
      throw Error("write failed: " + tmp);
    }
  }
  if (std::rename(tmp.c_str(), path.c_str()) != 0) {
    std::remove(tmp.c_str());
    throw Error("cannot rename " + tmp + " to " + path);
  }
}

// ---- reading ----

std::shared_ptr<const BinaryLexicon> BinaryLexicon::open(const std::string& path) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) throw Error("binary lexicon " + path + ": cannot open: " + std::strerror(errno));
  struct stat st {};
  if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    ::close(fd);
    throw Error("binary lexicon " + path + ": not a regular file");
  }
  std::shared_ptr<BinaryLexicon> lex(new BinaryLexicon());
  lex->name_ = path;
  lex->size_ = static_cast<size_t>(st.st_size);
  if (lex->size_ < kHeaderSize) {
    ::close(fd);
    lex->corrupt("truncated: " + std::to_string(lex->size_) + " bytes is smaller than the " +
                 std::to_string(kHeaderSize) + "-byte header");
  }
  // The checksum is computed from read() rather than through the mapping, so that checking the whole
  // file does not leave all of it resident: only the pages lookups touch are. A file that passed before
  // and is unchanged since (core/verified_files.h) is not read again.
  const std::string identity = file_identity(st, "kolex v" + std::to_string(kLexiconVersion) + " checksum");
  const bool recordable = st.st_size >= kRecordFrom;
  if (recordable && was_verified(path, identity)) {
    void* p = mmap(nullptr, lex->size_, PROT_READ, MAP_PRIVATE, fd, 0);
    ::close(fd);
    if (p == MAP_FAILED) throw Error("binary lexicon " + path + ": mmap failed: " + std::strerror(errno));
    lex->base_ = static_cast<const uint8_t*>(p);
    lex->mapped_ = true;
    lex->body_hash_ = read_le<uint64_t>(lex->base_ + 24);
    lex->validate();
    return lex;
  }
  Hasher h;
  std::vector<uint8_t> buf(1 << 20);
  for (size_t at = kHeaderSize; at < lex->size_;) {
    const ssize_t n = ::pread(fd, buf.data(), std::min(buf.size(), lex->size_ - at), static_cast<off_t>(at));
    if (n <= 0) {
      ::close(fd);
      throw Error("binary lexicon " + path + ": read failed: " + std::strerror(n < 0 ? errno : EIO));
    }
    h.update(buf.data(), static_cast<size_t>(n));
    at += static_cast<size_t>(n);
  }
  lex->body_hash_ = h.final();
  void* p = mmap(nullptr, lex->size_, PROT_READ, MAP_PRIVATE, fd, 0);
  ::close(fd);
  if (p == MAP_FAILED) throw Error("binary lexicon " + path + ": mmap failed: " + std::strerror(errno));
  lex->base_ = static_cast<const uint8_t*>(p);
  lex->mapped_ = true;
  lex->validate();
  if (recordable) record_verified(path, identity);
  return lex;
}

std::shared_ptr<const BinaryLexicon> BinaryLexicon::from_image(std::vector<uint8_t> image, std::string name) {
  std::shared_ptr<BinaryLexicon> lex(new BinaryLexicon());
  lex->name_ = std::move(name);
  lex->owned_ = std::move(image);
  lex->base_ = lex->owned_.data();
  lex->size_ = lex->owned_.size();
  if (lex->size_ < kHeaderSize)
    lex->corrupt("truncated: " + std::to_string(lex->size_) + " bytes is smaller than the header");
  lex->body_hash_ = hash_bytes(lex->base_ + kHeaderSize, lex->size_ - kHeaderSize);
  lex->validate();
  return lex;
}

BinaryLexicon::~BinaryLexicon() {
  if (mapped_) munmap(const_cast<uint8_t*>(base_), size_);
}

void BinaryLexicon::corrupt(const std::string& what) const {
  throw Error("binary lexicon " + name_ + ": " + what +
              " (rebuild it: kokoro-convert --lexicons DIR, or delete it to use the JSON lexicons)");
}

void BinaryLexicon::validate() {
  if (std::memcmp(base_, kLexiconMagic, 8) != 0) corrupt("wrong magic (not a kokoro-rt binary lexicon)");
  const uint32_t version = read_le<uint32_t>(base_ + 8);
  if (version != kLexiconVersion)
    corrupt("format version " + std::to_string(version) + ", this build reads version " +
            std::to_string(kLexiconVersion));
  const uint64_t expected = read_le<uint64_t>(base_ + 16);
  if (expected != size_)
    corrupt((size_ < expected ? "truncated: " : "wrong size: ") + std::to_string(size_) + " bytes, the header says " +
            std::to_string(expected));
  if (body_hash_ != read_le<uint64_t>(base_ + 24)) corrupt("checksum mismatch (the file is damaged)");
  british_ = (read_le<uint32_t>(base_ + 12) & 1u) != 0;
  max_key_length_ = read_le<uint32_t>(base_ + 32);
  source_ = {read_le<uint64_t>(base_ + 40), read_le<uint64_t>(base_ + 48), read_le<uint64_t>(base_ + 56),
             read_le<uint64_t>(base_ + 64)};
  for (int d = 0; d < 2; ++d) {
    dicts_[d].count = read_le<uint32_t>(base_ + 72 + 8 * d);
    dicts_[d].records = read_le<uint32_t>(base_ + 76 + 8 * d);
    if (dicts_[d].records < kHeaderSize ||
        uint64_t{dicts_[d].records} + uint64_t{dicts_[d].count} * kRecordSize > size_)
      corrupt("record table runs past the end of the file");
  }
  pool_ = read_le<uint32_t>(base_ + 88);
  pool_size_ = read_le<uint32_t>(base_ + 92);
  if (pool_ < kHeaderSize || uint64_t{pool_} + pool_size_ > size_) corrupt("string pool runs past the end of the file");
}

std::string_view BinaryLexicon::key_view(Dict d, size_t i) const {
  const uint8_t* rec = base_ + dicts_[d].records + i * kRecordSize;
  const uint32_t off = read_le<uint32_t>(rec);
  const uint16_t len = read_le<uint16_t>(rec + 4);
  if (off < pool_ || uint64_t{off} + len > uint64_t{pool_} + pool_size_) corrupt("key outside the string pool");
  return {reinterpret_cast<const char*>(base_ + off), len};
}

int64_t BinaryLexicon::find_index(Dict d, std::string_view key) const {
  size_t lo = 0, hi = dicts_[d].count;
  while (lo < hi) {
    const size_t mid = lo + (hi - lo) / 2;
    const int c = key_view(d, mid).compare(key);
    if (c == 0) return static_cast<int64_t>(mid);
    if (c < 0)
      lo = mid + 1;
    else
      hi = mid;
  }
  return -1;
}

LexiconEntry BinaryLexicon::decode_value(uint32_t offset) const {
  const uint64_t end = uint64_t{pool_} + pool_size_;
  uint64_t at = offset;
  auto need = [&](uint64_t n) {
    if (at < pool_ || at + n > end) corrupt("value outside the string pool");
  };
  auto u8 = [&] {
    need(1);
    return base_[at++];
  };
  auto u16 = [&] {
    need(2);
    const uint16_t v = read_le<uint16_t>(base_ + at);
    at += 2;
    return v;
  };
  auto bytes = [&](size_t n) {
    need(n);
    std::string_view s(reinterpret_cast<const char*>(base_ + at), n);
    at += n;
    return s;
  };
  LexiconEntry e;
  const uint8_t kind = u8();
  if (kind == kPlain) {
    const uint16_t n = u16();
    e.plain = utf8::to_u32(bytes(n));
  } else if (kind == kHeteronym) {
    const uint8_t tags = u8();
    for (uint8_t t = 0; t < tags; ++t) {
      const uint8_t tn = u8();
      std::string tag(bytes(tn));
      const bool has = u8() != 0;
      const uint16_t n = u16();
      const std::string_view reading = bytes(n);
      e.by_tag.emplace_back(std::move(tag), has ? std::optional<std::u32string>(utf8::to_u32(reading)) : std::nullopt);
    }
    if (e.by_tag.empty()) corrupt("heteronym without readings");
  } else {
    corrupt("unknown value kind " + std::to_string(kind));
  }
  return e;
}

std::optional<LexiconEntry> BinaryLexicon::find(Dict d, const std::u32string& word) const {
  if (word.size() > max_key_length_) return std::nullopt;
  const int64_t i = find_index(d, utf8::encode(word));
  if (i < 0) return std::nullopt;
  return decode_value(read_le<uint32_t>(base_ + dicts_[d].records + static_cast<size_t>(i) * kRecordSize + 8));
}

bool BinaryLexicon::contains(Dict d, const std::u32string& word) const {
  return word.size() <= max_key_length_ && find_index(d, utf8::encode(word)) >= 0;
}

std::u32string BinaryLexicon::key_at(Dict d, size_t i) const {
  if (i >= dicts_[d].count) throw Error("binary lexicon " + name_ + ": key index out of range");
  return utf8::to_u32(key_view(d, i));
}

}  // namespace kokoro::en
