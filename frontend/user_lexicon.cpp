#include "frontend/user_lexicon.h"

#include <fstream>

#include "core/error.h"
#include "frontend/norm_support.h"
#include "frontend/unicode_text.h"
#include "frontend/utf8.h"

namespace kokoro::en {

namespace {

constexpr size_t kMaxKeyTokens = 6;  // "C++" is three tokens, "Wi-Fi" three

std::string trim(const std::string& s) {
  const size_t b = s.find_first_not_of(" \t\r");
  if (b == std::string::npos) return {};
  const size_t e = s.find_last_not_of(" \t\r");
  return s.substr(b, e - b + 1);
}

}  // namespace

void UserLexicon::add(const std::string& key_in, const std::string& reading_in, const std::string& where) {
  const std::string key = trim(key_in), reading = trim(reading_in);
  if (key.empty() || key.find_first_of(" \t") != std::string::npos)
    throw Error(where + ": the word must be one piece of text without spaces, got '" + key + "'");
  if (reading.empty()) throw Error(where + ": '" + key + "' has no reading (phonemes in /slashes/ or words)");
  if (!utf8::is_valid(key) || !utf8::is_valid(reading)) throw Error(where + ": not valid UTF-8");
  Reading r;
  if (reading.size() >= 2 && reading.front() == '/' && reading.back() == '/') {
    std::u32string ps = utf8::to_u32(reading.substr(1, reading.size() - 2));
    if (ps.empty() || ps.find(U'/') != std::u32string::npos)
      throw Error(where + ": '" + key + "': phonemes must be one /.../ group, got " + reading);
    r.phonemes = std::move(ps);
  } else if (reading.front() == '/') {
    throw Error(where + ": '" + key + "': phonemes must end with '/', got " + reading);
  } else {
    r.respelling = norm::split_words(reading);
  }
  const std::u32string k = utf8::to_u32(key);
  longest_key_ = std::max(longest_key_, k.size());
  if (text::lower(k) == k) {
    any_case_[k] = std::move(r);
  } else {
    exact_[k] = std::move(r);
  }
}

std::shared_ptr<const UserLexicon> UserLexicon::load(const std::string& file,
                                                     const std::vector<std::pair<std::string, std::string>>& entries) {
  auto lex = std::make_shared<UserLexicon>();
  if (!file.empty()) {
    std::ifstream in(file, std::ios::binary);
    if (!in) throw Error("cannot open lexicon file " + file);
    std::string line;
    size_t n = 0;
    while (std::getline(in, line)) {
      ++n;
      if (n == 1 && line.rfind("\xEF\xBB\xBF", 0) == 0) line.erase(0, 3);  // byte order mark
      if (const size_t hash = line.find('#'); hash != std::string::npos) {
        // "#" starts a comment at the start of a line or after whitespace ("C#" is a key).
        if (hash == 0 || line[hash - 1] == ' ' || line[hash - 1] == '\t') line.resize(hash);
      }
      line = trim(line);
      if (line.empty()) continue;
      const size_t gap = line.find_first_of(" \t");
      const std::string where = file + ":" + std::to_string(n);
      if (gap == std::string::npos) throw Error(where + ": expected 'word  reading', got '" + line + "'");
      lex->add(line.substr(0, gap), line.substr(gap + 1), where);
    }
  }
  for (const auto& [k, v] : entries) lex->add(k, v, "lexicon entry '" + k + "'");
  return lex;
}

const UserLexicon::Reading* UserLexicon::find(const std::u32string& written) const {
  if (auto it = exact_.find(written); it != exact_.end()) return &it->second;
  if (auto it = any_case_.find(text::lower(written)); it != any_case_.end()) return &it->second;
  return nullptr;
}

void UserLexicon::apply(std::vector<Token>& toks) const {
  if (empty()) return;
  for (size_t i = 0; i < toks.size(); ++i) {
    if (!norm::is_free(toks[i])) continue;
    // Longest run of tokens written together that is a key.
    std::u32string acc;
    size_t best_end = 0;
    const Reading* best = nullptr;
    for (size_t k = i; k < toks.size() && k < i + kMaxKeyTokens && norm::is_free(toks[k]); ++k) {
      acc += toks[k].text;
      if (acc.size() > longest_key_) break;
      if (const Reading* r = find(acc)) {
        best = r;
        best_end = k + 1;
      }
      if (toks[k].space_after) break;
    }
    if (!best) continue;
    // A key must be a whole word: not followed by more letters written onto it.
    if (best_end < toks.size() && !toks[best_end - 1].space_after && !toks[best_end].text.empty() &&
        text::is_letter(toks[best_end].text[0]))
      continue;
    if (best->phonemes) {
      Token t = toks[i];
      for (size_t k = i + 1; k < best_end; ++k) t.text += toks[k].text;
      t.end = toks[best_end - 1].end;
      t.space_after = toks[best_end - 1].space_after;
      t.phonemes = best->phonemes;
      t.tag = "NN";
      t.rating = 5;
      toks.erase(toks.begin() + static_cast<std::ptrdiff_t>(i + 1), toks.begin() + static_cast<std::ptrdiff_t>(best_end));
      toks[i] = std::move(t);
    } else {
      i = norm::replace(toks, i, best_end, best->respelling) - 1;
    }
  }
}

}  // namespace kokoro::en
