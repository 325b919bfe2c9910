#include "frontend/zh_normalize.h"

#include <functional>

#include "frontend/unicode_text.h"

namespace kokoro::zh {

namespace {

constexpr std::u32string_view kDigitsLow = U"零一二三四五六七八九";
constexpr std::u32string_view kUnits[16] = {U"",   U"十", U"百", U"千", U"万", U"十", U"百", U"千",
                                            U"亿", U"十", U"百", U"千", U"万", U"十", U"百", U"千"};

bool is_digit(char32_t c) { return c >= U'0' && c <= U'9'; }

// Python's str.replace: non-overlapping, left to right.
std::u32string replace_all(std::u32string s, std::u32string_view from, std::u32string_view to) {
  std::u32string out;
  size_t i = 0;
  while (true) {
    const size_t j = s.find(from, i);
    if (j == std::u32string::npos) break;
    out.append(s, i, j - i);
    out.append(to);
    i = j + from.size();
  }
  out.append(s, i, std::u32string::npos);
  return out;
}

std::optional<std::u32string> integer_low(std::u32string_view digits) {
  size_t z = 0;  // int() drops leading zeros
  while (z + 1 < digits.size() && digits[z] == U'0') ++z;
  digits.remove_prefix(z);
  const size_t n = digits.size();
  if (n == 0) return std::nullopt;
  if (n > 16) return std::nullopt;
  std::u32string out;
  for (size_t i = 0; i < n; ++i) {
    const int d = static_cast<int>(digits[i] - U'0');
    if (d) {
      out += kDigitsLow[d];
      out += kUnits[n - i - 1];
    } else {
      if ((n - i - 1) % 4 == 0) {
        out += kDigitsLow[0];
        out += kUnits[n - i - 1];
      }
      if (i > 0 && out.back() != U'零') out += kDigitsLow[0];
    }
  }
  out = replace_all(out, U"零零", U"零");
  out = replace_all(out, U"零万", U"万");
  out = replace_all(out, U"零亿", U"亿");
  out = replace_all(out, U"亿万", U"亿");
  size_t b = 0, e = out.size();
  while (b < e && out[b] == U'零') ++b;
  while (e > b && out[e - 1] == U'零') --e;
  out = out.substr(b, e - b);
  // ([万亿])零([一-九][千]) -> \1\2
  static constexpr std::u32string_view kOneToNine = U"一二三四五六七八九壹贰叁肆伍陆柒捌玖";
  std::u32string fixed;
  for (size_t i = 0; i < out.size(); ++i) {
    if ((out[i] == U'万' || out[i] == U'亿') && i + 3 < out.size() + 0 && out[i + 1] == U'零' &&
        kOneToNine.find(out[i + 2]) != std::u32string_view::npos && (out[i + 3] == U'千' || out[i + 3] == U'仟')) {
      fixed += out[i];
      fixed += out[i + 2];
      fixed += out[i + 3];
      i += 3;
      continue;
    }
    fixed += out[i];
  }
  out = fixed;
  if (out.size() >= 2 && out[0] == U'一' && out[1] == U'十') out.erase(0, 1);
  if (out.empty()) out = U"零";
  return out;
}

std::u32string direct(std::u32string_view digits) {
  std::u32string out;
  for (char32_t c : digits) out += c == U'.' ? U'点' : kDigitsLow[c - U'0'];
  return out;
}

size_t digits_at(const std::vector<Char>& t, size_t i) {
  size_t j = i;
  while (j < t.size() && is_digit(t[j].c)) ++j;
  return j - i;
}

// `-?(\d+\.)?\d+` at i (minus optional when allowed): end of the match or 0 (no match).
size_t number_end(const std::vector<Char>& t, size_t i, bool allow_minus, bool allow_decimal = true) {
  size_t j = i;
  if (allow_minus && j < t.size() && t[j].c == U'-') ++j;
  const size_t d1 = digits_at(t, j);
  if (!d1) return 0;
  j += d1;
  if (allow_decimal && j + 1 < t.size() && t[j].c == U'.' && is_digit(t[j + 1].c)) j += 1 + digits_at(t, j + 1);
  return j;
}

bool measure_word_at(const std::vector<Char>& t, size_t i) {
  static constexpr std::u32string_view kSingle = U"斤克吨米升元角分个只条张块瓶杯份本辆台匹头位亩秒天半";
  static constexpr std::u32string_view kDouble[] = {U"千克", U"公斤", U"厘米", U"毫米", U"公里", U"毫升", U"小时"};
  if (i >= t.size()) return false;
  if (kSingle.find(t[i].c) != std::u32string_view::npos) return true;
  for (auto d : kDouble)
    if (i + 1 < t.size() && t[i].c == d[0] && t[i + 1].c == d[1]) return true;
  return false;
}

std::u32string text_of(const std::vector<Char>& t, size_t b, size_t e) {
  std::u32string s;
  for (size_t i = b; i < e; ++i) s.push_back(t[i].c);
  return s;
}

// One re.sub pass: `match(t, i)` returns the end of a match starting at i (or i for none) and
// `convert` its replacement (nullopt: keep the text, as cn2an does when a conversion fails).
using Matcher = std::function<size_t(const std::vector<Char>&, size_t)>;
using Converter = std::function<std::optional<std::u32string>(const std::u32string&)>;

std::vector<Char> substitute(const std::vector<Char>& t, const Matcher& match, const Converter& convert) {
  std::vector<Char> out;
  out.reserve(t.size());
  size_t i = 0;
  while (i < t.size()) {
    const size_t e = match(t, i);
    if (e > i) {
      const std::optional<std::u32string> rep = convert(text_of(t, i, e));
      if (rep) {
        for (char32_t c : *rep) out.push_back({c, t[i].begin, t[e - 1].end});
      } else {
        out.insert(out.end(), t.begin() + static_cast<long>(i), t.begin() + static_cast<long>(e));
      }
      i = e;
    } else {
      out.push_back(t[i]);
      ++i;
    }
  }
  return out;
}

}  // namespace

std::optional<std::u32string> number_to_chinese(std::u32string_view number) {
  std::u32string sign;
  if (!number.empty() && number[0] == U'-') {
    sign = U"负";
    number.remove_prefix(1);
  }
  const size_t dot = number.find(U'.');
  auto integer = integer_low(number.substr(0, dot));
  if (!integer) return std::nullopt;
  std::u32string out = sign + *integer;
  if (dot != std::u32string_view::npos) {
    std::u32string_view dec = number.substr(dot + 1);
    if (dec.size() > 16) dec = dec.substr(0, 16);
    if (!dec.empty()) out += U'点';
    for (char32_t c : dec) out += kDigitsLow[c - U'0'];
  }
  return out;
}

std::vector<Char> normalize(std::vector<Char> t) {
  // Python's \d matches full-width digits and cn2an converts them to ASCII before reading them.
  for (Char& ch : t)
    if (ch.c >= 0xFF10 && ch.c <= 0xFF19) ch.c = U'0' + (ch.c - 0xFF10);
  const auto low = [](std::u32string_view s) { return number_to_chinese(s); };

  // Ranges before a measure word: \d+(\.\d+)?-\d+(\.\d+)?(?=measure word)
  t = substitute(
      t,
      [](const std::vector<Char>& s, size_t i) -> size_t {
        const size_t a = number_end(s, i, false);
        if (!a || a >= s.size() || s[a].c != U'-') return i;
        const size_t b = number_end(s, a + 1, false);
        return b && measure_word_at(s, b) ? b : i;
      },
      [&](const std::u32string& m) -> std::optional<std::u32string> {
        const size_t dash = m.find(U'-');
        auto a = low(std::u32string_view(m).substr(0, dash));
        auto b = low(std::u32string_view(m).substr(dash + 1));
        if (!a || !b) return std::nullopt;
        return *a + U"到" + *b;
      });
  // Dates: (\d{2,4}年)?(\d{1,2}月)?(\d{1,2}日)?
  t = substitute(
      t,
      [](const std::vector<Char>& s, size_t i) -> size_t {
        size_t j = i;
        auto part = [&](size_t lo, size_t hi, char32_t mark) {
          const size_t n = digits_at(s, j);
          if (n >= lo && n <= hi && j + n < s.size() && s[j + n].c == mark) j += n + 1;
        };
        part(2, 4, U'年');
        part(1, 2, U'月');
        part(1, 2, U'日');
        return j;
      },
      [&](const std::u32string& m) -> std::optional<std::u32string> {
        std::u32string out;
        for (size_t i = 0; i < m.size();) {
          if (!is_digit(m[i])) {
            out.push_back(m[i++]);
            continue;
          }
          size_t j = i;
          while (j < m.size() && is_digit(m[j])) ++j;
          const std::u32string_view run = std::u32string_view(m).substr(i, j - i);
          if (j < m.size() && m[j] == U'年') out += direct(run);
          else if (auto r = low(run)) out += *r;
          else return std::nullopt;
          i = j;
        }
        return out;
      });
  // Fractions: \d+/\d+ -> 分之
  t = substitute(
      t,
      [](const std::vector<Char>& s, size_t i) -> size_t {
        const size_t a = digits_at(s, i);
        if (!a || i + a >= s.size() || s[i + a].c != U'/') return i;
        const size_t b = digits_at(s, i + a + 1);
        return b ? i + a + 1 + b : i;
      },
      [&](const std::u32string& m) -> std::optional<std::u32string> {
        const size_t slash = m.find(U'/');
        auto num = low(std::u32string_view(m).substr(0, slash));
        auto den = low(std::u32string_view(m).substr(slash + 1));
        if (!num || !den) return std::nullopt;
        return *den + U"分之" + *num;
      });
  // Percent: -?(\d+\.)?\d+%
  t = substitute(
      t,
      [](const std::vector<Char>& s, size_t i) -> size_t {
        const size_t e = number_end(s, i, true);
        return e && e < s.size() && s[e].c == U'%' ? e + 1 : i;
      },
      [&](const std::u32string& m) -> std::optional<std::u32string> {
        auto r = low(std::u32string_view(m).substr(0, m.size() - 1));
        if (!r) return std::nullopt;
        return U"百分之" + *r;
      });
  // Celsius: \d+℃
  t = substitute(
      t,
      [](const std::vector<Char>& s, size_t i) -> size_t {
        const size_t a = digits_at(s, i);
        return a && i + a < s.size() && s[i + a].c == U'℃' ? i + a + 1 : i;
      },
      [&](const std::u32string& m) -> std::optional<std::u32string> {
        auto r = low(std::u32string_view(m).substr(0, m.size() - 1));
        if (!r) return std::nullopt;
        return *r + U"摄氏度";
      });
  // Every other number: -?(\d+\.)?\d+
  t = substitute(
      t, [](const std::vector<Char>& s, size_t i) -> size_t { const size_t e = number_end(s, i, true); return e ? e : i; },
      [&](const std::u32string& m) { return low(m); });

  // misaki's map_punctuation.
  std::vector<Char> out;
  out.reserve(t.size() + t.size() / 4);
  for (const Char& ch : t) {
    auto put = [&](std::u32string_view s) {
      for (char32_t c : s) out.push_back({c, ch.begin, ch.end});
    };
    switch (ch.c) {
      case U'、': case U'，': put(U", "); break;
      case U'。': case U'．': put(U". "); break;
      case U'！': put(U"! "); break;
      case U'：': put(U": "); break;
      case U'；': put(U"; "); break;
      case U'？': put(U"? "); break;
      case U'«': case U'《': case U'「': case U'【': put(U" “"); break;
      case U'»': case U'》': case U'」': case U'】': put(U"” "); break;
      case U'（': put(U" ("); break;
      case U'）': put(U") "); break;
      default: out.push_back(ch);
    }
  }
  // str.strip()
  size_t b = 0, e = out.size();
  while (b < e && text::is_space(out[b].c)) ++b;
  while (e > b && text::is_space(out[e - 1].c)) --e;
  return std::vector<Char>(out.begin() + static_cast<long>(b), out.begin() + static_cast<long>(e));
}

}  // namespace kokoro::zh
