#include "frontend/en_normalize.h"

#include <algorithm>
#include <iterator>

#include "frontend/norm_passes.h"
#include "frontend/utf8.h"

namespace kokoro::en {

namespace {

void run_passes(std::vector<Token>& tokens, bool british) {
  const norm::Dialect d{british};
  // Order matters where forms overlap: a date or a phone number is also digits and dashes, a time is
  // also a number, a ratio ("16:9") is what is left of colons between numbers once they are not a time,
  // a unit after money ("$5 m") is a magnitude, and ranges ("10-20 km", "70-75°F") come before units.
  // Emoji first: their names are words for every pass after.
  norm::normalize_emoji(tokens, d);
  norm::normalize_dates(tokens, d);
  norm::normalize_phone_numbers(tokens, d);
  norm::normalize_web(tokens, d);
  norm::normalize_ratios(tokens, d);
  norm::normalize_times(tokens, d);
  norm::normalize_money(tokens, d);
  norm::normalize_numbers(tokens, d);
  norm::normalize_temperatures(tokens, d);
  norm::normalize_units(tokens, d);
  norm::normalize_math(tokens, d);
  norm::normalize_roman(tokens, d);
  norm::normalize_abbreviations(tokens, d);
}

}  // namespace

void for_each_piece(std::vector<Token>& tokens, const std::function<void(std::vector<Token>&)>& f) {
  // Replacing tokens inside a vector costs its length, so a long line is worked on in pieces of at most
  // kPiece tokens, cut after a sentence end (or, in text with none, anywhere): linear in the line.
  constexpr size_t kPiece = 256;
  if (tokens.size() <= kPiece) {
    f(tokens);
    return;
  }
  std::vector<Token> out, piece;
  out.reserve(tokens.size() + tokens.size() / 4);
  size_t i = 0;
  while (i < tokens.size()) {
    size_t end = std::min(tokens.size(), i + kPiece);
    if (end < tokens.size()) {
      size_t cut = end;
      while (cut > i + kPiece / 2) {
        const std::u32string& t = tokens[cut - 1].text;
        if (t == U"." || t == U"!" || t == U"?" || t == U";") break;
        --cut;
      }
      if (cut > i + kPiece / 2) end = cut;
    }
    piece.assign(std::make_move_iterator(tokens.begin() + static_cast<std::ptrdiff_t>(i)),
                 std::make_move_iterator(tokens.begin() + static_cast<std::ptrdiff_t>(end)));
    f(piece);
    for (auto& t : piece) out.push_back(std::move(t));
    i = end;
  }
  tokens = std::move(out);
}

void normalize_tokens(std::vector<Token>& tokens, bool british) {
  for_each_piece(tokens, [british](std::vector<Token>& piece) { run_passes(piece, british); });
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
