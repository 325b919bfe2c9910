// Japanese kana -> Kokoro's Japanese phoneme symbols, as misaki 0.9.4's ja G2P (its cutlet path, which
// KPipeline('j') uses for Kokoro-82M v1.0) reads a word's hiragana reading: one IPA-like syllable per kana
// (き kʲi, し ɕi, つ ʦɨ, ふ ɸɯ, ら ɾa, わ βa ...), contracted syllables for kana + small kana (きゃ kʲa,
// ティ tʲi), ー lengthens (ː), っ is a glottal stop (ʔ), and ん assimilates to what follows (m, ŋ, ɲ, n,
// else ɴ).
#pragma once
#include <string>
#include <string_view>

namespace kokoro::ja {

// Katakana (U+30A1..U+30F6, ヽ ヾ) -> hiragana; everything else unchanged (jaconv.kata2hira's range).
std::u32string katakana_to_hiragana(std::u32string_view s);

// The phonemes of one word's hiragana reading (misaki's per-kana rules with both neighbours).
std::u32string reading_to_phonemes(std::u32string_view hiragana);

// A symbol character's phonemes from misaki's table (。 -> ".", 「 -> “, ・ -> " "), or the character
// itself when the table has none (misaki passes unknown symbols through unchanged).
std::u32string symbol_to_phonemes(std::u32string_view symbols);

// Capital Latin letters read by their Japanese names (NHK -> エヌエイチケー), as katakana.
std::u32string latin_letter_names(std::u32string_view capitals);

}  // namespace kokoro::ja
