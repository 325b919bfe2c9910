#include "frontend/zh_pinyin.h"

#include <array>
#include <utility>

namespace kokoro::zh {

namespace {

// Tone-marked vowels (precomposed) and their base letter and tone.
struct Marked {
  char32_t c;
  char base;  // 'v' stands for ü, 'E' for ê
  int tone;
};
constexpr Marked kMarked[] = {
    {U'ā', 'a', 1}, {U'á', 'a', 2}, {U'ǎ', 'a', 3}, {U'à', 'a', 4}, {U'ē', 'e', 1}, {U'é', 'e', 2},
    {U'ě', 'e', 3}, {U'è', 'e', 4}, {U'ī', 'i', 1}, {U'í', 'i', 2}, {U'ǐ', 'i', 3}, {U'ì', 'i', 4},
    {U'ō', 'o', 1}, {U'ó', 'o', 2}, {U'ǒ', 'o', 3}, {U'ò', 'o', 4}, {U'ū', 'u', 1}, {U'ú', 'u', 2},
    {U'ǔ', 'u', 3}, {U'ù', 'u', 4}, {U'ǖ', 'v', 1}, {U'ǘ', 'v', 2}, {U'ǚ', 'v', 3}, {U'ǜ', 'v', 4},
    {U'ü', 'v', 0}, {U'ń', 'n', 2}, {U'ň', 'n', 3}, {U'ǹ', 'n', 4}, {U'ḿ', 'm', 2}, {U'ế', 'E', 2},
    {U'ề', 'E', 4}, {U'ê', 'E', 0},
};

int combining_tone(char32_t c) {
  switch (c) {
    case 0x0304: return 1;
    case 0x0301: return 2;
    case 0x030C: return 3;
    case 0x0300: return 4;
    default: return -1;
  }
}

constexpr std::pair<std::string_view, std::u32string_view> kInitials[] = {
    {"zh", U"ꭧ"}, {"ch", U"ꭧʰ"}, {"sh", U"ʂ"}, {"b", U"p"},  {"p", U"pʰ"}, {"m", U"m"},  {"f", U"f"},
    {"d", U"t"},  {"t", U"tʰ"},  {"n", U"n"},  {"l", U"l"},  {"g", U"k"},  {"k", U"kʰ"}, {"h", U"x"},
    {"j", U"ʨ"},  {"q", U"ʨʰ"},  {"x", U"ɕ"},  {"r", U"ɻ"},  {"z", U"ʦ"},  {"c", U"ʦʰ"}, {"s", U"s"},
};

// Finals (strict form, v = ü) -> symbols, '0' marking where the tone goes.
constexpr std::pair<std::string_view, std::u32string_view> kFinals[] = {
    {"a", U"a0"},      {"ai", U"ai0"},     {"an", U"a0n"},    {"ang", U"a0ŋ"},   {"ao", U"au0"},
    {"e", U"ɤ0"},      {"ei", U"ei0"},     {"en", U"ə0n"},    {"eng", U"ə0ŋ"},   {"i", U"i0"},
    {"ia", U"ja0"},    {"ian", U"jɛ0n"},   {"iang", U"ja0ŋ"}, {"iao", U"jau0"},  {"ie", U"je0"},
    {"in", U"i0n"},    {"iou", U"jou0"},   {"ing", U"i0ŋ"},   {"iong", U"jʊ0ŋ"}, {"ong", U"ʊ0ŋ"},
    {"ou", U"ou0"},    {"u", U"u0"},       {"uei", U"wei0"},  {"ua", U"wa0"},    {"uai", U"wai0"},
    {"uan", U"wa0n"},  {"uen", U"wə0n"},   {"uang", U"wa0ŋ"}, {"ueng", U"wə0ŋ"}, {"uo", U"wo0"},
    {"o", U"wo0"},     {"v", U"y0"},       {"ve", U"ɥe0"},    {"van", U"ɥɛ0n"},  {"vn", U"y0n"},
};

// Whole syllables read without initial/final analysis: interjections and syllabic consonants.
constexpr std::pair<std::string_view, std::u32string_view> kWhole[] = {
    {"io", U"jɔ0"}, {"E", U"ɛ0"},  {"er", U"ɚ0"}, {"o", U"ɔ0"}, {"hm", U"hm0"},
    {"hng", U"hŋ0"}, {"m", U"m0"}, {"n", U"n0"},  {"ng", U"ŋ0"},
};

constexpr std::u32string_view kToneMarks[] = {U"", U"→", U"↗", U"↓", U"↘", U""};

template <size_t N>
const std::u32string_view* find(const std::pair<std::string_view, std::u32string_view> (&table)[N],
                                std::string_view key) {
  for (const auto& [k, v] : table)
    if (k == key) return &v;
  return nullptr;
}

// pypinyin's strict final of a syllable without its initial.
std::string strict_final(std::string_view initial, std::string rest) {
  if (initial.empty()) {
    if (rest.rfind("yu", 0) == 0) return "v" + rest.substr(2);
    if (rest == "yi" || rest == "yin" || rest == "ying") return rest.substr(1);
    if (rest == "yo") return "o";  // pypinyin's strict final of yo (哟) is o
    if (rest.rfind("y", 0) == 0) rest = "i" + rest.substr(1);
    else if (rest == "wu") return "u";
    else if (rest.rfind("w", 0) == 0) rest = "u" + rest.substr(1);
    if (rest == "iu") return "iou";  // not reached from y/w, kept for symmetry
    return rest;
  }
  if ((initial == "j" || initial == "q" || initial == "x") && !rest.empty() && rest[0] == 'u')
    rest = "v" + rest.substr(1);
  if (rest == "iu") return "iou";
  if (rest == "ui") return "uei";
  if (rest == "un") return "uen";
  return rest;
}

}  // namespace

std::string numbered_pinyin(std::u32string_view marked) {
  std::string base;
  int tone = 0;
  for (char32_t c : marked) {
    if (c < 0x80 && ((c >= 'a' && c <= 'z'))) {
      base.push_back(static_cast<char>(c));
      continue;
    }
    if (const int t = combining_tone(c); t > 0) {
      if (tone) return "";
      tone = t;
      continue;
    }
    bool found = false;
    for (const Marked& m : kMarked) {
      if (m.c != c) continue;
      found = true;
      if (m.base == 'E') base += "E";
      else base.push_back(m.base);
      if (m.tone) {
        if (tone) return "";
        tone = m.tone;
      }
      break;
    }
    if (!found) return "";
  }
  if (base.empty()) return "";
  return base + std::to_string(tone ? tone : 5);
}

std::u32string syllable_ipa(std::string_view numbered) {
  if (numbered.size() < 2) return {};
  const char last = numbered.back();
  if (last < '1' || last > '5') return {};
  const int tone = last - '0';
  std::string normal(numbered.substr(0, numbered.size() - 1));
  std::u32string out;
  const std::u32string_view* final_symbols = find(kWhole, normal);
  if (!final_symbols) {
    std::string_view initial;
    for (const auto& [k, v] : kInitials) {
      if (normal.rfind(k, 0) == 0) {
        initial = k;
        out = v;
        break;
      }
    }
    const std::string fin = strict_final(initial, normal.substr(initial.size()));
    if (fin == "i" && (initial == "zh" || initial == "ch" || initial == "sh" || initial == "r" ||
                       initial == "z" || initial == "c" || initial == "s")) {
      static constexpr std::u32string_view kApical = U"ɨ0";
      final_symbols = &kApical;
    } else {
      final_symbols = find(kFinals, fin);
    }
    if (!final_symbols) return {};
  }
  for (char32_t c : *final_symbols) {
    if (c == U'0') out += kToneMarks[tone];
    else out.push_back(c);
  }
  return out;
}

}  // namespace kokoro::zh
