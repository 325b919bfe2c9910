#include "frontend/zh_g2p.h"

#include <algorithm>

#include "core/assets.h"
#include "frontend/unicode_text.h"
#include "frontend/zh_normalize.h"
#include "frontend/zh_pinyin.h"
#include "frontend/zh_segment.h"

namespace kokoro::zh {

namespace {

bool is_han(char32_t c) { return c >= 0x4E00 && c <= 0x9FFF; }

// Marks the chunker cuts at or keeps apart from words (frontend/chunker.h).
bool is_mark(char32_t c) {
  static constexpr std::u32string_view kMarks = U";:,.!?—…\"“”()";
  return kMarks.find(c) != std::u32string_view::npos;
}

}  // namespace

G2P::G2P(std::shared_ptr<const Dict> dict, Vocab vocab, LatinReader latin)
    : dict_(std::move(dict)), vocab_(std::move(vocab)), latin_(std::move(latin)) {}

std::unique_ptr<G2P> G2P::load(const std::string& assets_dir, LatinReader latin) {
  const std::string assets = find_assets_dir(assets_dir);
  return std::make_unique<G2P>(Dict::open(find_dict_file(assets)), Vocab::load(assets + "/config.json"),
                               std::move(latin));
}

std::vector<Unit> G2P::phonemize_line(const std::vector<utf8::CodePoint>& line) const {
  std::vector<Char> text;
  text.reserve(line.size());
  for (const auto& cp : line) text.push_back({cp.cp, cp.begin, cp.end});
  text = normalize(std::move(text));

  std::vector<Unit> units;
  std::vector<std::u32string> surfaces;  // per unit: the written word when it is passed on as written
  std::u32string han;
  size_t i = 0;
  const size_t n = text.size();
  while (i < n) {
    if (is_han(text[i].c)) {
      size_t j = i;
      han.clear();
      while (j < n && is_han(text[j].c)) han.push_back(text[j++].c);
      const size_t first_unit = units.size();
      for (const auto& [b, e] : cut_words(*dict_, han)) {
        std::u32string ps;
        for (const std::string& r : word_readings(*dict_, std::u32string_view(han).substr(b, e - b)))
          ps += syllable_ipa(r);
        if (ps.empty()) continue;
        units.push_back({std::move(ps), true, text[i + b].begin, text[i + e - 1].end, true});
        surfaces.emplace_back();
      }
      if (units.size() > first_unit) units.back().space_after = false;
      i = j;
      continue;
    }
    // Not an ideograph: passed on as written, minus what the vocabulary lacks.
    const Char& ch = text[i];
    if (text::is_space(ch.c)) {
      if (!units.empty()) units.back().space_after = true;
    } else if (is_mark(ch.c)) {
      units.push_back({std::u32string(1, ch.c), false, ch.begin, ch.end, false});
      surfaces.emplace_back();
    } else {
      const bool continues = i > 0 && !units.empty() && units.back().is_word && !units.back().space_after &&
                             !surfaces.back().empty() && !is_han(text[i - 1].c) && !is_mark(text[i - 1].c) &&
                             !text::is_space(text[i - 1].c);
      if (!continues) {
        units.push_back({U"", false, ch.begin, ch.end, true});
        surfaces.emplace_back();
      }
      if (vocab_.id(ch.c)) units.back().phonemes.push_back(ch.c);
      units.back().text_end = ch.end;
      surfaces.back().push_back(ch.c);
    }
    ++i;
  }
  // Latin words: read by the LatinReader when there is one.
  for (size_t k = 0; k < units.size() && latin_; ++k) {
    const std::u32string& w = surfaces[k];
    const bool ascii = !w.empty() && std::all_of(w.begin(), w.end(), [](char32_t c) { return c < 0x80; });
    if (!ascii || !std::any_of(w.begin(), w.end(), text::is_ascii_letter)) continue;
    std::u32string ps = latin_(w);
    std::u32string kept;
    for (char32_t c : ps)
      if (c == U' ' || vocab_.id(c)) kept.push_back(c);
    if (!kept.empty()) units[k].phonemes = std::move(kept);
  }
  // Words that kept no symbol are silent: no unit (their space goes to the unit before).
  std::vector<Unit> spoken;
  for (Unit& u : units) {
    if (u.phonemes.empty()) {
      if (u.space_after && !spoken.empty()) spoken.back().space_after = true;
      continue;
    }
    spoken.push_back(std::move(u));
  }
  if (!spoken.empty()) spoken.back().space_after = false;
  return spoken;
}

std::string G2P::phonemize(std::string_view text) const {
  std::u32string out;
  for (const Unit& u : phonemize_line(utf8::decode(text))) {
    out += u.phonemes;
    if (u.space_after) out.push_back(U' ');
  }
  return utf8::encode(out);
}

std::string G2P::normalize_line(const std::vector<utf8::CodePoint>& line) const {
  std::vector<Char> chars;
  for (const auto& cp : line) chars.push_back({cp.cp, cp.begin, cp.end});
  std::u32string out;
  for (const Char& c : normalize(std::move(chars))) out.push_back(c.c);
  return utf8::encode(out);
}

std::vector<std::pair<char32_t, std::u32string>> G2P::character_readings(std::string_view text) const {
  std::vector<Char> chars;
  for (const auto& cp : utf8::decode(text)) chars.push_back({cp.cp, cp.begin, cp.end});
  chars = normalize(std::move(chars));
  std::vector<std::pair<char32_t, std::u32string>> out;
  std::u32string han;
  for (size_t i = 0; i <= chars.size(); ++i) {
    if (i < chars.size() && is_han(chars[i].c)) {
      han.push_back(chars[i].c);
      continue;
    }
    for (const auto& [b, e] : cut_words(*dict_, han)) {
      const auto readings = word_readings(*dict_, std::u32string_view(han).substr(b, e - b));
      for (size_t k = b; k < e; ++k) out.emplace_back(han[k], syllable_ipa(readings[k - b]));
    }
    han.clear();
  }
  return out;
}

}  // namespace kokoro::zh
