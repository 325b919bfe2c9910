// What every language's G2P is spared, applied to each line before it (Frontend::segment and ::normalize):
//   - a character repeated more than kMaxRepeat times in a row is kept kMaxRepeat times: "soooooooo" ->
//     "soooo", a thousand "a" -> "aaaa", "!!!!!!!" -> "!!!!", "*******" -> "****". Digits are never cut
//     (numbers);
//   - a punctuation mark or symbol repeated with only spaces between (". . . . . .") likewise: ". . . .";
//   - the same emoji repeated (with or without spaces) is one emoji ("😀😀😀" reads "grinning face"
//     once); with drop_emoji, every emoji is taken out (replaced by a space).
// A kept character's byte range grows over what it stands for, so word spans still cover the whole run.
// And it tells a line that says something from one of punctuation and symbols only, which is a pause.
#pragma once
#include <cstddef>
#include <vector>

#include "frontend/utf8.h"

namespace kokoro {

inline constexpr size_t kMaxRepeat = 4;  // no English word has a letter four times in a row; "IIII" on clocks

void filter_line(std::vector<utf8::CodePoint>& line, bool drop_emoji);

enum class LineContent {
  nothing,     // empty, spaces, control characters, U+FFFD (invalid bytes): silent, no segment
  marks_only,  // punctuation, symbols, marks and nothing else: a pause, never model output
  speech,      // a letter, a number or an emoji
};
LineContent line_content(const std::vector<utf8::CodePoint>& line);

}  // namespace kokoro
