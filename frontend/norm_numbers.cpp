// Numbers misaki reads digit group by digit group: fractions, mixed numbers and ranges. (Cardinals,
// ordinals, decimals, negatives, years and decades are misaki's own and are left to it.)
//   1/3 -> one third      2/3 -> two thirds     3/4 -> three quarters     1/2 -> one half
//   2 1/2 -> two and a half      2½ -> two and a half       ¾ -> three quarters
//   10-20, 10–20 -> ten to twenty   (only when the first is smaller: "2-1" is a score and stays)
#include "frontend/norm_passes.h"
#include "frontend/norm_support.h"

namespace kokoro::en::norm {

namespace {

bool is_denominator(long d) {
  return d == 2 || d == 3 || d == 4 || d == 5 || d == 6 || d == 7 || d == 8 || d == 9 || d == 10 || d == 12 ||
         d == 16 || d == 32 || d == 64 || d == 100;
}

// "three quarters", "a half" (with `article` for the part of a mixed number: "two and a half").
Words fraction_words(long num, long den, bool article) {
  Words w;
  if (num == 1 && article) {
    w.emplace_back("a");
  } else {
    w = cardinal_words(std::to_string(num));
  }
  std::string name;
  if (den == 2) {
    name = num == 1 ? "half" : "halves";
  } else if (den == 4) {
    name = num == 1 ? "quarter" : "quarters";
  } else if (den == 100) {
    name = num == 1 ? "hundredth" : "hundredths";
  } else {
    Words ord = ordinal_words(std::to_string(den));
    if (num != 1) ord.back() += "s";
    for (size_t k = 0; k + 1 < ord.size(); ++k) w.push_back(ord[k]);
    name = ord.back();
  }
  w.push_back(name);
  return w;
}

bool parse_fraction(const std::string& a, long& num, long& den) {
  const size_t slash = a.find('/');
  if (slash == std::string::npos) return false;
  const auto n = int_value(a.substr(0, slash)), d = int_value(a.substr(slash + 1));
  if (!n || !d || *n < 1 || *n > 99 || !is_denominator(*d) || a[0] == '0') return false;
  num = *n;
  den = *d;
  return true;
}

struct Vulgar {
  char32_t c;
  long num, den;
};
constexpr Vulgar kVulgar[] = {{U'½', 1, 2}, {U'⅓', 1, 3}, {U'⅔', 2, 3}, {U'¼', 1, 4}, {U'¾', 3, 4},
                              {U'⅕', 1, 5}, {U'⅖', 2, 5}, {U'⅗', 3, 5}, {U'⅘', 4, 5}, {U'⅙', 1, 6},
                              {U'⅚', 5, 6}, {U'⅛', 1, 8}, {U'⅜', 3, 8}, {U'⅝', 5, 8}, {U'⅞', 7, 8}};

const Vulgar* vulgar(char32_t c) {
  for (const auto& v : kVulgar)
    if (v.c == c) return &v;
  return nullptr;
}

bool is_plain_int(const std::string& s) { return all_digits(s) && s.size() <= 9 && (s.size() == 1 || s[0] != '0'); }

}  // namespace

void normalize_numbers(std::vector<Token>& toks, const Dialect&) {
  for (size_t i = 0; i < toks.size(); ++i) {
    if (!is_free(toks[i]) || toks[i].text.empty()) continue;
    const std::u32string& text = toks[i].text;
    // Every form here starts with a digit or is a vulgar fraction.
    if (!(text[0] >= U'0' && text[0] <= U'9') && !vulgar(text.back())) continue;
    const std::string a = ascii(toks[i]);
    long num = 0, den = 0;
    // "2½", "½"
    if (!text.empty()) {
      if (const Vulgar* v = vulgar(text.back())) {
        const std::string whole = ascii(text.substr(0, text.size() - 1));
        if (whole.empty() || is_plain_number(whole)) {
          Words w;
          if (!whole.empty()) {
            w = number_words(whole);
            w.emplace_back("and");
          }
          append(w, fraction_words(v->num, v->den, !whole.empty()));
          i = replace(toks, i, i + 1, w) - 1;
        }
        continue;
      }
    }
    // "2 1/2": a whole number and a fraction.
    if (is_plain_int(a) && toks[i].space_after && i + 1 < toks.size() && is_free(toks[i + 1]) &&
        parse_fraction(ascii(toks[i + 1]), num, den) && num < den) {
      Words w = number_words(a);
      w.emplace_back("and");
      append(w, fraction_words(num, den, true));
      i = replace(toks, i, i + 2, w) - 1;
      continue;
    }
    if (parse_fraction(a, num, den)) {
      i = replace(toks, i, i + 1, fraction_words(num, den, false)) - 1;
      continue;
    }
    // "10–20" as one token (en dash)
    if (const size_t dash = text.find(U'–'); dash != std::u32string::npos && dash > 0) {
      const std::string lo = ascii(text.substr(0, dash)), hi = ascii(text.substr(dash + 1));
      if (is_plain_int(lo) && is_plain_int(hi) && *int_value(lo) < *int_value(hi)) {
        Words w = number_words(lo);
        w.emplace_back("to");
        append(w, number_words(hi));
        i = replace(toks, i, i + 1, w) - 1;
      }
      continue;
    }
    // "10-20": three tokens written together; the dash is read "to".
    // Not inside a longer code written with dashes ("978-3-16-148410-0").
    const bool dash_before = i > 0 && joined(toks, i - 1) && ascii(toks[i - 1]) == "-";
    const bool dash_after = i + 3 < toks.size() && joined(toks, i + 2) && ascii(toks[i + 3]) == "-";
    if (is_plain_int(a) && !dash_before && !dash_after && joined(toks, i) && is_one_of(toks, i + 1, {"-"}) &&
        joined(toks, i + 1) && i + 2 < toks.size()) {
      std::string hi = ascii(toks[i + 2]);
      // "10-20%": the rest of the token after the number does not matter.
      size_t k = 0;
      while (k < hi.size() && hi[k] >= '0' && hi[k] <= '9') ++k;
      hi = hi.substr(0, k);
      if (is_plain_int(hi) && *int_value(a) < *int_value(hi)) read_as(toks, i + 1, "to");
    }
  }
}

}  // namespace kokoro::en::norm
