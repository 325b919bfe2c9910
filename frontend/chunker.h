// Packs a line's phonemized units (words and punctuation, in order) into segments of at most
// max_phonemes code points, as KPipeline.en_tokenize does: when the next unit would overflow, cut after
// the last sentence end (! . ? …), else clause mark (: ;), else comma or dash (, —) that keeps the
// rest within the limit, else before the unit. A closing ) or ” stays with the segment it closes.
// Optionally the first segment of a call is cut short for streaming (FrontendOptions). After such a cut,
// a later segment also ends at its last sentence end once it would hold more than growth_after_cut times
// the phonemes of the segments before it: whole sentences, in pieces that the audio already ahead of them
// covers while they are vocoded (issue 16). Without a cut the segments are the reference's.
#pragma once
#include <string>
#include <string_view>
#include <vector>

#include "frontend/frontend.h"

namespace kokoro {

struct Unit {
  std::u32string phonemes;  // may be empty (silent token)
  bool space_after = false;
  uint32_t text_begin = 0, text_end = 0;
  bool is_word = false;  // gets a WordSpan
};

class Chunker {
 public:
  // first_sentence_alone: the first segment of the call ends at the first sentence end (slice mode: first
  // audio waits for one sentence, not for all that fit in 510 phonemes); the sentences after it are packed as
  // the reference packs a line. A first sentence longer than max_phonemes is cut as always.
  Chunker(size_t max_phonemes, size_t first_segment_max_words, double growth_after_cut = 0,
          bool first_sentence_alone = false)
      : max_(max_phonemes), first_words_(first_segment_max_words), growth_(growth_after_cut),
        first_sentence_(first_sentence_alone) {}

  // Appends the segments of one line to `out`. `source` is the caller's full text (for Segment::text).
  void add_line(std::vector<Unit> units, std::string_view source, std::vector<Segment>& out);

 private:
  void emit(const std::vector<Unit>& units, size_t begin, size_t end, std::string_view source,
            std::vector<Segment>& out);
  size_t max_;
  size_t first_words_;
  double growth_;
  bool first_sentence_;
  bool first_done_ = false;
  size_t emitted_ = 0;  // phoneme code points in the segments emitted so far
};

// The marks that end a sentence (a unit whose phonemes are one of them), where the chunker cuts first.
inline constexpr std::u32string_view kSentenceMarks = U"!.?…";

// The chunker's sentence rule, for text that streams in (Frontend::sentence_ends): unit i ends a sentence
// when it is a sentence mark with a spoken word after `from` (the previous end) and before it; the sentence
// then also takes a closing ) or ” right after the mark. Returns the index of the first unit after the
// sentence, or 0 when unit i ends none.
size_t sentence_end_after(const std::vector<Unit>& units, size_t from, size_t i);

// Splits units whose phonemes alone exceed `max` code points (a 10 000-digit number) into several, at
// spaces where possible.
std::vector<Unit> split_oversized(std::vector<Unit> units, size_t max);

}  // namespace kokoro
