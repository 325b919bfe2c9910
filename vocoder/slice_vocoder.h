// The generator run over consecutive slices of a segment, each slice with its own exact instance-norm
// statistics, joined by a short crossfade (the "slice" synthesis mode, docs/streaming.md).
//
// Why slices and not chunks: every AdaIN layer of the generator normalises over the columns it is given.
// A chunked generator (stream_generator.h) must guess the statistics of columns it has not computed yet,
// and 1 % of error in them already costs 1.3 dB LSD. A slice is computed the way the model computes a
// whole (short) utterance: every layer sees all of the slice, so its statistics are exact *for the slice*.
// What a slice shares with the whole segment is everything upstream of the generator: the decoder
// features (computed over the whole segment by Decoder::features, exact) and the harmonic source (computed
// once for the whole segment, so the sine phases run on across slice borders).
//
//   x [C, T] (whole segment) ─┬─ columns [a - ctx, b + ctx) ─► Generator::forward_from_har ─► slice audio
//   har (whole segment) ──────┘                                                                  │
//   previous slice's samples around a ──► raised-cosine crossfade over 2 * crossfade samples ◄──┘
//
// Context columns on each inner border keep the zero padding that a slice's convolutions see at their
// edges away from the samples that are kept (the generator's receptive field reaches ~2300 samples, i.e.
// ~8 columns, to each side). The segment's true ends get no context, as in the whole-segment run. One slice
// over the whole segment is Generator::forward exactly (tested).
#pragma once
#include <cstdint>
#include <memory>

#include "core/tensor.h"
#include "vocoder/adain.h"
#include "vocoder/generator.h"
#include "vocoder/noise.h"
#include "vocoder/source.h"
#include "vocoder/stats_predictor.h"
#include "vocoder/stft.h"

namespace kokoro {

struct SliceOptions {
  int64_t context_columns = 8;     // generator columns (300 samples each) of context beyond each inner border
  int64_t crossfade_samples = 240; // half-width of the crossfade around each inner border (10 ms)
  // Statistics of a slice: its own ("own"), or pooled with the columns of the slices before it ("pooled",
  // PooledSliceStats in vocoder/adain.h), which brings later slices closer to the whole segment's.
  bool pooled_statistics = true;
  // Pooled statistics only: every slice but the last also computes this many short excerpts of the rest of
  // the segment (evenly spread, each `excerpt_columns` long plus `excerpt_margin` columns of context on both
  // sides, appended to the slice's input) whose columns count in its statistics and are then dropped: a
  // sample of what the slice's own columns cannot tell about the rest of the segment.
  int excerpts = 0;
  int64_t excerpt_columns = 12, excerpt_margin = 4;
  // Pooled statistics only: a learned statistics predictor (vocoder/stats_predictor.h) whose whole-segment
  // moments stand in for the columns not computed yet (PooledSliceStats::Prediction; `predictor_subtract`
  // is its `subtract`). Null: today's pooled statistics. Measured in docs/streaming.md, not a default.
  std::shared_ptr<const StatsPredictor> predictor;
  double predictor_subtract = 0;
};

class SliceVocoder {
 public:
  SliceVocoder(const Generator& generator, SliceOptions options = {});

  // Starts a segment: x = Decoder::features [C, T], f0 = the F0 curve [T], style (style_dim floats), noise
  // for the harmonic source of the whole segment. x, f0, style and noise are read by every render call: keep
  // them alive until the last one. The harmonic features are computed as slices need them (exactly those of
  // the whole segment: the source draws noise by absolute sample index), so that starting costs nothing.
  void begin(const Tensor& x, const float* f0, const float* style, NoiseSource& noise);
  // Renders the segment up to generator column `end` (rendered() < end <= columns(); end == columns() is the
  // last slice) and writes the samples that are now final to `audio` (resized). A slice must be at least
  // min_slice_columns() long unless it is the last one.
  void render_until(int64_t end, Tensor& audio);

  int64_t columns() const { return T_; }
  int64_t rendered() const { return end_; }       // columns rendered so far
  int64_t samples_per_column() const { return spc_; }
  int64_t min_slice_columns() const;
  const SliceOptions& options() const { return opt_; }

 private:
  const Generator& gen_;
  SliceOptions opt_;
  int64_t spc_ = 0, har_per_col_ = 0;
  const Tensor* x_ = nullptr;
  const float* style_ = nullptr;
  int64_t T_ = 0, end_ = 0;
  // Harmonic features: har_ holds columns [har_first_, har_first_ + har_.dim(1)) of the segment's
  // [2 * bins, T * har_per_col + 1], computed up to at least `columns`; the streams extend them. Columns
  // before keep_from (the current slice's first) are dropped: no later slice reads them.
  void ensure_harmonics(int64_t columns, int64_t keep_from);
  std::unique_ptr<SineGenStream> sine_;
  std::unique_ptr<StftStream> stft_;
  const float* f0_ = nullptr;
  int64_t f0_pushed_ = 0;
  Tensor har_, xs_, hs_, slice_audio_, excitation_, har_new_, scratch_;
  std::vector<float> tail_;
  PooledSliceStats pool_;  // the previous slice's samples over [border - crossfade, border + crossfade)
  int64_t har_first_ = 0;  // see ensure_harmonics
};

}  // namespace kokoro
