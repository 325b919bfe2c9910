// Text that arrives in pieces (an LLM's tokens, a pipe) cut into whole sentences as soon as each one is
// known to be complete: what the streaming engine's append API speaks sentence by sentence
// (engine/stream_engine.h, begin_text; docs/streaming.md, "Text that streams in").
//
// The cuts are a function of the text alone, never of how it was split into pieces or of when they came,
// so the same text gives the same sentences, hence the same audio, however it arrives. From the last cut:
//  * a line break ends a sentence (segment() never joins lines);
//  * a position E ends a sentence when the frontend itself ends one there (Frontend::sentence_ends: its own
//    rules for abbreviations, decimals, closing quotes) in the text from the last cut up to one character
//    after E. That character is what shows the sentence ended ("3." may become "3.5", "Hello." may become
//    "Hello.com"); until it comes, the feed waits. Only positions right after a sentence mark (. ! ? … 。 and
//    the like, possibly followed by closing quotes or brackets) are put to the frontend, so it runs about
//    once per sentence, and at most kMaxQuestions times per sentence whatever the text;
//  * no sentence end within max_bytes: the text is cut as the engine cuts long text (cut_long_text);
//  * the end of the text, or the engine's pause flush (the one cut that depends on timing): what is there.
// A character whose bytes are split between pieces waits for its last byte.
#pragma once
#include <cstddef>
#include <optional>
#include <string>
#include <string_view>

#include "frontend/frontend.h"

namespace kokoro {

// Where a piece of text of at most max_bytes starting at `begin` ends: everything if the rest is short,
// else after the last newline in the window, else after the last sentence end followed by a space, else
// after the last space, else at a UTF-8 character boundary. Looks at text[begin, begin + max_bytes] only.
size_t cut_long_text(std::string_view text, size_t begin, size_t max_bytes);

class SentenceFeed {
 public:
  // Sentence marks the frontend is asked about per sentence at most: past them (a sentence of ". . . . ."
  // or "1. 2. 3. ..."), the sentence runs on to max_bytes. Keeps the work linear in the text.
  static constexpr int kMaxQuestions = 64;

  // `frontend` must outlive the feed. max_bytes >= 64.
  SentenceFeed(const Frontend& frontend, size_t max_bytes);

  void append(std::string_view bytes);

  struct Sentence {
    std::string text;
    size_t offset = 0;  // of its first byte in the whole text appended
  };
  // The next sentence known to be complete, if any.
  std::optional<Sentence> next();
  // Everything not taken yet, if anything: at the end of the text (`partial_character`: with a trailing
  // incomplete character, which will never be completed now) or at a pause flush (without it).
  std::optional<Sentence> rest(bool partial_character);
  // Whether the text not taken yet has more than white space.
  bool pending_text() const;
  size_t pending_bytes() const { return pending_.size(); }
  // The text not taken yet (the start of the sentence still arriving).
  std::string_view pending() const { return pending_; }

 private:
  Sentence take(size_t bytes);

  const Frontend& frontend_;
  size_t max_bytes_;
  std::string pending_;  // the text since the last cut
  size_t offset_ = 0;    // of pending_[0] in the whole text
  size_t scanned_ = 0;   // no sentence ends before this position of pending_ (or the questions ran out)
  int questions_ = 0;    // sentence_ends calls for the current sentence
};

}  // namespace kokoro
