// Word timestamps as KPipeline.join_timestamps (kokoro 0.9.4) computes them from the predicted durations,
// so that captions line up the way users of the official pipeline expect:
//   * time runs in half-frames (1/80 s); the leading boundary token counts 2*max(0, d0 - 3) half-frames;
//   * a word spans 2 x its phonemes' frames; the space after a word is split in half between the word's end
//     and the next word's start;
//   * punctuation (a run of non-space phonemes outside any word, e.g. the "." of "dˈɔɡ.") advances time like
//     a word but gets no timestamp.
#pragma once
#include <cstdint>
#include <vector>

#include "frontend/frontend.h"

namespace kokoro {

struct WordTiming {
  size_t text_begin, text_end;  // bytes in the text given to Frontend::segment()
  double start_s, end_s;        // from the start of the segment's audio
};

// durations: per token including both boundary tokens (SynthesisResult::durations), for the phoneme string
// of `segment` with one token per phoneme code point.
std::vector<WordTiming> word_timings(const Segment& segment, const std::vector<int64_t>& durations);

}  // namespace kokoro
