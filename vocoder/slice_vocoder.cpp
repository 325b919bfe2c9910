#include "vocoder/slice_vocoder.h"

#include <algorithm>
#include <cmath>

#include "core/error.h"
#include "vocoder/stream_ops.h"

namespace kokoro {

namespace {
// Removes the last column of har [K, n] (each x column has har_per_col columns plus one closing column for
// the whole input; pieces joined end to end keep only the final piece's).
void drop_back_har_column(Tensor& har, Tensor& scratch) {
  copy_columns(har, 0, har.dim(1) - 1, scratch);
  std::swap(har, scratch);
}
// dst = dst's columns [from, n) followed by src's columns: the harmonic window moved on and extended in one copy.
void keep_and_append_columns(Tensor& dst, int64_t from, const Tensor& src, Tensor& scratch) {
  const int64_t C = dst.dim(0), a = dst.dim(1) - from, b = src.dim(1);
  if (from < 0 || a < 0 || src.rank() != 2 || src.dim(0) != C)
    throw Error("slice vocoder: cannot append " + shape_to_string(src.shape()) + " to columns [" + std::to_string(from) +
                ", ) of " + shape_to_string(dst.shape()));
  scratch.resize({C, a + b});
  for (int64_t c = 0; c < C; ++c) {
    std::copy(dst.data() + c * dst.dim(1) + from, dst.data() + (c + 1) * dst.dim(1), scratch.data() + c * (a + b));
    std::copy(src.data() + c * b, src.data() + (c + 1) * b, scratch.data() + c * (a + b) + a);
  }
  std::swap(dst, scratch);
}
}  // namespace

SliceVocoder::SliceVocoder(const Generator& generator, SliceOptions options)
    : gen_(generator),
      opt_(options),
      sine_(std::make_unique<SineGenStream>(generator.source_)),
      stft_(std::make_unique<StftStream>(generator.stft_)) {
  spc_ = gen_.samples_per_frame();
  har_per_col_ = gen_.har_columns_per_frame();
  if (opt_.context_columns < 0 || opt_.crossfade_samples < 0 || opt_.crossfade_samples > spc_ * opt_.context_columns)
    throw Error("slice vocoder: need 0 <= crossfade <= context (got context " + std::to_string(opt_.context_columns) +
                " columns, crossfade " + std::to_string(opt_.crossfade_samples) + " samples)");
}

int64_t SliceVocoder::min_slice_columns() const {
  // The crossfades at both ends of a slice must not overlap.
  return std::max<int64_t>(1, (2 * opt_.crossfade_samples + spc_ - 1) / spc_ + 1);
}

void SliceVocoder::begin(const Tensor& x, const float* f0, const float* style, NoiseSource& noise) {
  if (x.rank() != 2 || x.dim(1) < 1) throw Error("slice vocoder: expected features [C, T], got " + shape_to_string(x.shape()));
  x_ = &x;
  style_ = style;
  T_ = x.dim(1);
  end_ = 0;
  tail_.clear();
  pool_.reset();
  pool_.clear_prediction();
  if (opt_.predictor && opt_.pooled_statistics) {
    PooledSliceStats::Prediction p;
    p.layers = opt_.predictor->predict(stats_predictor_features(x, f0, style, gen_.config().style_dim));
    p.segment_columns = T_;
    p.subtract = opt_.predictor_subtract;
    pool_.set_prediction(std::move(p));
  }
  f0_ = f0;
  f0_pushed_ = 0;
  sine_->begin(noise);
  stft_->begin();
  har_.resize({2 * gen_.stft_.bins(), 0});
  har_first_ = 0;
}

void SliceVocoder::ensure_harmonics(int64_t columns, int64_t keep_from) {
  // The frames the asked columns need plus two (the streams hold back what the next frame still changes), in
  // one push: appending columns copies har_, so one push per slice rather than per few frames.
  constexpr int64_t kLookaheadFrames = 2;
  if (keep_from < har_first_) throw Error("slice vocoder: harmonic column " + std::to_string(keep_from) + " was dropped");
  while (har_first_ + har_.dim(1) < columns) {
    if (f0_pushed_ >= T_)
      throw Error("slice vocoder: " + std::to_string(columns) + " harmonic columns asked for, the segment has " +
                  std::to_string(har_first_ + har_.dim(1)));
    const int64_t wanted = (columns + har_per_col_ - 1) / har_per_col_ + kLookaheadFrames;
    const int64_t n = std::clamp<int64_t>(wanted - f0_pushed_, 1, T_ - f0_pushed_);
    const bool last = f0_pushed_ + n == T_;
    sine_->push(f0_ + f0_pushed_, n, last, excitation_);
    f0_pushed_ += n;
    stft_->push(excitation_.data(), excitation_.numel(), last, har_new_);
    // Columns before keep_from are read by no later slice: dropped on the way (at 27 s, the whole segment's
    // columns held twice over were 30 MB of the peak).
    const int64_t drop = std::min(keep_from - har_first_, har_.dim(1));
    keep_and_append_columns(har_, drop, har_new_, scratch_);
    har_first_ += drop;
  }
}

void SliceVocoder::render_until(int64_t end, Tensor& audio) {
  if (!x_) throw Error("slice vocoder: render_until before begin");
  if (end <= end_ || end > T_)
    throw Error("slice vocoder: slice end " + std::to_string(end) + " outside (" + std::to_string(end_) + ", " +
                std::to_string(T_) + "]");
  const bool first = end_ == 0, last = end == T_;
  if (!last && end - end_ < min_slice_columns())
    throw Error("slice vocoder: slice of " + std::to_string(end - end_) + " columns is shorter than " +
                std::to_string(min_slice_columns()));
  const int64_t lo = first ? 0 : std::max<int64_t>(0, end_ - opt_.context_columns);
  const int64_t hi = last ? T_ : std::min(T_, end + opt_.context_columns);
  const int64_t cols = hi - lo;
  if (!last && hi * spc_ < end * spc_ + opt_.crossfade_samples)
    throw Error("slice vocoder: slice end " + std::to_string(end) + " leaves no room for the crossfade before " +
                std::to_string(T_));

  // Harmonic columns up to the slice's closing one (excerpts read ahead: then all of them).
  ensure_harmonics(last || opt_.excerpts > 0 ? T_ * har_per_col_ + 1 : hi * har_per_col_ + 1, lo * har_per_col_);
  if (lo == 0 && hi == T_) {  // (then har_ holds every column: har_first_ == 0)
    gen_.forward_from_har(*x_, har_, style_, slice_audio_);  // one slice: the whole-segment computation itself
  } else {
    copy_columns(*x_, lo, cols, xs_);
    copy_columns(har_, lo * har_per_col_ - har_first_, cols * har_per_col_ + 1, hs_);
    if (opt_.pooled_statistics) {
      std::vector<PooledSliceStats::Range> counted{{0, cols}};
      const int64_t piece = opt_.excerpt_columns + 2 * opt_.excerpt_margin;
      const int64_t future = T_ - hi;
      if (!last && opt_.excerpts > 0 && future >= opt_.excerpts * piece) {
        // Excerpts of [hi, T), evenly spread, appended after the slice's own input.
        const int64_t step = future / opt_.excerpts;
        Tensor xe, he, scratch;
        for (int k = 0; k < opt_.excerpts; ++k) {
          const int64_t p0 = hi + k * step + (step - piece) / 2;
          const int64_t at = xs_.dim(1);
          copy_columns(*x_, p0, piece, xe);
          append_columns(xs_, xe, scratch);
          // har: drop the slice's closing column, append the excerpt's, then a closing column again.
          drop_back_har_column(hs_, scratch);
          copy_columns(har_, p0 * har_per_col_ - har_first_, piece * har_per_col_ + 1, he);
          append_columns(hs_, he, scratch);
          counted.push_back({at + opt_.excerpt_margin, at + opt_.excerpt_margin + opt_.excerpt_columns});
        }
      }
      pool_.set_slice(xs_.dim(1), counted, {{end_ - lo, end - lo}});
      PooledSliceStats::Scope scope(pool_);
      gen_.forward_from_har(xs_, hs_, style_, slice_audio_);
    } else {
      gen_.forward_from_har(xs_, hs_, style_, slice_audio_);
    }
  }
  // slice_audio_ sample j is the segment's sample lo * spc_ + j.
  const int64_t base = lo * spc_, w = opt_.crossfade_samples;
  const int64_t from = first ? 0 : end_ * spc_ - w;           // first sample this call writes
  const int64_t to = last ? T_ * spc_ : end * spc_ - w;       // samples from here on wait for the next slice
  audio.resize({to - from});
  float* out = audio.data();
  const float* s = slice_audio_.data();
  int64_t i = from;
  if (!first) {
    // Raised-cosine crossfade from the previous slice's samples to this slice's over [border - w, border + w).
    for (int64_t k = 0; k < 2 * w; ++k, ++i) {
      const double g = 0.5 - 0.5 * std::cos(M_PI * (k + 0.5) / (2.0 * w));
      out[i - from] = static_cast<float>((1.0 - g) * tail_[k] + g * s[i - base]);
    }
  }
  for (; i < to; ++i) out[i - from] = s[i - base];
  if (!last) tail_.assign(s + (to - base), s + (to - base) + 2 * w);
  end_ = end;
}

}  // namespace kokoro
