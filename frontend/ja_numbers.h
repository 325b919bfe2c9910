// Numbers in Japanese text, read as misaki 0.9.4 reads them before tokenization (its num2kana): a run of
// ASCII digits becomes its reading in kana (2024 -> にせんにじゅうよん, 300 -> さんびゃく, 10000 ->
// いちまん, 0 -> ゼロ), up to 9 digits. Longer runs are read digit by digit (misaki writes an English
// error message into the text there, or fails).
#pragma once
#include <string>
#include <string_view>

namespace kokoro::ja {

std::u32string number_to_kana(std::string_view digits);  // digits: non-empty, '0'..'9' only

}  // namespace kokoro::ja
