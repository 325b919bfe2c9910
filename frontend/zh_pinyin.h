// Mandarin syllables: pinyin as the dictionaries write it (tone marks) -> numbered form -> Kokoro's
// Mandarin symbols, as misaki's legacy zh G2P (the path KPipeline 0.9.4 takes for Kokoro-82M v1.0) reads
// pypinyin's TONE3 output: strict initials and finals (y/w are not initials; iu, ui, un are iou, uei, uen;
// u after j q x is ü), then IPA after pinyin-to-ipa's first variant, tone contours as arrows
// (1 →, 2 ↗, 3 ↓, 4 ↘, neutral nothing) written after the nucleus, and zi/ci/si, zhi/chi/shi/ri as ɨ.
#pragma once
#include <string>
#include <string_view>

namespace kokoro::zh {

// "zhōng" -> "zhong1", "lǜ" -> "lv4", "de" -> "de5" (pypinyin Style.TONE3, neutral_tone_with_five,
// ü as v). Returns "" for text that is not a syllable with at most one tone mark.
std::string numbered_pinyin(std::u32string_view marked);

// "zhong1" -> "ꭧʊ→ŋ", "lv4" -> "ly↘", "n2" -> "n↗". Empty when the syllable has no reading (misaki
// raises for those; we stay silent).
std::u32string syllable_ipa(std::string_view numbered);

}  // namespace kokoro::zh
