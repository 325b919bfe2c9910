// The cues of a text: what one note-on speaks. A cue is a sentence, so that a MIDI track can place each line
// of a script at its bar. Byte ranges into the text, so that word events can point into the whole text.
//
// Rules (docs/plugin.md, "Cues"):
//   - every line break ends a cue; blank lines are skipped;
//   - within a line, a sentence ends after . ! ? or … (with the closing quotes and brackets after them)
//     when whitespace follows, and right after the full-width 。！？ (with their closing brackets);
//   - a period after a common abbreviation (Mr, Dr, St, e.g., ...) or a single letter (an initial) ends
//     nothing;
//   - an SSML document (text starting with <speak) is one cue: its markup spans sentences.
// The engine splits each cue again as it always does; these rules only choose where a note-on stops.
#pragma once
#include <cstddef>
#include <string_view>
#include <vector>

namespace kokoro::lv2 {

struct Cue {
  std::size_t begin = 0, end = 0;  // bytes [begin, end) of the text, without surrounding whitespace
};

std::vector<Cue> split_cues(std::string_view text);

// True for text that the engine reads as SSML (FrontendOptions::ssml = automatic: it starts with <speak).
bool is_ssml(std::string_view text);

}  // namespace kokoro::lv2
