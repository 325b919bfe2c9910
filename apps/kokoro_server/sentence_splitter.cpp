#include "apps/kokoro_server/sentence_splitter.h"

#include <cctype>

namespace kokoro::server {

namespace {

std::string trimmed(std::string_view s) {
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.front()))) s.remove_prefix(1);
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.remove_suffix(1);
  return std::string(s);
}

bool starts_with_at(std::string_view s, size_t i, std::string_view what) { return s.substr(i, what.size()) == what; }

// Length of a sentence-ending mark at i (0 if none), and whether it needs white space after it.
size_t end_mark(std::string_view s, size_t i, bool* needs_space) {
  *needs_space = true;
  const char c = s[i];
  if (c == '.' || c == '!' || c == '?') return 1;
  if (starts_with_at(s, i, "\xE2\x80\xA6")) return 3;  // …
  *needs_space = false;
  for (std::string_view cjk : {"\xE3\x80\x82", "\xEF\xBC\x81", "\xEF\xBC\x9F"})  // 。！？
    if (starts_with_at(s, i, cjk)) return 3;
  return 0;
}

// Closing quotes and brackets that may follow the mark inside the sentence.
size_t closer(std::string_view s, size_t i) {
  const char c = s[i];
  if (c == '"' || c == '\'' || c == ')' || c == ']') return 1;
  for (std::string_view q : {"\xE2\x80\x9D", "\xE2\x80\x99", "\xE3\x80\x8D", "\xEF\xBC\x89"})  // ” ’ 」 ）
    if (starts_with_at(s, i, q)) return q.size();
  return 0;
}

// "Mr." or "e.g." is not the end of a sentence: the word before a '.' is a common abbreviation or a single
// letter (an initial).
bool abbreviation_before(std::string_view s, size_t dot) {
  size_t b = dot;
  while (b > 0 && (std::isalpha(static_cast<unsigned char>(s[b - 1])) || s[b - 1] == '.')) --b;
  std::string word;
  for (size_t k = b; k < dot; ++k) word += static_cast<char>(std::tolower(static_cast<unsigned char>(s[k])));
  if (word.size() == 1) return true;
  for (const char* a : {"mr", "mrs", "ms", "dr", "st", "prof", "sr", "jr", "vs", "etc", "e.g", "i.e", "no", "fig", "mt"})
    if (word == a) return true;
  return false;
}

}  // namespace

std::vector<std::string> SentenceSplitter::add(std::string_view text) {
  pending_.append(text);
  std::vector<std::string> done;
  const std::string_view s(pending_);
  size_t start = 0;
  size_t i = 0;
  while (i < s.size()) {
    if (s[i] == '\n' && i + 1 < s.size() && s[i + 1] == '\n') {  // a blank line ends a paragraph
      if (auto t = trimmed(s.substr(start, i - start)); !t.empty()) done.push_back(std::move(t));
      start = i + 2;
      i += 2;
      continue;
    }
    bool needs_space = false;
    const size_t mark = end_mark(s, i, &needs_space);
    if (mark == 0) {
      ++i;
      continue;
    }
    if (s[i] == '.' && abbreviation_before(s, i)) {
      ++i;
      continue;
    }
    size_t j = i + mark;
    while (j < s.size() && (s[j] == '.' || s[j] == '!' || s[j] == '?')) ++j;  // "?!", "..."
    while (j < s.size()) {
      const size_t n = closer(s, j);
      if (n == 0) break;
      j += n;
    }
    if (needs_space) {
      if (j >= s.size()) break;  // the next piece decides: "3." may become "3.5"
      if (!std::isspace(static_cast<unsigned char>(s[j]))) {
        i = j;
        continue;
      }
      // "Really?" he asked.": a lower-case word after the mark continues the sentence.
      size_t k = j;
      while (k < s.size() && std::isspace(static_cast<unsigned char>(s[k]))) ++k;
      if (k >= s.size()) break;  // wait for the next word
      if (std::islower(static_cast<unsigned char>(s[k]))) {
        i = k;
        continue;
      }
    }
    if (auto t = trimmed(s.substr(start, j - start)); !t.empty()) done.push_back(std::move(t));
    start = j;
    i = j;
  }
  pending_.erase(0, start);
  return done;
}

std::string SentenceSplitter::finish() {
  std::string rest = trimmed(pending_);
  pending_.clear();
  return rest;
}

}  // namespace kokoro::server
