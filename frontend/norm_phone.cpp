// Telephone numbers: read digit by digit in their groups, with a short pause between groups, "plus" for
// an international prefix and "extension" for "ext."/"x". American English says "oh" for 0 as people do
// when they read a number out; British English says "zero".
//   555-0142            -> five five five, oh one four two
//   (555) 123-4567      -> five five five, one two three, four five six seven
//   +44 20 7946 0958    -> plus four four, two zero, seven nine four six, zero nine five eight
// Toll-free numbers say their prefix as people do, 800 as "eight hundred", and vanity numbers their word:
//   1-800-555-0199      -> one eight hundred, five five five, oh one nine nine
//   1-888-FLOWERS       -> one eight eight eight flowers        1-800-GO-FEDEX -> one eight hundred go fedex
// A bare "ddd-dddd" after "from", "between" or "pages" is a range, not a number.
#include <algorithm>
#include <cctype>

#include "frontend/norm_passes.h"
#include "frontend/norm_support.h"

namespace kokoro::en::norm {

namespace {

struct Match {
  size_t end = 0;                    // token after the number
  std::vector<std::string> groups;   // digit groups in order
  bool plus = false;                 // international prefix
};

bool is_group(const std::string& s, size_t min, size_t max) {
  return all_digits(s) && s.size() >= min && s.size() <= max;
}

// Groups separated by "-" tokens written without spaces, starting at i: "555" "-" "0142".
size_t dashed_groups(const std::vector<Token>& toks, size_t i, std::vector<std::string>& groups,
                     size_t longest = 4) {
  size_t k = i;
  while (k < toks.size() && is_free(toks[k]) && is_group(ascii(toks[k]), 1, longest)) {
    groups.push_back(ascii(toks[k]));
    if (joined(toks, k) && is_one_of(toks, k + 1, {"-"}) && joined(toks, k + 1) && k + 2 < toks.size() &&
        is_group(ascii(toks[k + 2]), 1, longest)) {
      k += 2;
      continue;
    }
    return k + 1;
  }
  return k;
}

// North American toll-free prefixes.
bool is_toll_free(const std::string& g) {
  return g == "800" || g == "888" || g == "877" || g == "866" || g == "855" || g == "844" || g == "833";
}

Words toll_free_words(const std::string& g, bool zero_as_oh) {
  if (g == "800") return {"eight", "hundred"};
  return digits_spoken(g, zero_as_oh);
}

// "1-800-FLOWERS", "800-GO-FEDEX", "1-888-356-WINE": a toll-free prefix, then groups of letters (said as
// words) and digits, written together with dashes. Returns the tokens it takes (0: none) and its words.
size_t vanity_number(const std::vector<Token>& toks, size_t i, bool zero_as_oh, Words& words) {
  // The run written without spaces (up to a closing "." or ","), cut at its dashes.
  std::vector<std::string> parts(1);
  size_t end = i;
  while (end < toks.size() && end < i + 12) {
    const std::string a = ascii(toks[end]);
    if (!is_free(toks[end]) || a.empty()) return 0;
    if (end > i && !std::isalnum(static_cast<unsigned char>(a[0])) && a[0] != '-') break;
    for (char c : a) {
      if (c == '-') {
        parts.emplace_back();
      } else if (std::isalnum(static_cast<unsigned char>(c))) {
        parts.back().push_back(c);
      } else {
        return 0;
      }
    }
    ++end;
    if (!joined(toks, end - 1)) break;
  }
  size_t p = parts[0] == "1" ? 1 : 0;
  if (parts.size() < p + 2 || !is_toll_free(parts[p])) return 0;
  Words out;
  if (p == 1) out.emplace_back("one");
  append(out, toll_free_words(parts[p], zero_as_oh));
  size_t letters = 0, chars = 0;
  for (size_t q = p + 1; q < parts.size(); ++q) {
    const std::string& g = parts[q];
    const bool digits = all_digits(g);
    if (!digits && !std::all_of(g.begin(), g.end(), [](char c) { return std::isalpha(static_cast<unsigned char>(c)); }))
      return 0;  // empty or mixed
    // A pause around digit groups; the prefix and the words ("eight hundred flowers", "go fedex") are one
    // phrase, as in the adverts.
    if (digits || (q > p + 1 && all_digits(parts[q - 1]))) out.emplace_back(",");
    if (digits) {
      append(out, digits_spoken(g, zero_as_oh));
    } else {
      std::string word;
      for (char c : g) word.push_back(static_cast<char>(std::tolower(static_cast<unsigned char>(c))));
      out.push_back(std::move(word));
      letters += g.size();
    }
    chars += g.size();
  }
  // A vanity number spells at least a word and has about seven characters.
  if (letters == 0 || chars < 4 || chars > 12) return 0;
  words = std::move(out);
  return end - i;
}

bool looks_like_range(const std::vector<Token>& toks, size_t i) {
  if (i == 0) return false;
  const std::string prev = ascii(toks[i - 1]);
  return prev == "from" || prev == "between" || prev == "pages" || prev == "pp." || prev == "From" ||
         prev == "Between" || prev == "Pages";
}

std::optional<Match> match_phone(const std::vector<Token>& toks, size_t i) {
  Match m;
  const std::string a = ascii(toks[i]);
  // +CC followed by groups separated by spaces or dashes.
  if (a.size() >= 2 && a[0] == '+' && is_group(a.substr(1), 1, 3)) {
    m.plus = true;
    m.groups.push_back(a.substr(1));
    size_t k = i + 1;
    if (joined(toks, i) && is_one_of(toks, k, {"-"})) ++k;
    size_t digits = 0;
    while (k < toks.size() && is_free(toks[k])) {
      std::vector<std::string> more;
      size_t next;
      if (is_one_of(toks, k, {"("}) && is_one_of(toks, k + 2, {")"}) && is_group(ascii(toks[k + 1]), 1, 4)) {
        more.push_back(ascii(toks[k + 1]));
        next = k + 3;
      } else {
        next = dashed_groups(toks, k, more, 6);
      }
      if (more.empty()) break;
      for (auto& g : more) digits += g.size(), m.groups.push_back(std::move(g));
      k = next;
    }
    if (digits < 6 || digits > 14) return std::nullopt;
    m.end = k;
    return m;
  }
  // (555) 123-4567
  if (a == "(" && is_free(toks[i]) && i + 2 < toks.size() && is_group(ascii(toks[i + 1]), 3, 3) &&
      is_one_of(toks, i + 2, {")"})) {
    std::vector<std::string> rest;
    const size_t end = dashed_groups(toks, i + 3, rest);
    if (rest.size() == 2 && rest[0].size() == 3 && rest[1].size() == 4) {
      m.groups = {ascii(toks[i + 1]), rest[0], rest[1]};
      m.end = end;
      return m;
    }
    return std::nullopt;
  }
  // 555.123.4567 as one token
  if (a.size() == 12 && a[3] == '.' && a[7] == '.' && all_digits(a.substr(0, 3)) && all_digits(a.substr(4, 3)) &&
      all_digits(a.substr(8))) {
    m.groups = {a.substr(0, 3), a.substr(4, 3), a.substr(8)};
    m.end = i + 1;
    return m;
  }
  // 555-0142, 555-123-4567, 1-800-555-0199
  std::vector<std::string> groups;
  const size_t end = dashed_groups(toks, i, groups);
  auto sizes = [&](std::initializer_list<size_t> want) {
    if (groups.size() != want.size()) return false;
    size_t k = 0;
    for (size_t w : want)
      if (groups[k++].size() != w) return false;
    return true;
  };
  const bool plain = sizes({3, 4}) && !looks_like_range(toks, i);
  if (plain || sizes({3, 3, 4}) || sizes({1, 3, 3, 4})) {
    m.groups = std::move(groups);
    m.end = end;
    return m;
  }
  return std::nullopt;
}

// "ext. 12", "ext 12", "x12", "x 12" after a number.
size_t extension(const std::vector<Token>& toks, size_t i, std::string& digits) {
  if (i >= toks.size() || !is_free(toks[i])) return 0;
  const std::string a = ascii(toks[i]);
  if (a.size() > 1 && (a[0] == 'x' || a[0] == 'X') && all_digits(a.substr(1)) && a.size() <= 6) {
    digits = a.substr(1);
    return 1;
  }
  size_t n = abbreviation_at(toks, i, "ext", true);
  if (!n) n = abbreviation_at(toks, i, "Ext", true);
  if (!n && (a == "x" || a == "X")) n = 1;
  if (!n || i + n >= toks.size() || !is_free(toks[i + n]) || !is_group(ascii(toks[i + n]), 1, 6)) return 0;
  digits = ascii(toks[i + n]);
  return n + 1;
}

}  // namespace

void normalize_phone_numbers(std::vector<Token>& toks, const Dialect& d) {
  for (size_t i = 0; i < toks.size(); ++i) {
    if (!is_free(toks[i]) || toks[i].text.empty()) continue;
    const char32_t first = toks[i].text[0];
    if (first != U'+' && first != U'(' && !(first >= U'0' && first <= U'9')) continue;
    // Part of a longer number or word: "ISBN 978-3-16-148410-0" is not a phone number.
    if (i > 0 && joined(toks, i - 1) && !is_one_of(toks, i - 1, {"(", "\"", "'", ":"})) continue;
    if (Words vanity; first != U'+' && first != U'(') {
      if (const size_t n = vanity_number(toks, i, !d.british, vanity)) {
        i = replace(toks, i, i + n, vanity) - 1;
        continue;
      }
    }
    const auto m = match_phone(toks, i);
    if (!m) continue;
    size_t end = m->end;
    if (end < toks.size() && joined(toks, end - 1) && toks[end].group == 0 &&
        (ascii(toks[end]) == "-" || all_digits(ascii(toks[end]))))
      continue;  // more digit groups follow: not a shape we know
    Words words;
    if (m->plus) words.emplace_back("plus");
    for (size_t g = 0; g < m->groups.size(); ++g) {
      const auto& group = m->groups[g];
      // "1-800": the long-distance 1 and a toll-free prefix are said together, "one eight hundred".
      const bool toll_free = !m->plus && m->groups.size() >= 3 && is_toll_free(group) &&
                             (g == 0 || (g == 1 && m->groups[0] == "1"));
      if (g > 0 && !(toll_free && g == 1)) words.emplace_back(",");
      append(words, toll_free ? toll_free_words(group, !d.british) : digits_spoken(group, !d.british));
    }
    std::string ext;
    if (size_t n = extension(toks, end, ext)) {
      words.emplace_back(",");
      words.emplace_back("extension");
      append(words, digits_spoken(ext, !d.british));
      end += n;
    }
    i = replace(toks, i, end, words) - 1;
  }
}

}  // namespace kokoro::en::norm
