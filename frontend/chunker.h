// Packs a line's phonemized units (words and punctuation, in order) into segments of at most
// max_phonemes code points, as KPipeline.en_tokenize does: when the next unit would overflow, cut after
// the last sentence end (! . ? …), else clause mark (: ;), else comma or dash (, —) that keeps the
// rest within the limit, else before the unit. A closing ) or ” stays with the segment it closes.
// Optionally the first segment of a call is cut short for streaming (FrontendOptions).
#pragma once
#include <string>
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
  Chunker(size_t max_phonemes, size_t first_segment_max_words)
      : max_(max_phonemes), first_words_(first_segment_max_words) {}

  // Appends the segments of one line to `out`. `source` is the caller's full text (for Segment::text).
  void add_line(std::vector<Unit> units, std::string_view source, std::vector<Segment>& out);

 private:
  void emit(const std::vector<Unit>& units, size_t begin, size_t end, std::string_view source,
            std::vector<Segment>& out);
  size_t max_;
  size_t first_words_;
  bool first_done_ = false;
};

// Splits units whose phonemes alone exceed `max` code points (a 10 000-digit number) into several, at
// spaces where possible.
std::vector<Unit> split_oversized(std::vector<Unit> units, size_t max);

}  // namespace kokoro
