#include "frontend/zh_dict.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <nlohmann/json.hpp>

#include <array>
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>

#include "core/error.h"
#include "core/install_paths.h"
#include "frontend/utf8.h"
#include "frontend/zh_pinyin.h"

namespace kokoro::zh {

namespace {

constexpr char kMagic[8] = {'K', 'O', 'K', 'O', 'Z', 'H', 'D', '1'};
constexpr uint32_t kVersion = 1;
constexpr size_t kHeaderSize = 256;

struct WordRec { uint32_t key_off, key_len, freq; };
struct PhraseRec { uint32_t key_off, key_len, val_off, val_len; };
struct CharRec { uint32_t cp, val_off, val_len; };
struct EmitRec { uint32_t cp, pad; double p[4]; };

template <class T>
T read_at(const uint8_t* p) {
  T v;
  std::memcpy(&v, p, sizeof v);
  return v;
}

std::string read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw Error("Mandarin dictionary source " + path + ": cannot open");
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

int state_index(char s) {
  switch (s) {
    case 'B': return 0;
    case 'E': return 1;
    case 'M': return 2;
    case 'S': return 3;
    default: return -1;
  }
}

// A Python dict literal as jieba's finalseg files write it: P={'B': -0.26, ...} or
// P={'B': {'\u4e00': -3.65, ...}, ...}. Yields (outer key, inner key or "", value).
struct PyEntry {
  std::u32string outer, inner;
  double value;
};

std::vector<PyEntry> parse_py_dict(const std::string& path) {
  const std::string text = read_file(path);
  size_t i = text.find("P={");
  if (i == std::string::npos) throw Error("Mandarin dictionary source " + path + ": no P={...}");
  i += 3;
  std::vector<PyEntry> out;
  std::u32string keys[2];
  int depth = 1;
  auto fail = [&](const std::string& why) {
    throw Error("Mandarin dictionary source " + path + ": " + why + " at byte " + std::to_string(i));
  };
  while (i < text.size() && depth > 0) {
    const char c = text[i];
    if (c == '}') { --depth; ++i; continue; }
    if (c == '{') { ++depth; ++i; continue; }
    if (c != '\'' && c != '"') { ++i; continue; }
    // A quoted key, then ':' and a number or '{'.
    const char q = c;
    std::u32string key;
    ++i;
    while (i < text.size() && text[i] != q) {
      if (text[i] == '\\' && i + 1 < text.size() && (text[i + 1] == 'u' || text[i + 1] == 'U')) {
        const size_t n = text[i + 1] == 'u' ? 4 : 8;
        if (i + 2 + n > text.size()) fail("truncated escape");
        key.push_back(static_cast<char32_t>(std::strtoul(text.substr(i + 2, n).c_str(), nullptr, 16)));
        i += 2 + n;
      } else if (text[i] == '\\' && i + 1 < text.size()) {
        key.push_back(static_cast<unsigned char>(text[i + 1]));
        i += 2;
      } else {
        char32_t cp;
        i += utf8::decode_one(text, i, cp);
        key.push_back(cp);
      }
    }
    ++i;
    while (i < text.size() && (text[i] == ' ' || text[i] == ':' || text[i] == '\n')) ++i;
    if (i >= text.size()) fail("truncated");
    if (depth > 2) fail("nested too deep");
    keys[depth - 1] = key;
    if (text[i] == '{') continue;
    char* end = nullptr;
    const double v = std::strtod(text.c_str() + i, &end);
    if (end == text.c_str() + i) fail("expected a number");
    i = static_cast<size_t>(end - text.c_str());
    out.push_back({depth == 1 ? key : keys[0], depth == 1 ? U"" : key, v});
  }
  return out;
}

class PoolWriter {
 public:
  uint32_t add(std::string_view s) {
    const auto at = static_cast<uint32_t>(pool.size());
    pool.insert(pool.end(), s.begin(), s.end());
    return at;
  }
  std::vector<uint8_t> pool;
};

template <class T>
void put(std::vector<uint8_t>& out, const T& v) {
  const auto* p = reinterpret_cast<const uint8_t*>(&v);
  out.insert(out.end(), p, p + sizeof v);
}

// A reading list as pypinyin writes it ("zhōng,zhòng" or ["yī"]) -> the numbered first reading, "-" when
// it is not a syllable we know how to number.
std::string numbered_or_dash(std::string_view marked) {
  const std::string n = numbered_pinyin(utf8::to_u32(marked));
  return n.empty() ? "-" : n;
}

}  // namespace

std::vector<uint8_t> compile_dict(const DictSources& src) {
  // jieba words: the last line of a word sets its frequency; every line counts towards the total.
  std::map<std::string, uint32_t> words;
  double total = 0;
  {
    std::ifstream in(src.jieba_dict, std::ios::binary);
    if (!in) throw Error("Mandarin dictionary source " + src.jieba_dict + ": cannot open");
    std::string line;
    size_t lineno = 0;
    while (std::getline(in, line)) {
      ++lineno;
      while (!line.empty() && (line.back() == '\r' || line.back() == ' ' || line.back() == '\n')) line.pop_back();
      if (line.empty()) continue;
      const size_t sp = line.find(' ');
      if (sp == std::string::npos) throw Error(src.jieba_dict + ":" + std::to_string(lineno) + ": no frequency");
      const size_t sp2 = line.find(' ', sp + 1);
      const std::string freq = line.substr(sp + 1, sp2 == std::string::npos ? std::string::npos : sp2 - sp - 1);
      char* end = nullptr;
      const unsigned long f = std::strtoul(freq.c_str(), &end, 10);
      if (freq.empty() || *end) throw Error(src.jieba_dict + ":" + std::to_string(lineno) + ": bad frequency");
      words[line.substr(0, sp)] = static_cast<uint32_t>(f);
      total += static_cast<double>(f);
    }
  }
  double start[4], trans[4][4];
  for (double& s : start) s = kMinFloat;
  for (auto& row : trans)
    for (double& t : row) t = kMinFloat;
  for (const PyEntry& e : parse_py_dict(src.prob_start)) {
    const int s = e.outer.size() == 1 ? state_index(static_cast<char>(e.outer[0])) : -1;
    if (s < 0) throw Error(src.prob_start + ": unknown state");
    start[s] = e.value;
  }
  for (const PyEntry& e : parse_py_dict(src.prob_trans)) {
    const int a = e.outer.size() == 1 ? state_index(static_cast<char>(e.outer[0])) : -1;
    const int b = e.inner.size() == 1 ? state_index(static_cast<char>(e.inner[0])) : -1;
    if (a < 0 || b < 0) throw Error(src.prob_trans + ": unknown state");
    trans[a][b] = e.value;
  }
  std::map<char32_t, std::array<double, 4>> emit;
  for (const PyEntry& e : parse_py_dict(src.prob_emit)) {
    const int s = e.outer.size() == 1 ? state_index(static_cast<char>(e.outer[0])) : -1;
    if (s < 0 || e.inner.size() != 1) throw Error(src.prob_emit + ": unexpected entry");
    auto it = emit.find(e.inner[0]);
    if (it == emit.end()) it = emit.emplace(e.inner[0], std::array<double, 4>{kMinFloat, kMinFloat, kMinFloat, kMinFloat}).first;
    it->second[s] = e.value;
  }
  std::map<char32_t, std::string> chars;
  std::map<std::string, std::string> phrases;
  try {
    const auto pj = nlohmann::json::parse(read_file(src.pinyin_json));
    for (const auto& [k, v] : pj.items()) {
      const std::string all = v.get<std::string>();
      chars[static_cast<char32_t>(std::stoul(k))] = numbered_or_dash(all.substr(0, all.find(',')));
    }
    const auto ph = nlohmann::json::parse(read_file(src.phrases_json));
    for (const auto& [k, v] : ph.items()) {
      std::string r;
      for (const auto& syl : v) {
        if (!r.empty()) r += ' ';
        r += syl.empty() ? std::string("-") : numbered_or_dash(syl[0].get<std::string>());
      }
      phrases[k] = r;
    }
  } catch (const nlohmann::json::exception& e) {
    throw Error("Mandarin dictionary source (pypinyin JSON): " + std::string(e.what()));
  }

  PoolWriter pool;
  std::vector<uint8_t> recs_words, recs_phrases, recs_chars, recs_emit;
  for (const auto& [w, f] : words) put(recs_words, WordRec{pool.add(w), static_cast<uint32_t>(w.size()), f});
  for (const auto& [p, r] : phrases) {
    const uint32_t k = pool.add(p);
    const uint32_t v = pool.add(r);
    put(recs_phrases, PhraseRec{k, static_cast<uint32_t>(p.size()), v, static_cast<uint32_t>(r.size())});
  }
  for (const auto& [c, r] : chars) put(recs_chars, CharRec{static_cast<uint32_t>(c), pool.add(r), static_cast<uint32_t>(r.size())});
  for (const auto& [c, p] : emit) put(recs_emit, EmitRec{static_cast<uint32_t>(c), 0, {p[0], p[1], p[2], p[3]}});

  std::vector<uint8_t> out(kHeaderSize, 0);
  auto align8 = [&] { while (out.size() % 8) out.push_back(0); };
  const auto words_at = static_cast<uint32_t>(out.size());
  out.insert(out.end(), recs_words.begin(), recs_words.end());
  align8();
  const auto phrases_at = static_cast<uint32_t>(out.size());
  out.insert(out.end(), recs_phrases.begin(), recs_phrases.end());
  align8();
  const auto chars_at = static_cast<uint32_t>(out.size());
  out.insert(out.end(), recs_chars.begin(), recs_chars.end());
  align8();
  const auto emit_at = static_cast<uint32_t>(out.size());
  out.insert(out.end(), recs_emit.begin(), recs_emit.end());
  const auto pool_at = static_cast<uint32_t>(out.size());
  out.insert(out.end(), pool.pool.begin(), pool.pool.end());

  std::vector<uint8_t> h;
  h.insert(h.end(), kMagic, kMagic + 8);
  put(h, kVersion);
  put(h, uint32_t{0});
  put(h, static_cast<uint64_t>(out.size()));
  put(h, std::log(total));
  for (double s : start) put(h, s);
  for (auto& row : trans)
    for (double t : row) put(h, t);
  for (uint32_t v : {static_cast<uint32_t>(words.size()), words_at, static_cast<uint32_t>(phrases.size()), phrases_at,
                     static_cast<uint32_t>(chars.size()), chars_at, static_cast<uint32_t>(emit.size()), emit_at,
                     pool_at, static_cast<uint32_t>(pool.pool.size())})
    put(h, v);
  std::memcpy(out.data(), h.data(), h.size());
  return out;
}

void write_dict_file(const std::string& path, const std::vector<uint8_t>& image) {
  const std::string tmp = path + ".tmp";
  {
    std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
    if (!out) throw Error("cannot write " + tmp);
    out.write(reinterpret_cast<const char*>(image.data()), static_cast<std::streamsize>(image.size()));
    if (!out) throw Error("cannot write " + tmp);
  }
  std::filesystem::rename(tmp, path);
}

std::string find_dict_file(const std::string& assets_dir) {
  std::vector<std::string> candidates;
  if (const char* env = std::getenv("KOKORO_ZH_DICT"); env && *env) candidates.emplace_back(env);
  if (!assets_dir.empty()) candidates.push_back(assets_dir + "/zh.kozh");
  // Where a build tree keeps it (scripts/fetch-assets).
  if (const std::string built = build_tree().lexicons; !built.empty()) candidates.push_back(built + "/zh.kozh");
  std::string tried;
  for (const auto& c : candidates) {
    std::error_code ec;
    if (std::filesystem::is_regular_file(c, ec)) return c;
    tried += (tried.empty() ? "" : ", ") + c;
  }
  throw Error("no Mandarin dictionary (looked for " + tried +
              "); run scripts/fetch-assets, which builds it from the jieba and pypinyin archives");
}

std::shared_ptr<const Dict> Dict::open(const std::string& path) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) throw Error("Mandarin dictionary " + path + ": cannot open: " + std::strerror(errno));
  struct stat st {};
  if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) || static_cast<size_t>(st.st_size) < kHeaderSize) {
    ::close(fd);
    throw Error("Mandarin dictionary " + path + ": not a dictionary file (too small)");
  }
  void* p = mmap(nullptr, static_cast<size_t>(st.st_size), PROT_READ, MAP_PRIVATE, fd, 0);
  ::close(fd);
  if (p == MAP_FAILED) throw Error("Mandarin dictionary " + path + ": mmap failed: " + std::strerror(errno));
  std::shared_ptr<Dict> d(new Dict());
  d->path_ = path;
  d->base_ = static_cast<const uint8_t*>(p);
  d->size_ = static_cast<size_t>(st.st_size);
  const uint8_t* b = d->base_;
  if (std::memcmp(b, kMagic, 8) != 0 || read_at<uint32_t>(b + 8) != kVersion)
    throw Error("Mandarin dictionary " + path + ": wrong magic or version (rebuild it with scripts/fetch-assets)");
  if (read_at<uint64_t>(b + 16) != d->size_)
    throw Error("Mandarin dictionary " + path + ": truncated (rebuild it with scripts/fetch-assets)");
  size_t at = 24;
  d->log_total_ = read_at<double>(b + at), at += 8;
  for (double& s : d->start_) s = read_at<double>(b + at), at += 8;
  for (auto& row : d->trans_)
    for (double& t : row) t = read_at<double>(b + at), at += 8;
  uint32_t* fields[] = {&d->n_words_, &d->words_at_, &d->n_phrases_, &d->phrases_at_, &d->n_chars_,
                        &d->chars_at_, &d->n_emit_, &d->emit_at_, &d->pool_at_, &d->pool_size_};
  for (uint32_t* f : fields) *f = read_at<uint32_t>(b + at), at += 4;
  auto fits = [&](uint64_t off, uint64_t n, uint64_t rec) { return off >= kHeaderSize && off + n * rec <= d->size_; };
  if (!fits(d->words_at_, d->n_words_, sizeof(WordRec)) || !fits(d->phrases_at_, d->n_phrases_, sizeof(PhraseRec)) ||
      !fits(d->chars_at_, d->n_chars_, sizeof(CharRec)) || !fits(d->emit_at_, d->n_emit_, sizeof(EmitRec)) ||
      !fits(d->pool_at_, d->pool_size_, 1))
    throw Error("Mandarin dictionary " + path + ": damaged (a table lies outside the file)");
  return d;
}

Dict::~Dict() {
  if (base_) munmap(const_cast<uint8_t*>(base_), size_);
}

std::string_view Dict::pool_string(uint32_t offset, uint32_t length) const {
  if (static_cast<uint64_t>(offset) + length > pool_size_) return {};
  return {reinterpret_cast<const char*>(base_ + pool_at_ + offset), length};
}

namespace {

// Binary search over sorted keys: the first record whose key is >= `key`.
template <class KeyOf>
size_t lower_bound(size_t n, std::string_view key, KeyOf key_of) {
  size_t lo = 0, hi = n;
  while (lo < hi) {
    const size_t mid = (lo + hi) / 2;
    if (key_of(mid) < key) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

}  // namespace

Found Dict::word(std::string_view w, uint32_t& freq) const {
  auto key_of = [&](size_t i) {
    const auto r = read_at<WordRec>(base_ + words_at_ + i * sizeof(WordRec));
    return pool_string(r.key_off, r.key_len);
  };
  const size_t i = lower_bound(n_words_, w, key_of);
  if (i == n_words_) return Found::no;
  const std::string_view k = key_of(i);
  if (k == w) {
    freq = read_at<WordRec>(base_ + words_at_ + i * sizeof(WordRec)).freq;
    return Found::word;
  }
  freq = 0;
  return k.substr(0, w.size()) == w ? Found::prefix : Found::no;
}

Found Dict::phrase(std::string_view p, std::string_view& readings) const {
  auto key_of = [&](size_t i) {
    const auto r = read_at<PhraseRec>(base_ + phrases_at_ + i * sizeof(PhraseRec));
    return pool_string(r.key_off, r.key_len);
  };
  const size_t i = lower_bound(n_phrases_, p, key_of);
  if (i == n_phrases_) return Found::no;
  const std::string_view k = key_of(i);
  if (k == p) {
    const auto r = read_at<PhraseRec>(base_ + phrases_at_ + i * sizeof(PhraseRec));
    readings = pool_string(r.val_off, r.val_len);
    return Found::word;
  }
  return k.substr(0, p.size()) == p ? Found::prefix : Found::no;
}

std::string_view Dict::reading(char32_t c) const {
  size_t lo = 0, hi = n_chars_;
  while (lo < hi) {
    const size_t mid = (lo + hi) / 2;
    const auto r = read_at<CharRec>(base_ + chars_at_ + mid * sizeof(CharRec));
    if (r.cp < c) lo = mid + 1;
    else if (r.cp > c) hi = mid;
    else return pool_string(r.val_off, r.val_len);
  }
  return {};
}

bool Dict::emit(char32_t c, double out[4]) const {
  size_t lo = 0, hi = n_emit_;
  while (lo < hi) {
    const size_t mid = (lo + hi) / 2;
    const auto r = read_at<EmitRec>(base_ + emit_at_ + mid * sizeof(EmitRec));
    if (r.cp < c) lo = mid + 1;
    else if (r.cp > c) hi = mid;
    else {
      for (int s = 0; s < 4; ++s) out[s] = r.p[s];
      return true;
    }
  }
  return false;
}

}  // namespace kokoro::zh
