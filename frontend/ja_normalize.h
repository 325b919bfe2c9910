// The text normalisation misaki 0.9.4's Japanese G2P applies before MeCab, keeping for every output
// character the bytes of the caller's text it came from (for word spans):
//   〜/～ before a digit -> から (a range), katakana phonetic extensions (ㇰ ㇱ ...) -> full katakana, NFKC
//   (half-width katakana -> full-width, full-width ASCII -> ASCII, ① -> 1, ㈱ -> (株)), ‘ ’ ” -> ` ' "
//   (mojimoji), and every run of digits -> " " + its kana reading (ja_numbers.h), marked as one number.
// Control characters become spaces.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "frontend/utf8.h"

namespace kokoro::ja {

struct NormChar {
  char32_t cp;
  uint32_t begin, end;  // bytes in the caller's text
  int32_t number = -1;  // >= 0: part of the reading of the number with this index (its kana)
};

std::vector<NormChar> normalize(const std::vector<utf8::CodePoint>& line);

}  // namespace kokoro::ja
