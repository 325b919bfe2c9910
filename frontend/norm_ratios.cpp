// Ratios written with a colon are said with "to": 16:9 -> sixteen to nine, 4:3, 1:100 -> one to one
// hundred, 2.39:1, 3:2:1, and scores ("won 3:2" -> three to two). A colon between numbers that can be a
// clock time (an hour up to 24 and two digits of minutes: "10:30", "16:10", "3:05") is left to the
// times pass, unless a word nearby says ratio ("a 16:10 aspect ratio", "a scale of 1:25", "odds of 10:30"),
// and so is chapter and verse after a book of the Bible ("Psalm 23:4", "Genesis 1:1").
#include <algorithm>

#include "frontend/norm_passes.h"
#include "frontend/norm_support.h"
#include "frontend/unicode_text.h"

namespace kokoro::en::norm {

namespace {

bool is_ratio_word(const Token& t) {
  const std::u32string w = text::lower(t.text);
  return w == U"ratio" || w == U"ratios" || w == U"aspect" || w == U"scale" || w == U"odds" ||
         w == U"proportion" || w == U"mix" || w == U"mixture" || w == U"widescreen";
}

bool ratio_nearby(const std::vector<Token>& toks, size_t i) {
  const size_t from = i >= 3 ? i - 3 : 0, to = std::min(toks.size(), i + 3);
  for (size_t k = from; k < to; ++k)
    if (k != i && is_ratio_word(toks[k])) return true;
  return false;
}

// Books of the Bible: "Psalm 23:4", "Genesis 1:1" are chapter and verse, not ratios.
bool is_scripture(const Token& t) {
  static constexpr std::u32string_view kBooks[] = {
      U"Genesis", U"Exodus", U"Leviticus", U"Numbers", U"Deuteronomy", U"Joshua", U"Judges", U"Ruth", U"Samuel",
      U"Kings", U"Chronicles", U"Ezra", U"Nehemiah", U"Esther", U"Job", U"Psalm", U"Psalms", U"Proverbs",
      U"Ecclesiastes", U"Song", U"Songs", U"Isaiah", U"Jeremiah", U"Lamentations", U"Ezekiel", U"Daniel",
      U"Hosea", U"Joel", U"Amos", U"Obadiah", U"Jonah", U"Micah", U"Nahum", U"Habakkuk", U"Zephaniah", U"Haggai",
      U"Zechariah", U"Malachi", U"Matthew", U"Mark", U"Luke", U"John", U"Acts", U"Romans", U"Corinthians",
      U"Galatians", U"Ephesians", U"Philippians", U"Colossians", U"Thessalonians", U"Timothy", U"Titus",
      U"Philemon", U"Hebrews", U"James", U"Peter", U"Jude", U"Revelation", U"Gen.", U"Ex.", U"Ps.", U"Matt.",
      U"Rom.", U"Cor.", U"Rev."};
  for (auto b : kBooks)
    if (t.text == b) return true;
  return false;
}

std::vector<std::string> split_colons(const std::string& a) {
  std::vector<std::string> parts;
  size_t b = 0;
  for (size_t k = 0; k <= a.size(); ++k) {
    if (k == a.size() || a[k] == ':') {
      parts.push_back(a.substr(b, k - b));
      b = k + 1;
    }
  }
  return parts;
}

// "10:30", "3:05", "09:30:15": what the times pass reads.
bool could_be_time(const std::vector<std::string>& parts) {
  if (parts.size() > 3) return false;
  const auto hour = int_value(parts[0]);
  if (!hour || parts[0].size() > 2 || *hour > 24) return false;
  for (size_t k = 1; k < parts.size(); ++k) {
    const auto v = int_value(parts[k]);
    if (!v || parts[k].size() != 2 || *v > 59) return false;
  }
  return parts.size() >= 2;
}

// A part of a ratio as a number (a whole number is never a year here: 1:1500 is "one to one thousand five
// hundred").
Words part_words(const std::string& p) {
  std::string digits;
  for (char c : p)
    if (c != ',') digits.push_back(c);
  if (all_digits(digits)) return cardinal_words(digits);
  return number_words(p);
}

}  // namespace

void normalize_ratios(std::vector<Token>& toks, const Dialect&) {
  for (size_t i = 0; i < toks.size(); ++i) {
    if (!is_free(toks[i]) || toks[i].text.empty() || !text::is_ascii_digit(toks[i].text[0])) continue;
    const std::string a = ascii(toks[i]);
    if (a.find(':') == std::string::npos) continue;
    const std::vector<std::string> parts = split_colons(a);
    if (parts.size() < 2 || parts.size() > 3) continue;
    bool numbers = true;
    for (const auto& p : parts) numbers = numbers && is_plain_number(p) && p[0] != '-';
    if (!numbers) continue;
    if (could_be_time(parts) && !ratio_nearby(toks, i)) continue;
    if (i > 0 && is_scripture(toks[i - 1])) continue;  // chapter and verse: misaki's reading
    Words words;
    for (size_t k = 0; k < parts.size(); ++k) {
      if (k > 0) words.emplace_back("to");
      append(words, part_words(parts[k]));
    }
    i = replace(toks, i, i + 1, words) - 1;
  }
}

}  // namespace kokoro::en::norm
