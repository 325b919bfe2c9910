// Dates: days are ordinals, years are years, and the order follows the dialect.
//   2024-03-15, 03/15/2024   en-us: March fifteenth, twenty twenty four
//                            en-gb: the fifteenth of March, twenty twenty four
//   15/03/2024, 15.03.2024   day first (a first number above 12 cannot be a month; dots are European)
//   04/03/2024               en-us reads month/day, en-gb day/month
//   July 4, 1976             en-us: July fourth, ...     en-gb: July the fourth, ...
//   12 May 2003              the twelfth of May ...      (years after them stay as misaki reads them)
//   Jan. 5, Sept 30          month abbreviations are read in full before or after a day number
//   Mon., Tues., Wed. ...    day abbreviations before a date, a month or a comma are read in full
#include <array>

#include "frontend/norm_passes.h"
#include "frontend/norm_support.h"

namespace kokoro::en::norm {

namespace {

constexpr std::array<const char*, 12> kMonths = {"January", "February", "March",     "April",   "May",      "June",
                                                 "July",    "August",   "September", "October", "November", "December"};

struct Abbrev {
  std::string_view written;
  int index;
};
constexpr std::array<Abbrev, 13> kMonthAbbrevs = {{{"Jan", 0}, {"Feb", 1}, {"Mar", 2}, {"Apr", 3}, {"Jun", 5},
                                                   {"Jul", 6}, {"Aug", 7}, {"Sep", 8}, {"Sept", 8}, {"Oct", 9},
                                                   {"Nov", 10}, {"Dec", 11}, {"May", 4}}};
struct Day {
  std::string_view written;
  const char* full;
};
constexpr std::array<Day, 11> kDayAbbrevs = {{{"Mon", "Monday"}, {"Tue", "Tuesday"}, {"Tues", "Tuesday"},
                                              {"Wed", "Wednesday"}, {"Thu", "Thursday"}, {"Thur", "Thursday"},
                                              {"Thurs", "Thursday"}, {"Fri", "Friday"}, {"Sat", "Saturday"},
                                              {"Sun", "Sunday"}, {"Weds", "Wednesday"}}};

// Month at token i: a full name (1 token) or an abbreviation with or without its period. Returns the
// token count and sets `month`.
size_t month_at(const std::vector<Token>& toks, size_t i, int& month) {
  if (i >= toks.size() || !is_free(toks[i])) return 0;
  const std::string a = ascii(toks[i]);
  for (int m = 0; m < 12; ++m)
    if (a == kMonths[m]) return month = m, 1;
  for (const auto& ab : kMonthAbbrevs)
    if (size_t n = abbreviation_at(toks, i, ab.written, true)) return month = ab.index, n;
  return 0;
}

std::optional<long> day_number(const std::vector<Token>& toks, size_t i) {
  if (i >= toks.size() || !is_free(toks[i])) return std::nullopt;
  const auto v = int_value(ascii(toks[i]));
  if (!v || *v < 1 || *v > 31 || ascii(toks[i]).size() > 2) return std::nullopt;
  // "May 5:30", "June 3-7" with more digits: not a plain day.
  if (joined(toks, i) && i + 1 < toks.size()) {
    const std::string next = ascii(toks[i + 1]);
    if (next != "," && next != "." && next != ";" && next != ")" && next != "!" && next != "?") return std::nullopt;
  }
  return v;
}

Words ordinal(long day) { return ordinal_words(std::to_string(day)); }

Words year_spoken(const std::string& y) {
  if (y.size() == 4) return year_words(y);
  if (y.size() == 2 && y[0] == '0') return Words{"oh", digit_words(y.substr(1))[0]};
  return cardinal_words(y);
}

Words full_date(long day, int month, const std::string& year, const Dialect& d) {
  Words w;
  if (d.british) {
    w = {"the"};
    append(w, ordinal(day));
    w.emplace_back("of");
    w.emplace_back(kMonths[month]);
  } else {
    w = {kMonths[month]};
    append(w, ordinal(day));
  }
  if (!year.empty()) {
    w.emplace_back(",");
    append(w, year_spoken(year));
  }
  return w;
}

bool numeric_date(const std::string& a, const Dialect& d, Words& out);

// "2024-03-15", "12-25-2023", "2024/03/15": five tokens written together (the tokenizer splits at a
// dash between digits), read as the one-token forms are.
size_t split_date(const std::vector<Token>& toks, size_t i, const Dialect& d, Words& out) {
  if (i + 4 >= toks.size()) return 0;
  for (size_t k = i; k < i + 4; ++k)
    if (!joined(toks, k) || !is_free(toks[k])) return 0;
  if (!is_one_of(toks, i + 1, {"-", "/"}) || !is_one_of(toks, i + 3, {"-", "/"}) || !is_free(toks[i + 4])) return 0;
  std::string all;
  for (size_t k = i; k <= i + 4; ++k) all += ascii(toks[k]);
  return numeric_date(all, d, out) ? 5 : 0;
}

// "03/15/2024", "15.03.2024", "3/15/24" as one token (also "2024/03/15").
bool numeric_date(const std::string& a, const Dialect& d, Words& out) {
  char sep = 0;
  std::vector<std::string> parts(1);
  for (char c : a) {
    if (c == '/' || c == '.' || c == '-') {
      if (sep && c != sep) return false;
      sep = c;
      parts.emplace_back();
    } else if (c >= '0' && c <= '9') {
      parts.back().push_back(c);
    } else {
      return false;
    }
  }
  if (parts.size() != 3) return false;
  for (const auto& p : parts)
    if (p.empty()) return false;
  if (parts[0].size() == 4 && sep != '.') {  // year first
    const auto m = int_value(parts[1]), dd = int_value(parts[2]);
    if (!m || !dd || *m < 1 || *m > 12 || *dd < 1 || *dd > 31 || parts[1].size() > 2 || parts[2].size() > 2) return false;
    out = full_date(*dd, static_cast<int>(*m - 1), parts[0], d);
    return true;
  }
  if (parts[0].size() > 2 || parts[1].size() > 2 || (parts[2].size() != 2 && parts[2].size() != 4)) return false;
  const long a0 = *int_value(parts[0]), a1 = *int_value(parts[1]);
  // "3.10.12" is a version number and "10-12-24" a code: dots and dashes need a four-digit year.
  if ((sep == '-' || sep == '.') && parts[2].size() != 4) return false;
  bool day_first = d.british || sep == '.';
  if (a0 > 12) day_first = true;
  if (a1 > 12) day_first = false;
  const long day = day_first ? a0 : a1, month = day_first ? a1 : a0;
  if (day < 1 || day > 31 || month < 1 || month > 12) return false;
  out = full_date(day, static_cast<int>(month - 1), parts[2], d);
  return true;
}

}  // namespace

void normalize_dates(std::vector<Token>& toks, const Dialect& d) {
  for (size_t i = 0; i < toks.size(); ++i) {
    if (!is_free(toks[i]) || toks[i].text.empty()) continue;
    // Every form here starts with a digit or a capital letter.
    const char32_t first = toks[i].text[0];
    if (!(first >= U'0' && first <= U'9') && !(first >= U'A' && first <= U'Z')) continue;
    Words w;
    if (size_t n = split_date(toks, i, d, w)) {
      i = replace(toks, i, i + n, w) - 1;
      continue;
    }
    const std::string a = ascii(toks[i]);
    if (!a.empty() && a[0] >= '0' && a[0] <= '9' && numeric_date(a, d, w)) {
      i = replace(toks, i, i + 1, w) - 1;
      continue;
    }
    int month = -1;
    // Month then day: "July 4", "Jan. 5"
    if (size_t n = month_at(toks, i, month)) {
      const std::string written = a;
      // Bare "May"/"Mar"/"Jan" (a modal, a verb, a name) only count with a day number after them.
      if (auto day = day_number(toks, i + n)) {
        Words words = {kMonths[month]};
        if (d.british) words.emplace_back("the");
        append(words, ordinal(*day));
        i = replace(toks, i, i + n + 1, words) - 1;
        continue;
      }
      // An abbreviation with its period, before a year or on its own: "Dec. 2024", "in Jan."
      const bool dotted = n == 2 || written.back() == '.';
      if (written != kMonths[month] && dotted) {
        i = replace(toks, i, i + n, {kMonths[month]}) - 1;
        continue;
      }
      continue;
    }
    // Day then month: "4 July", "12 May 2003"
    if (auto day = day_number(toks, i); day && !(i > 0 && ascii(toks[i - 1]) == "$")) {
      size_t n = month_at(toks, i + 1, month);
      if (n) {
        Words words = {"the"};
        append(words, ordinal(*day));
        words.emplace_back("of");
        words.emplace_back(kMonths[month]);
        i = replace(toks, i, i + 1 + n, words) - 1;
        continue;
      }
    }
    // Day-of-week abbreviations: "Mon., Jan. 5", "Fri 12 May", "Sat., 9 a.m."
    for (const auto& day : kDayAbbrevs) {
      size_t n = abbreviation_at(toks, i, day.written, true);
      if (!n) continue;
      const bool with_dot = n == 2 || a.back() == '.';
      const size_t next = i + n;
      int m2;
      const bool before_date = next < toks.size() && (ascii(toks[next]) == "," || month_at(toks, next, m2) ||
                                                      day_number(toks, next));
      // "Sun"/"Sat"/"Wed" are words too: they need their period or a date after them.
      if (before_date || (with_dot && day.written != "Sun")) {
        i = replace(toks, i, next, {day.full}) - 1;
      }
      break;
    }
  }
}

}  // namespace kokoro::en::norm
