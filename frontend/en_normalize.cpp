#include "frontend/en_normalize.h"

#include "frontend/norm_passes.h"
#include "frontend/utf8.h"

namespace kokoro::en {

void normalize_tokens(std::vector<Token>& tokens, bool british) {
  const norm::Dialect d{british};
  // Order matters where forms overlap: a date or a phone number is also digits and dashes, a time is
  // also a number, a unit after money ("$5 m") is a magnitude, and ranges ("10-20 km") come before units.
  norm::normalize_dates(tokens, d);
  norm::normalize_phone_numbers(tokens, d);
  norm::normalize_web(tokens, d);
  norm::normalize_times(tokens, d);
  norm::normalize_money(tokens, d);
  norm::normalize_numbers(tokens, d);
  norm::normalize_units(tokens, d);
  norm::normalize_math(tokens, d);
  norm::normalize_roman(tokens, d);
  norm::normalize_abbreviations(tokens, d);
}

std::string normalized_text(const std::vector<Token>& tokens) {
  std::u32string out;
  for (const auto& t : tokens) {
    // Markup and user-lexicon phonemes are shown as misaki's markup, so the text says what is read.
    if (t.phonemes && t.rating == 5) {
      out += U"[" + t.text + U"](/" + *t.phonemes + U"/)";
    } else {
      out += t.alias ? *t.alias : t.text;
    }
    if (t.space_after) out.push_back(U' ');
  }
  while (!out.empty() && out.back() == U' ') out.pop_back();
  return utf8::encode(out);
}

}  // namespace kokoro::en
