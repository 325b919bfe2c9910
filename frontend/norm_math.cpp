// Math symbols misaki drops: "2^8" -> two to the power of eight, "3*4" -> three times four,
// "x²"/"5²" -> squared, "³" -> cubed. (+, −, ×, ÷, =, ≈, ≠, ≤, ≥, ± are read by misaki/espeak already.)
#include "frontend/norm_passes.h"
#include "frontend/norm_support.h"
#include "frontend/unicode_text.h"

namespace kokoro::en::norm {

void normalize_math(std::vector<Token>& toks, const Dialect&) {
  auto is_operand = [&](size_t k) {
    return k < toks.size() && !toks[k].text.empty() &&
           (text::is_ascii_digit(toks[k].text[0]) || (toks[k].text.size() == 1 && text::is_letter(toks[k].text[0])));
  };
  for (size_t i = 1; i + 1 < toks.size(); ++i) {
    if (!is_free(toks[i]) || !is_operand(i - 1) || !is_operand(i + 1)) continue;
    const std::string a = ascii(toks[i]);
    if (a == "^") read_as(toks, i, "to the power of");
    if (a == "*") read_as(toks, i, "times");
  }
  // "x^2" stays one token (the tokenizer splits "^" only after a digit).
  for (size_t i = 0; i < toks.size(); ++i) {
    if (!is_free(toks[i])) continue;
    const std::string a = ascii(toks[i]);
    const size_t caret = a.find('^');
    if (caret == std::string::npos || caret == 0 || caret + 1 >= a.size()) continue;
    auto operand = [](const std::string& s) -> Words {
      if (is_plain_number(s)) return number_words(s);
      if (s.size() == 1 && std::isalpha(static_cast<unsigned char>(s[0]))) return {s};
      return {};
    };
    const Words base = operand(a.substr(0, caret)), power = operand(a.substr(caret + 1));
    if (base.empty() || power.empty()) continue;
    Words w = base;
    append(w, {"to", "the", "power", "of"});
    append(w, power);
    i = replace(toks, i, i + 1, w) - 1;
  }
  for (size_t i = 0; i < toks.size(); ++i) {
    if (!is_free(toks[i])) continue;
    const std::u32string& t = toks[i].text;
    if (t.size() < 2 || (t.back() != U'²' && t.back() != U'³')) continue;
    const std::u32string base = t.substr(0, t.size() - 1);
    const std::string a = ascii(base);
    Words w;
    if (is_plain_number(a)) {
      w = number_words(a);
    } else if (base.size() == 1 && text::is_letter(base[0])) {
      w = {a};
    } else {
      continue;
    }
    w.emplace_back(t.back() == U'²' ? "squared" : "cubed");
    i = replace(toks, i, i + 1, w) - 1;
  }
}

}  // namespace kokoro::en::norm
