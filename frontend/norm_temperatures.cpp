// Temperatures in Fahrenheit and Kelvin, however the degree sign and the letter are spaced:
//   98.6°F, 98.6 °F, 98.6° F, 98.6 ° F, -40°F -> ninety eight point six degrees Fahrenheit, minus forty ...
//   100 degrees F -> one hundred degrees Fahrenheit         1°F -> one degree Fahrenheit
//   0°K -> zero degrees Kelvin                              °F alone -> degrees Fahrenheit
// Celsius is left as misaki reads it, "20°C" -> twenty degrees C, which is how it is said in both
// dialects (and what the official pipeline says); so are "20°" (twenty degrees) and a bare "75 F", whose
// letter may be a grade or a row. Spaced forms of Celsius ("20° C", "20 °C") read the same as "20°C".
#include "frontend/norm_passes.h"
#include "frontend/norm_support.h"
#include "frontend/unicode_text.h"
#include "frontend/utf8.h"

namespace kokoro::en::norm {

namespace {

constexpr char32_t kDegree = U'°';

// The scale a letter names: "Fahrenheit", "Kelvin", "C" (said as the letter), or nullptr. A letter with
// a period ("F." at a sentence end) counts; `period` says so.
const char* scale_of(const std::u32string& s, bool& period) {
  period = s.size() == 2 && s[1] == U'.';
  if (s.size() != 1 && !period) return nullptr;
  switch (s[0]) {
    case U'F': return "Fahrenheit";
    case U'K': return "Kelvin";
    case U'C': return "C";
    default: return nullptr;
  }
}

// Token j is a scale letter ("F", "F.") or the degree sign and the letter ("°F", "°F.") when `with_degree`.
const char* scale_token(const std::vector<Token>& toks, size_t j, bool with_degree, bool& period) {
  if (j >= toks.size() || !is_free(toks[j])) return nullptr;
  const std::u32string& t = toks[j].text;
  if (with_degree) return t.size() >= 2 && t[0] == kDegree ? scale_of(t.substr(1), period) : nullptr;
  return scale_of(t, period);
}

// Number (as misaki reads it alone) at the start of a UTF-8 word; its length in bytes, 0 for none.
size_t number_prefix(const std::string& w) {
  size_t k = 0;
  while (k < w.size() && (std::isdigit(static_cast<unsigned char>(w[k])) || w[k] == '.' || w[k] == ',' ||
                          (k == 0 && w[k] == '-')))
    ++k;
  while (k > 0 && (w[k - 1] == '.' || w[k - 1] == ',')) --k;
  return k > 0 && is_plain_number(w.substr(0, k)) ? k : 0;
}

Words degrees(const std::string& number, const char* scale, bool period) {
  Words w = number.empty() ? Words{} : number_words(number);
  w.emplace_back(!number.empty() && is_singular(number) ? "degree" : "degrees");
  w.emplace_back(scale);
  if (period) w.emplace_back(".");
  return w;
}

}  // namespace

void normalize_temperatures(std::vector<Token>& toks, const Dialect&) {
  for (size_t i = 0; i < toks.size(); ++i) {
    if (!is_free(toks[i]) || toks[i].text.empty()) continue;
    const std::u32string& t = toks[i].text;
    bool period = false;
    // "100 degrees F": only the letter changes.
    if (const char* scale = scale_of(t, period); scale && t[0] != U'C' && i >= 2 &&
        (toks[i - 1].text == U"degrees" || toks[i - 1].text == U"degree") &&
        number_prefix(utf8::encode(toks[i - 2].text)) == toks[i - 2].text.size()) {
      Words w{scale};
      if (period) w.emplace_back(".");
      i = replace(toks, i, i + 1, w) - 1;
      continue;
    }
    // "°F" after a word, not a number: "set it in °F".
    if (t[0] == kDegree) {
      if (const char* scale = scale_token(toks, i, true, period); scale && t[1] != U'C')
        i = replace(toks, i, i + 1, degrees("", scale, period)) - 1;
      continue;
    }
    if (!(text::is_ascii_digit(t[0]) || t[0] == U'-' || t[0] == U'.')) continue;
    const std::string w = utf8::encode(t);
    const size_t n = number_prefix(w);
    if (n == 0) continue;
    const std::string number = w.substr(0, n);
    const std::u32string rest = utf8::to_u32(w.substr(n));
    const char* scale = nullptr;
    size_t end = i + 1;
    if (rest.size() >= 2 && rest[0] == kDegree) {
      scale = scale_of(rest.substr(1), period);  // 98.6°F
    } else if (rest == U"°") {
      scale = scale_token(toks, i + 1, false, period);  // 98.6° F
      end = i + 2;
    } else if (rest.empty()) {
      if ((scale = scale_token(toks, i + 1, true, period))) {  // 98.6 °F
        end = i + 2;
      } else if (i + 1 < toks.size() && is_free(toks[i + 1]) && toks[i + 1].text == U"°" &&
                 (scale = scale_token(toks, i + 2, false, period))) {
        end = i + 3;  // 98.6 ° F
      }
    }
    if (!scale) continue;
    // Celsius joined as misaki has it ("20°C") is its reading already.
    if (scale[0] == 'C' && end == i + 1) continue;
    i = replace(toks, i, end, degrees(number, scale, period)) - 1;
  }
}

}  // namespace kokoro::en::norm
