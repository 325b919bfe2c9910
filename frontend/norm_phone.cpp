// Telephone numbers: read digit by digit in their groups, with a short pause between groups, "plus" for
// an international prefix and "extension" for "ext."/"x". American English says "oh" for 0 as people do
// when they read a number out; British English says "zero".
//   555-0142            -> five five five, oh one four two
//   (555) 123-4567      -> five five five, one two three, four five six seven
//   +44 20 7946 0958    -> plus four four, two zero, seven nine four six, zero nine five eight
// A bare "ddd-dddd" after "from", "between" or "pages" is a range, not a number.
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
    const auto m = match_phone(toks, i);
    if (!m) continue;
    size_t end = m->end;
    if (end < toks.size() && joined(toks, end - 1) && toks[end].group == 0 &&
        (ascii(toks[end]) == "-" || all_digits(ascii(toks[end]))))
      continue;  // more digit groups follow: not a shape we know
    Words words;
    if (m->plus) words.emplace_back("plus");
    for (size_t g = 0; g < m->groups.size(); ++g) {
      if (g > 0) words.emplace_back(",");
      append(words, digits_spoken(m->groups[g], !d.british));
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
