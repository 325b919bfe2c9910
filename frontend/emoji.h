// Emoji in text: where a sequence starts and ends (a pictograph with its variation selector and skin tone,
// zero-width-joined sequences such as "👩‍🚒", flags "🇯🇵", keycaps "1️⃣"), and the name a screen reader says
// for it, from Unicode CLDR's text-to-speech annotations (Debian's unicode-cldr-core, compiled in at
// build time by cmake/emoji_names.cmake): "😀" -> grinning face, "✅" -> check mark button (en-gb: tick
// button). Skin tones are not read ("👍🏽" -> thumbs up). Emoji newer than the CLDR data are named by their
// Unicode character names (ICU).
//
// Symbols that default to text presentation ("©", "™", "→", "❤" without U+FE0F) are not emoji here: they
// stay with the G2P's symbol readings.
#pragma once
#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

#include "frontend/utf8.h"

namespace kokoro::emoji {

// Code points of the emoji sequence that starts at line[i]; 0 when none starts there.
size_t sequence_length(const std::vector<utf8::CodePoint>& line, size_t i);
// The same for a string: whether all of `s` is one emoji sequence.
bool is_sequence(std::u32string_view s);

// The words said for an emoji sequence, ready for G2P ("flag: Japan" -> "Japan flag", "keycap: 1" -> "1",
// "family: man, woman, boy" -> "family , man , woman , boy" with commas as words); empty when the
// sequence has no name at all.
std::vector<std::string> spoken_name(std::u32string_view sequence, bool british);

// The sequence without what does not change its name (U+FE0F/U+FE0E, skin tones): two sequences with the
// same key are the same emoji for reading ("👍" and "👍🏽").
std::u32string reading_key(std::u32string_view sequence);

}  // namespace kokoro::emoji
