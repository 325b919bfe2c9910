#include "frontend/ja_dictionary.h"

#include <mecab.h>
#include <sys/mman.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "core/assets.h"
#include "core/error.h"
#include "core/install_paths.h"
#include "frontend/utf8.h"

namespace kokoro::ja {

namespace fs = std::filesystem;

namespace {

bool has_data(const fs::path& dir) {
  std::error_code ec;
  return fs::is_regular_file(dir / "unidic-lite" / "sys.dic", ec) && fs::is_regular_file(dir / "ja_words.txt", ec);
}

}  // namespace

std::string find_data_dir() {
  std::vector<std::string> candidates;
  if (const char* env = std::getenv("KOKORO_JA_DATA"); env && *env) candidates.push_back(env);
  for (const auto& d : installed_data_dirs()) candidates.push_back(d + "/ja");
  if (const BuildTree& tree = build_tree(); tree.found()) candidates.push_back(tree.models + "/ja");
  std::string tried;
  for (const auto& c : candidates) {
    if (has_data(c)) return c;
    tried += "\n  " + c;
  }
  throw Error("Japanese needs its dictionary (unidic-lite/ and ja_words.txt), found in none of:" + tried +
              "\nrun scripts/fetch-assets (installed: kokoro-fetch-model) or set KOKORO_JA_DATA");
}

WordList WordList::load(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw Error("cannot read " + path);
  std::ostringstream ss;
  ss << in.rdbuf();
  WordList w;
  w.data_ = std::move(ss).str();
  std::string_view all(w.data_);
  w.lines_.reserve(all.size() / 12);
  size_t pos = 0;
  while (pos < all.size()) {
    size_t end = all.find('\n', pos);
    if (end == std::string_view::npos) end = all.size();
    std::string_view line = all.substr(pos, end - pos);
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    if (!line.empty()) {
      w.lines_.push_back(line);
      w.longest_ = std::max(w.longest_, utf8::count_code_points(line));
    }
    pos = end + 1;
  }
  if (w.lines_.empty()) throw Error(path + " has no words");
  if (!std::is_sorted(w.lines_.begin(), w.lines_.end())) std::sort(w.lines_.begin(), w.lines_.end());
  return w;
}

bool WordList::contains(std::string_view word) const {
  return std::binary_search(lines_.begin(), lines_.end(), word);
}

Dictionary::Dictionary(const std::string& dir) {
  const std::string dic = dir + "/unidic-lite";
  for (const char* f : {"sys.dic", "matrix.bin", "char.bin", "unk.dic", "dicrc"})
    if (!fs::is_regular_file(dic + "/" + f)) throw Error("Japanese dictionary incomplete: no " + dic + "/" + f);
  // -r: MeCab insists on a resource file; the dictionary's own (empty) one keeps /etc/mecabrc out of it.
  const std::string rc = fs::is_regular_file(dic + "/mecabrc") ? dic + "/mecabrc" : dic + "/dicrc";
  const char* argv[] = {"mecab", "-r", rc.c_str(), "-d", dic.c_str()};
  model_.reset(MeCab::createModel(5, const_cast<char**>(argv)));
  if (!model_) throw Error("MeCab cannot open the Japanese dictionary " + dic + ": " + MeCab::getLastError());
  words_ = WordList::load(dir + "/ja_words.txt");
  // MeCab maps its files itself: find those mappings by path.
  std::error_code ec;
  const std::string prefix = fs::canonical(dic, ec).string() + "/";
  std::ifstream maps("/proc/self/maps");
  for (std::string line; !ec && std::getline(maps, line);) {
    const size_t slash = line.find('/');
    if (slash == std::string::npos || line.compare(slash, prefix.size(), prefix) != 0) continue;
    unsigned long lo = 0, hi = 0;
    if (std::sscanf(line.c_str(), "%lx-%lx", &lo, &hi) == 2 && hi > lo)
      mapped_.emplace_back(reinterpret_cast<void*>(lo), static_cast<size_t>(hi - lo));
  }
}

void Dictionary::line_done() const {
  if ((lines_.fetch_add(1, std::memory_order_relaxed) + 1) % kReleaseEvery != 0) return;
  for (const auto& [p, n] : mapped_) madvise(p, n, MADV_DONTNEED);
}

Dictionary::~Dictionary() = default;

}  // namespace kokoro::ja
