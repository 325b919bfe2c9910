// Mandarin text normalisation as misaki's zh G2P does it before reading: cn2an.transform(text, "an2cn")
// (ranges before measure words "3-5个" -> 三到五, dates "2024年3月15日" -> 二零二四年三月十五日, fractions
// "3/4" -> 四分之三, percent "12.5%" -> 百分之十二点五, "30℃" -> 三十摄氏度, then every other number
// "-1024.5" -> 负一千零二十四点五), then its punctuation mapping (，-> ", ", 。-> ". ", 《》 -> “ ” ...).
// Full-width digits count as digits, as Python's \d does. Every output character keeps the source byte
// range it came from, so word timestamps still point into the caller's text.
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace kokoro::zh {

struct Char {
  char32_t c;
  uint32_t begin, end;  // source bytes
};

// cn2an's an2cn in "low" mode: "-1024.5" -> "负一千零二十四点五"; nullopt where cn2an gives up (more
// than 16 integer digits) and leaves the digits as they are.
std::optional<std::u32string> number_to_chinese(std::u32string_view number);

// The whole normalisation of one line (numbers, then punctuation, then outer white space stripped).
std::vector<Char> normalize(std::vector<Char> text);

}  // namespace kokoro::zh
