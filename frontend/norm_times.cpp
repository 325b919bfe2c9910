// Clock times. misaki already reads "3:30" and "7 p.m." well ("three thirty", "seven P M"), so those are
// left to it; this pass takes the forms it gets wrong:
//   2:00 a.m. -> two a.m.       10:05 -> ten oh five       03:00 -> three o'clock
//   14:00     -> fourteen hundred  00:00 -> midnight       09:30 -> nine thirty
//   2pm, 2:30PM, 11 AM, 5 P.M. -> the number and "a.m."/"p.m." (read as the letters A M / P M)
//   12:00 noon -> twelve noon
#include "frontend/norm_passes.h"
#include "frontend/norm_support.h"
#include "frontend/unicode_text.h"

namespace kokoro::en::norm {

namespace {

// "am", "a.m.", "AM", "A.M", "a.m" ... -> "a.m." or "p.m."; empty when not a meridiem.
std::string meridiem(std::string s) {
  std::string letters;
  for (char c : s) {
    if (c == '.') continue;
    letters.push_back(static_cast<char>(std::tolower(static_cast<unsigned char>(c))));
  }
  if (letters == "am") return "a.m.";
  if (letters == "pm") return "p.m.";
  return {};
}

struct Clock {
  long hour = -1, minute = -1;
  bool hour_zero_padded = false;
};

std::optional<Clock> parse_clock(const std::string& a) {
  const size_t colon = a.find(':');
  if (colon == std::string::npos || colon == 0 || colon > 2 || a.size() != colon + 3) return std::nullopt;
  const auto h = int_value(a.substr(0, colon)), m = int_value(a.substr(colon + 1));
  if (!h || !m || *h > 24 || *m > 59) return std::nullopt;
  return Clock{*h, *m, colon == 2 && a[0] == '0'};
}

Words minutes_words(long minute) {
  if (minute == 0) return {};
  if (minute < 10) return {"oh", digit_words(std::to_string(minute))[0]};
  return cardinal_words(std::to_string(minute));
}

// With a.m./p.m.: "two a.m.", "ten oh five p.m.".
Words twelve_hour(const Clock& c, const std::string& mer) {
  Words w = cardinal_words(std::to_string(c.hour == 0 ? 12 : c.hour));
  append(w, minutes_words(c.minute));
  w.push_back(mer);
  return w;
}

// Without: o'clock for whole hours of a 12-hour clock, "hundred" for whole hours of a 24-hour one.
Words plain_clock(const Clock& c) {
  if (c.hour == 0 && c.minute == 0) return {"midnight"};
  if (c.hour == 24 && c.minute == 0) return {"midnight"};
  Words w = c.hour == 0 ? Words{"zero"} : cardinal_words(std::to_string(c.hour));
  if (c.minute == 0) {
    if (c.hour <= 12) {
      w.emplace_back("o'clock");
    } else {
      w.emplace_back("hundred");
    }
    return w;
  }
  append(w, minutes_words(c.minute));
  return w;
}

// Number with the meridiem attached: "2pm", "11AM", "2:30pm".
bool attached_meridiem(const std::string& a, std::string& number, std::string& mer) {
  size_t k = a.size();
  while (k > 0 && (std::isalpha(static_cast<unsigned char>(a[k - 1])) || a[k - 1] == '.')) --k;
  if (k == 0 || k == a.size()) return false;
  mer = meridiem(a.substr(k));
  number = a.substr(0, k);
  return !mer.empty();
}

}  // namespace

void normalize_times(std::vector<Token>& toks, const Dialect&) {
  // "09:00-17:00": the dash between two times is read "to".
  for (size_t i = 0; i + 2 < toks.size(); ++i) {
    if (is_free(toks[i]) && !toks[i].text.empty() && text::is_ascii_digit(toks[i].text[0]) && joined(toks, i) &&
        parse_clock(ascii(toks[i])) && is_one_of(toks, i + 1, {"-", "–"}) &&
        joined(toks, i + 1) && is_free(toks[i + 2]) && parse_clock(ascii(toks[i + 2])))
      read_as(toks, i + 1, "to");
  }
  for (size_t i = 0; i < toks.size(); ++i) {
    if (!is_free(toks[i]) || toks[i].text.empty() || !text::is_ascii_digit(toks[i].text[0])) continue;
    const std::string a = ascii(toks[i]);
    std::string number, mer;
    size_t end = i + 1;
    if (attached_meridiem(a, number, mer)) {
      // "2pm" / "2:30pm"
    } else {
      number = a;
      // "a.m." as one token, or "a" "." "m" "." pieces, or "AM"/"pm".
      if (end < toks.size() && is_free(toks[end])) {
        std::string written = ascii(toks[end]);
        size_t k = end + 1;
        while (k < toks.size() && joined(toks, k - 1) && is_free(toks[k]) && written.size() < 5 &&
               (ascii(toks[k]) == "." || ascii(toks[k]) == "m" || ascii(toks[k]) == "M" || ascii(toks[k]) == "m." ||
                ascii(toks[k]) == "M."))
          written += ascii(toks[k++]);
        mer = meridiem(written);
        if (!mer.empty()) end = k;
      }
    }
    const auto clock = parse_clock(number);
    const auto hour = int_value(number);
    if (!mer.empty()) {
      Clock c;
      if (clock) {
        c = *clock;
      } else if (hour && number.size() <= 2 && *hour >= 1 && *hour <= 12) {
        c = {*hour, 0, false};
      } else {
        continue;
      }
      if (c.hour > 12) continue;
      // misaki reads "7 p.m." and "3:30 p.m." well; only the forms it misreads are replaced.
      const bool misaki_reads_it = end == i + 2 && ascii(toks[i + 1]) == mer && !c.hour_zero_padded &&
                                   (!clock || c.minute >= 10);
      if (misaki_reads_it) continue;
      i = replace(toks, i, end, twelve_hour(c, mer)) - 1;
      continue;
    }
    if (!clock) continue;
    // "12:00 noon", "12 midnight" keep their word.
    if (clock->minute >= 10 && !clock->hour_zero_padded && clock->hour <= 23) continue;  // misaki: "three thirty"
    if (clock->minute == 0 && (is_one_of(toks, i + 1, {"noon", "midnight"}))) {
      i = replace(toks, i, i + 1, cardinal_words(std::to_string(clock->hour))) - 1;
      continue;
    }
    i = replace(toks, i, i + 1, plain_clock(*clock)) - 1;
  }
}

}  // namespace kokoro::en::norm
