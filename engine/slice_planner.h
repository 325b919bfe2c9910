// Where the slice mode cuts a segment for the generator (vocoder/slice_vocoder.h), so that speech starts
// early and never runs dry (issues 11 and 16).
//
// The rule. A slice can be computed only while the audio queued ahead of it plays, so
//   compute(slice) = rtf * (length + context) + overhead  <=  safety * queued
// gives the longest slice that fits. Slices end at word borders (pauses preferred, where a crossfade is
// inaudible), never inside a word, and are as long as the rule allows: the fewer the borders, the closer the
// audio is to the whole-segment computation. With nothing queued (an utterance's first slice) the slice is
// the shortest word-aligned piece of at least first_slice_seconds: that is the time to first audio.
//
// Two bounds are applied and the smaller slice wins:
//  * nominal: the rule simulated with a fixed, conservative speed (nominal_rtf) and the audio this plan
//    itself has queued. It depends on the text only, so the same text gives the same slices (and the same
//    audio) on every machine at least that fast, and in WAV files;
//  * measured: the rule with the audio really queued in the ring and the device, and the speed measured on
//    the previous slices. It only ever shortens a slice: on a slow or loaded machine pieces get smaller.
// When no word border fits (a single long word, or a machine slower than real time), the slice ends at the
// first word border after the minimum: if the device then runs dry it does so at a word border.
#pragma once
#include <cstdint>
#include <vector>

namespace kokoro {

struct SliceSchedule {
  // First slice of an utterance: latency vs. how much it knows of the sentence (bench/quality: DNSMOS OVRL
  // -0.045 vs exact with 1.0 s, -0.074 with 0.6 s; docs/streaming.md).
  double first_slice_seconds = 1.0;
  double nominal_rtf = 0.35;         // planning speed (generator seconds per audio second) for the nominal bound
  double overhead_seconds = 0.01;    // fixed cost per slice
  double safety = 0.6;               // a slice must be computed within this share of the audio queued ahead of it
  // Never longer: bounds the generator's activations on long segments (~7 MB per second of slice at its last
  // stage, five tensors of them at once). kokoro-bench, slice mode, passage corpus, peak RSS: 435 MB with
  // 12 s, 358 MB with 6 s, 351 MB with 4 s; below 6 s the decoder half of a long segment is the peak, and
  // each slice's context (200 ms) costs more of the compute (docs/benchmarks.md, "Peak memory").
  double max_slice_seconds = 6;
  double min_pause_seconds = 0.075;  // a word gap this long is a pause: preferred place for a border
};

// A place where a slice may end: a generator column between two words, and the gap's length there.
struct SliceBorder {
  int64_t column = 0;
  double gap_seconds = 0;
};

class SlicePlanner {
 public:
  // columns: the segment's generator columns; seconds_per_column: their duration (300 / 24000);
  // context_columns, min_columns: the slice vocoder's (SliceVocoder::options, min_slice_columns).
  SlicePlanner(SliceSchedule schedule, int64_t columns, double seconds_per_column, int64_t context_columns,
               int64_t min_columns, std::vector<SliceBorder> borders);

  // The end of the next slice starting at `from`, given `queued_seconds` of audio that will play while it
  // is computed and the speed `rtf`. Returns columns() when the rest fits (or is all that is left).
  int64_t next_end(int64_t from, double queued_seconds, double rtf) const;

  // The nominal plan: every slice end for a segment that starts with `queued_seconds` already queued,
  // simulating its own queue at nominal_rtf. Deterministic.
  std::vector<int64_t> nominal_plan(double queued_seconds) const;
  // The nominal queue left when the nominal plan's last slice is computed (for the next segment).
  double nominal_queue_after(double queued_seconds) const;

  // Seconds to compute a slice of `columns` columns (with its context) at `rtf`.
  double compute_seconds(int64_t from, int64_t end, double rtf) const;

  int64_t columns() const { return T_; }
  const std::vector<SliceBorder>& borders() const { return borders_; }

 private:
  SliceSchedule s_;
  int64_t T_;
  double spc_;
  int64_t ctx_, min_;
  std::vector<SliceBorder> borders_;  // strictly increasing columns inside (0, T)
};

// Slice borders from word timings (seconds within the segment, in order): one per gap between consecutive
// words, at the middle of the gap, on a generator column.
struct WordTimes {
  double start_s = 0, end_s = 0;
};
std::vector<SliceBorder> slice_borders_from_words(const std::vector<WordTimes>& words, double seconds_per_column,
                                                  int64_t columns);

}  // namespace kokoro
