// Emoji read by name, as screen readers say them (frontend/emoji.h: Unicode CLDR's names):
//   😀 -> grinning face      👍🏽 -> thumbs up      🇯🇵 -> Japan flag      ✅ -> check mark button (en-gb: tick button)
// The line filter (line_filter.h) has already made a run of the same emoji one emoji. Two different emoji
// in a row are said with a short pause between them, and an emoji is a word of its own however it is
// written ("hi😀there"). Symbols shown as text ("©", "→") are not emoji and stay with misaki.
#include "frontend/emoji.h"
#include "frontend/norm_passes.h"
#include "frontend/norm_support.h"
#include "frontend/unicode_text.h"

namespace kokoro::en::norm {

namespace {

bool is_emoji_token(const std::vector<Token>& toks, size_t i) {
  return i < toks.size() && is_free(toks[i]) && !toks[i].text.empty() && emoji::is_sequence(toks[i].text);
}

bool starts_word(const Token& t) {
  return !t.text.empty() && (text::is_letter(t.text[0]) || text::is_decimal_digit(t.text[0]));
}

}  // namespace

void normalize_emoji(std::vector<Token>& toks, const Dialect& d) {
  for (size_t i = 0; i < toks.size(); ++i) {
    if (!is_emoji_token(toks, i)) continue;
    Words words = emoji::spoken_name(toks[i].text, d.british);
    if (words.empty()) continue;
    const bool another = is_emoji_token(toks, i + 1);
    if (another) words.emplace_back(",");
    if (i + 1 < toks.size() && (another || starts_word(toks[i + 1]))) toks[i].space_after = true;
    i = replace(toks, i, i + 1, words) - 1;
  }
}

}  // namespace kokoro::en::norm
