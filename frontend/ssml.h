// A subset of SSML 1.1 for the frontend: the document becomes pieces of plain text (with misaki's inline
// markup for <phoneme>), each starting where the audio must change — after a <break>, at a <voice> or
// <prosody rate> change, at a paragraph or sentence. Elements:
//   speak, p, s                    structure (p and s start a new piece)
//   break time="500ms|1.5s" strength="none|x-weak|weak|medium|strong|x-strong"   a pause
//   say-as interpret-as="characters|spell-out|cardinal|number|ordinal|digits|date|time|telephone"
//          (date: format="mdy|dmy|ymd|md|dm|ym|my|y")
//   sub alias="..."                the alias is read instead of the content
//   phoneme ph="..." alphabet="ipa|x-kokoro"   content read as the phonemes (IPA mapped to Kokoro's)
//   prosody rate="x-slow|slow|medium|fast|x-fast|80%|1.2"  (pitch and volume are ignored)
//   voice name="af_bella"          voice for the content
//   lang xml:lang="..."            accepted; the content is read in the frontend's language
//   mark name="..."                reported where it stands between the words (it changes nothing said)
// Unknown elements are ignored (their content is read) with one warning per name. Malformed SSML is a
// kokoro::Error naming line and column. Every byte of the pieces' text maps back to the SSML source.
#pragma once
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace kokoro::ssml {

struct Mark {
  std::string name;
  size_t at = 0;  // bytes into the piece's text where it stands
};

struct Piece {
  std::string text;                 // plain text (UTF-8), may hold "[word](/phonemes/)" markup
  std::vector<uint32_t> begin_of;   // per byte of text: where its source starts in the SSML
  std::vector<uint32_t> end_of;     // per byte of text: where its source ends in the SSML
  double pause_before = 0;          // seconds of silence before the piece
  std::string voice;                // empty: the caller's voice
  double rate = 1.0;                // speaking-rate factor
  std::vector<Mark> marks;          // <mark>s in the piece, in order (a mark never starts a piece)
};

struct Document {
  std::vector<Piece> pieces;
  double pause_after = 0;                 // <break>s after the last text
  std::vector<std::string> trailing_marks;  // <mark>s after the last text
  std::vector<std::string> warnings;      // unknown elements and attributes values, one per kind
};

// True when the text (after white space, a byte-order mark, an XML declaration or comments) starts with
// a <speak> element.
bool looks_like_ssml(std::string_view text);

// Parses SSML (with or without the <speak> root). Throws kokoro::Error "SSML line L, column C: ...".
Document parse(std::string_view ssml);

// IPA (as in SSML <phoneme alphabet="ipa">) to Kokoro's phoneme symbols for English; symbols with no
// Kokoro counterpart are dropped.
std::string ipa_to_kokoro(std::string_view ipa);

}  // namespace kokoro::ssml
