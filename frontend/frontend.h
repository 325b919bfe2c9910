// The text frontend: any UTF-8 text -> segments of Kokoro phonemes, each short enough for one model call,
// the way the official pipeline (misaki en.G2P + kokoro KPipeline 0.9.4) produces them.
//
//   kokoro::Frontend fe({.language = "en-us"});
//   for (const auto& seg : fe.segment("Dr. Smith paid $5.")) ...   // seg.phonemes: "dˈɑktəɹ smˈɪθ ..."
//   std::vector<int64_t> ids = kokoro::tokenize(seg.phonemes, vocab);  // no boundary 0s (engine adds them)
//
// Data flow (see README.md): split into lines (KPipeline splits at newlines) -> English: tokenize,
// tag, lexicon G2P with espeak-ng for unknown words (en_g2p.h); other languages: espeak-ng per
// sentence (espeak_g2p.h) -> chunk into segments of <= max_phonemes at sentence, clause, then word
// boundaries (chunker.h), with an optional short first segment for streaming.
//
// Input handling: invalid UTF-8 bytes are read as U+FFFD (silent) rather than rejected, so a stray byte
// never loses a whole utterance; all offsets still refer to the caller's original bytes, and
// Segment::text is always valid UTF-8. Control characters are whitespace. English reads emoji by name
// (FrontendOptions::emoji); a character repeated past a limit is read a few times only (line_filter.h).
// Any input gives a result in time linear in its length; empty or silent input gives no segments, and text
// with nothing speakable (only punctuation and symbols) gives pause-only segments, never phonemes.
// segment() is const and safe to call from several threads (espeak-ng calls are serialized inside).
#pragma once
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "frontend/vocab.h"

namespace kokoro {

struct WordSpan {
  size_t text_begin, text_end;        // bytes in the text given to segment()
  size_t phoneme_begin, phoneme_end;  // bytes in the segment's phonemes
};

// An SSML <mark> inside a segment: reached where the word that starts at `word_begin` starts.
struct InnerMark {
  std::string name;
  size_t word_begin = 0;  // a WordSpan::text_begin of the segment
};

struct Segment {
  std::string text;      // the source text of the segment (valid UTF-8)
  // Vocab symbols, at most max_phonemes code points, no leading/trailing space. Empty only in a pause-only
  // segment: text with nothing speakable (". . . .", "***", a line of dashes) is pause_before seconds of
  // silence (kSilentTextPause; consecutive ones are one pause), never given to the model.
  std::string phonemes;
  size_t text_begin = 0, text_end = 0;  // bytes in the text given to segment()
  std::vector<WordSpan> words;          // spoken words in order (punctuation has no span)
  // From SSML (frontend/ssml.h; plain text leaves the defaults). For SSML input `text` is the text spoken
  // (after <sub>, <say-as>, <phoneme>), while the offsets still point into the SSML source.
  double pause_before = 0;          // seconds of silence before this segment (<break>)
  double pause_after = 0;           // seconds after it (<break>s at the end of the document)
  std::string voice;                // <voice name>; empty: the caller's voice
  double rate = 1.0;                // <prosody rate> factor on top of the caller's speed
  std::vector<std::string> marks;   // <mark> names reached just before this segment
  std::vector<InnerMark> inner_marks;    // <mark>s before its second and later words, in order
  std::vector<std::string> marks_after;  // <mark>s after the last text (last segment only)
};

// The pause that text with nothing speakable in it becomes (as SSML's break strength "strong").
inline constexpr double kSilentTextPause = 0.75;

struct FrontendOptions {
  // "en-us" (or "a"), "en-gb" ("b"), "ja" ("j": misaki's Japanese G2P, ja_g2p.h; needs the Japanese
  // dictionary from scripts/fetch-assets), "zh" ("z": misaki's Mandarin G2P, zh_g2p.h; needs zh.kozh from
  // scripts/fetch-assets), or an espeak-ng language as KPipeline uses them: "es" ("e"),
  // "fr-fr" ("f"), "hi" ("h"), "it" ("i"), "pt-br" ("p").
  std::string language = "en-us";
  // Holds config.json and lexicons/; empty: kokoro::find_assets_dir().
  std::string assets_dir;
  // Longest segment in phoneme code points (the model's limit is 510).
  size_t max_phonemes = 510;
  // Streaming: when > 0, the first segment of each segment() call ends after at most this many words,
  // at the last clause boundary (, ; : . ! ? — …) within them that keeps at least half of them if there is
  // one, else after the last word that fits. Never splits inside a word.
  size_t first_segment_max_words = 0;
  // After that cut, a later segment ends at a sentence end once it would hold more than this many times
  // the phonemes of the segments before it (0: as long as max_phonemes allows). A cut segment plays for
  // ~2 s; the rest of its sentence and the next sentences then come in whole sentences that each take
  // less time to synthesize than the audio ahead of them plays (issue 16, docs/streaming.md). Sentences
  // are never split by it, and without a cut segments are the reference's.
  double segment_growth_after_cut = 2.0;
  // English words no rule reads go to espeak-ng as in KPipeline; false leaves them silent.
  bool espeak_fallback = true;
  // SSML (frontend/ssml.h): automatic reads text that starts with <speak> as SSML (if it is malformed: a
  // warning, and the text is read without its tags); on: always SSML, malformed input throws
  // kokoro::Error naming line and column; off: never.
  enum class Ssml { automatic, on, off };
  Ssml ssml = Ssml::automatic;
  // English: misaki's inline markup, "[Kokoro](/kˈOkəɹO/)" (spoken as the phonemes) and "[word](+1)"
  // (stress), as in the official pipeline. false reads brackets as text.
  bool inline_markup = true;
  // English: a user lexicon file ("word  /phonemes/" or "word  respelling" per line; format and case
  // rules in frontend/user_lexicon.h). Its entries win over the built-in dictionaries and normalisation.
  std::string lexicon_file;
  // More user-lexicon entries (word, reading) as if they followed the file's.
  std::vector<std::pair<std::string, std::string>> lexicon_entries;
  // Emoji (frontend/emoji.h): read says each one's name as screen readers do (English: Unicode CLDR's
  // names, "😀" -> grinning face; other languages: as their G2P reads them), a run of the same emoji once;
  // drop leaves every emoji out. Default read: an emoji can be the whole message ("👍"), and dropping it
  // would lose it; callers whose emoji are decoration choose drop (frontend/README.md, "Emoji").
  enum class Emoji { read, drop };
  Emoji emoji = Emoji::read;
};

class Frontend {
 public:
  // Loads the lexicons (English) or checks the espeak-ng voice (others); throws kokoro::Error naming the
  // language or file on failure.
  explicit Frontend(const FrontendOptions& options = {});
  ~Frontend();
  Frontend(Frontend&&) noexcept;
  Frontend& operator=(Frontend&&) noexcept;

  // Throws kokoro::Error only for malformed SSML when options().ssml is on.
  std::vector<Segment> segment(std::string_view text) const { return segment(text, false); }
  // first_sentence_alone: the text's first sentence is a segment of its own (slice mode's first audio waits
  // for it alone); the rest is segmented as by segment(text). Sentences are never split by it.
  std::vector<Segment> segment(std::string_view text, bool first_sentence_alone) const;
  // What segment() will say, as words: English text after normalisation ("5 km" -> "5 kilometers" is
  // "five kilometers", "2:00 a.m." -> "two a.m."), one output line per input line. Mandarin: numbers as
  // characters and punctuation as read ("3.5%，" -> "百分之三点五, "). Other languages: the text unchanged
  // (espeak-ng normalises internally).
  std::string normalize(std::string_view text) const;
  // Where sentences end in plain `text`, by the rule segment() cuts long lines at (chunker.h,
  // sentence_end_after): after a . ! ? … the G2P reads as punctuation (not the dot of "Dr." or "3.5"), with a
  // closing ) or ” right after it, and a spoken word before it since the previous end. Byte offsets in
  // `text`, ascending; line breaks are not listed (segment() never joins lines anyway). For text that
  // streams in (frontend/sentence_feed.h).
  std::vector<size_t> sentence_ends(std::string_view text) const;
  // Whether segment() reads `text` as SSML: the one answer for the whole engine (the streaming engine
  // hands such text to segment() whole instead of in pieces). options().ssml on: always; off: never;
  // automatic: when it starts with <speak> (after blanks, a byte-order mark, an XML declaration, comments).
  bool reads_as_ssml(std::string_view text) const;
  const FrontendOptions& options() const;

 private:
  std::vector<Segment> segment_plain(std::string_view text, size_t first_segment_max_words,
                                     bool first_sentence_alone = false) const;
  std::string normalize_plain(std::string_view text) const;
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace kokoro
