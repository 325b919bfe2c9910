#include "core/kernels.h"

#ifdef __AVX512F__
#include <immintrin.h>
#endif

#include <algorithm>
#include <cmath>
#include <functional>
#include <memory>
#include <numeric>
#include <vector>

#include "core/bf16_gemm.h"
#include "core/error.h"
#include "core/onednn_matmul.h"
#include "core/parallel.h"
#include "core/precision.h"
#include "core/weight_cache.h"
#include "core/winograd.h"

namespace kokoro {

namespace {

using StridedMatrix = Eigen::Map<const RowMatrix, Eigen::Unaligned, Eigen::Stride<Eigen::Dynamic, Eigen::Dynamic>>;

// Tap j of a conv weight [out, in, k] as an [out, in] matrix (no copy; Eigen's GEMM packs it anyway).
StridedMatrix tap(const TensorView& w, int64_t j) {
  const int64_t out = w.dim(0), in = w.dim(1), k = w.dim(2);
  return StridedMatrix(w.data + j, out, in, Eigen::Stride<Eigen::Dynamic, Eigen::Dynamic>(in * k, k));
}

void add_bias_columns(Tensor& y, const TensorView* bias) {
  if (!bias) return;
  y.matrix().colwise() += bias->vector();
}

// The fewest output columns from which Winograd beats the direct convolution. In bf16 (both forms' weights
// prepared once) Winograd is 1.5-3x faster from 64 columns (a sentence's first audio runs the generator's
// resblocks on 45-270 columns, the text encoder sees 20-150 tokens), except where the kernel spans 31 columns
// or more (k 7 at dilation 5, k 11 at dilation 3 and 5): 0.7-1.1x at 48-64 columns, 1.1-2.1x from 96
// (bench_kernels BM_conv1d_short). In fp32, against oneDNN's direct form, 128 as before (not measured again).
int64_t winograd_min_columns(int64_t k, int dilation) {
  if (kernel_precision() == Precision::fp32) return 128;
  return (k - 1) * dilation < 30 ? 64 : 96;
}

}  // namespace

void linear_columns(const Tensor& x, const TensorView& w, const TensorView* bias, Tensor& y) {
  if (w.dim(1) != x.dim(0)) throw Error("linear: weight " + shape_to_string(w.shape) + " vs input " + shape_to_string(x.shape()));
  const int64_t out = w.dim(0), T = x.dim(1);
  // In bf16 it is the 1x1 convolution it is (the decoder's shortcuts and asr_res: ~8 % of its multiply-adds,
  // which Eigen's fp32 product made ~30 % of its time).
  if (kernel_precision() != Precision::fp32 && out % 16 == 0 && x.dim(0) % 2 == 0 && (w.shape.size() == 2 || w.dim(2) == 1)) {
    TensorView w1 = w;
    w1.shape = {out, x.dim(0), 1};
    return conv1d_bf16(x, w1, bias, 0, 1, y);
  }
  y.resize({out, T});
  const int64_t blocks = double(out) * x.dim(0) * T < kParallelMacs ? 1 : std::min<int64_t>(out / 16, 2 * num_threads());
  parallel_ranges(out, 16, static_cast<int>(std::max<int64_t>(1, blocks)), [&](int64_t r0, int64_t r1) {
    auto Y = y.matrix().middleRows(r0, r1 - r0);
    Y.noalias() = w.matrix().middleRows(r0, r1 - r0) * x.matrix();
    if (bias) Y.colwise() += bias->vector().segment(r0, r1 - r0);
  });
}

namespace {

// linear_rows in bf16: W^T packed once per model (core/weight_cache.h), x rounded per call; blocks of 32
// output features in parallel.
void linear_rows_bf16(const Tensor& x, const TensorView& w, const TensorView* bias, Tensor& y) {
  const int64_t out = w.dim(0), in = w.dim(1), T = x.dim(0);
  auto pack = [&] { return pack_bt_bf16_parallel(w.data, in, in, out); };
  auto packed = cached_weights_as<bf16_t>(w.data, "linear-bf16 " + shape_to_string(w.shape), pack);
  thread_local std::vector<bf16_t> xb;
  if (xb.size() < static_cast<size_t>(T * in)) xb.resize(static_cast<size_t>(T * in));
  to_bf16(x.data(), xb.data(), T * in);
  const bf16_t* xp = xb.data();  // this thread's buffer (a task on a worker would see the worker's)
  const int64_t pairs = (in + 1) / 2, panels = out / 16;
  const int64_t parts = double(out) * in * T < kParallelMacs ? 1 : 2 * num_threads();
  float* Y = y.data();
  parallel_ranges(panels, 2, static_cast<int>(parts), [&](int64_t p0, int64_t p1) {
    gemm_bf16(xp, in, T, in, packed.data + p0 * pairs * 32, 16 * (p1 - p0), Y + 16 * p0, out);
    if (bias)
      for (int64_t t = 0; t < T; ++t)
        for (int64_t c = 16 * p0; c < 16 * p1; ++c) Y[t * out + c] += bias->data[c];
  });
}

}  // namespace

void linear_rows_eigen(const Tensor& x, const TensorView& w, const TensorView* bias, Tensor& y) {
  if (w.dim(1) != x.dim(1)) throw Error("linear: weight " + shape_to_string(w.shape) + " vs input " + shape_to_string(x.shape()));
  const int64_t out = w.dim(0), T = x.dim(0);
  y.resize({T, out});
  // Blocks of output features: each task multiplies by its own slice of W (ALBERT: T ~ 20-500 rows).
  const int64_t blocks = double(out) * x.dim(1) * T < kParallelMacs ? 1 : std::min<int64_t>(out / 64, 2 * num_threads());
  parallel_ranges(out, 64, static_cast<int>(std::max<int64_t>(1, blocks)), [&](int64_t c0, int64_t c1) {
    auto Y = y.matrix().middleCols(c0, c1 - c0);
    Y.noalias() = x.matrix() * w.matrix().middleRows(c0, c1 - c0).transpose();
    if (bias) Y.rowwise() += bias->vector().segment(c0, c1 - c0).transpose();
  });
}

namespace {
thread_local bool t_linear_rows_baseline = false;
}  // namespace

Prepared<float> transposed_weight(const TensorView& w) {
  const int64_t out = w.dim(0), in = w.dim(1);
  auto transpose = [&] {
    auto t = std::make_shared<std::vector<float>>(static_cast<size_t>(in * out));
    Eigen::Map<RowMatrix>(t->data(), in, out) = w.matrix().transpose();
    return std::shared_ptr<const std::vector<float>>(t);
  };
  return cached_weights_as<float>(w.data, "linear-f32-transposed " + shape_to_string(w.shape), transpose);
}

ScopedLinearRowsBaseline::ScopedLinearRowsBaseline() : saved_(t_linear_rows_baseline) { t_linear_rows_baseline = true; }
ScopedLinearRowsBaseline::~ScopedLinearRowsBaseline() { t_linear_rows_baseline = saved_; }

void linear_rows(const Tensor& x, const TensorView& w, const TensorView* bias, Tensor& y) {
  if (t_linear_rows_baseline) return linear_rows_eigen(x, w, bias, y);
  if (w.dim(1) != x.dim(1)) throw Error("linear: weight " + shape_to_string(w.shape) + " vs input " + shape_to_string(x.shape()));
  const int64_t out = w.dim(0), in = w.dim(1), T = x.dim(0);
  y.resize({T, out});
  if (kernel_precision() != Precision::fp32 && out % 16 == 0 && in % 2 == 0 && T > 0)
    return linear_rows_bf16(x, w, bias, y);
  const auto wt = transposed_weight(w);
  // One block of output features per thread, equal in size so that the blocks share oneDNN's primitive; a
  // small product stays on the caller.
  const int64_t parts = double(out) * in * T < kParallelMacs ? 1 : std::min<int64_t>(num_threads(), std::max<int64_t>(1, out / 64));
  const int64_t block = (out + parts - 1) / parts;
  parallel_for(parts, [&](int64_t p) {
    const int64_t c0 = p * block, c1 = std::min(out, c0 + block);
    if (c1 <= c0) return;
    onednn_matmul_f32(x.data(), T, in, wt.data + c0, out, bias ? bias->data + c0 : nullptr, c1 - c0,
                      y.data() + c0, out);
  });
}

void conv1d_gemm_per_tap(const Tensor& x, const TensorView& w, const TensorView* bias, int stride, int padding,
                         int dilation, Tensor& y) {
  const int64_t in = x.dim(0), T = x.dim(1), out = w.dim(0), k = w.dim(2);
  if (w.dim(1) != in) throw Error("conv1d: weight " + shape_to_string(w.shape) + " vs input " + shape_to_string(x.shape()));
  const int64_t t_out = (T + 2 * padding - dilation * (k - 1) - 1) / stride + 1;
  if (t_out <= 0) throw Error("conv1d: input of length " + std::to_string(T) + " is too short");
  y.resize({out, t_out});
  auto Y = y.matrix();
  if (stride == 1) {
    // One GEMM per tap on a zero-padded copy of x: y += W_j x_pad[:, j*dilation : j*dilation + t_out].
    RowMatrix xp = RowMatrix::Zero(in, T + 2 * padding);
    xp.middleCols(padding, T) = x.matrix();
    Y.noalias() = tap(w, 0) * xp.middleCols(0, t_out);
    for (int64_t j = 1; j < k; ++j) Y.noalias() += tap(w, j) * xp.middleCols(j * dilation, t_out);
  } else {
    // Strided convolutions here have few input channels (F0/N convs, the source noise convs): im2col.
    RowMatrix cols = RowMatrix::Zero(in * k, t_out);
    for (int64_t c = 0; c < in; ++c)
      for (int64_t j = 0; j < k; ++j)
        for (int64_t t = 0; t < t_out; ++t) {
          const int64_t s = t * stride + j * dilation - padding;
          if (s >= 0 && s < T) cols(c * k + j, t) = x.data()[c * T + s];
        }
    Y.noalias() = w.matrix() * cols;
  }
  add_bias_columns(y, bias);
}

void conv1d_direct(const Tensor& x, const TensorView& w, const TensorView* bias, int padding, int dilation,
                   Tensor& y) {
  const int64_t in = x.dim(0), T = x.dim(1), out = w.dim(0), k = w.dim(2);
  if (w.dim(1) != in) throw Error("conv1d: weight " + shape_to_string(w.shape) + " vs input " + shape_to_string(x.shape()));
  const int64_t t_out = T + 2 * padding - dilation * (k - 1);
  if (t_out <= 0) throw Error("conv1d: input of length " + std::to_string(T) + " is too short");
  y.resize({out, t_out});
  // Tasks: column chunks x row blocks, enough of them to keep every thread busy even when T is short.
  const int64_t col_chunk = 512, n_col = (t_out + col_chunk - 1) / col_chunk;
  const int64_t want = 4 * static_cast<int64_t>(num_threads());
  const int64_t n_row = std::clamp<int64_t>((want + n_col - 1) / n_col, 1, std::max<int64_t>(1, out / 64));
  const int64_t row_block = (out + n_row - 1) / n_row;
  const int64_t halo = dilation * (k - 1);
  const float* X = x.data();
  parallel_for(n_col * n_row, [&](int64_t task) {
    const int64_t c0 = (task % n_col) * col_chunk, cols = std::min(col_chunk, t_out - c0);
    const int64_t r0 = (task / n_col) * row_block, rows = std::min(row_block, out - r0);
    if (rows <= 0) return;
    // Zero-padded slab of x covering this chunk's receptive field: input positions c0 - padding + [0, cols + halo).
    thread_local RowMatrix slab;
    slab.resize(in, cols + halo);
    const int64_t s0 = c0 - padding;
    for (int64_t i = 0; i < in; ++i) {
      float* dst = slab.data() + i * (cols + halo);
      const float* src = X + i * T;
      for (int64_t l = 0; l < cols + halo; ++l) {
        const int64_t t = s0 + l;
        dst[l] = (t >= 0 && t < T) ? src[t] : 0.0f;
      }
    }
    Eigen::Map<RowMatrix, Eigen::Unaligned, Eigen::OuterStride<>> Y(y.data() + r0 * t_out + c0, rows, cols,
                                                                    Eigen::OuterStride<>(t_out));
    Y.noalias() = tap(w, 0).middleRows(r0, rows) * slab.middleCols(0, cols);
    for (int64_t j = 1; j < k; ++j) Y.noalias() += tap(w, j).middleRows(r0, rows) * slab.middleCols(j * dilation, cols);
    if (bias) Y.colwise() += bias->vector().segment(r0, rows);
  });
}

void conv1d_onednn(const Tensor& x, const TensorView& w, const TensorView* bias, int padding, int dilation,
                   Tensor& y) {
  const int64_t in = x.dim(0), T = x.dim(1), out = w.dim(0), k = w.dim(2), K = k * in;
  if (w.dim(1) != in) throw Error("conv1d: weight " + shape_to_string(w.shape) + " vs input " + shape_to_string(x.shape()));
  const int64_t t_out = T + 2 * padding - dilation * (k - 1);
  if (t_out <= 0) throw Error("conv1d: input of length " + std::to_string(T) + " is too short");
  y.resize({out, t_out});
  // Tap-major weights transposed once per model: B[j*in + i, o] = W[o, i, j].
  auto prepare = [&] {
    auto b = std::make_shared<std::vector<float>>(static_cast<size_t>(K * out));
    for (int64_t o = 0; o < out; ++o)
      for (int64_t i = 0; i < in; ++i)
        for (int64_t j = 0; j < k; ++j) (*b)[(j * in + i) * out + o] = w.data[(o * in + i) * k + j];
    return std::shared_ptr<const std::vector<float>>(b);
  };
  auto b = cached_weights_as<float>(w.data, "conv1d-f32-tap-major " + shape_to_string(w.shape), prepare);
  // im2col, tap-major: row t = rows t, t+d, ..., t+(k-1)d of the zero-padded, transposed input, end to end.
  thread_local RowMatrix xt, cols, yt;
  xt.setZero(T + 2 * padding, in);
  xt.middleRows(padding, T) = x.matrix().transpose();
  cols.resize(t_out, K);
  for (int64_t t = 0; t < t_out; ++t)
    for (int64_t j = 0; j < k; ++j)
      std::copy_n(xt.data() + (t + j * dilation) * in, in, cols.data() + t * K + j * in);
  yt.resize(t_out, out);
  const float* a = cols.data();  // this thread's buffers (a task on a worker would see the worker's)
  float* c = yt.data();
  const int64_t parts = double(out) * K * t_out < kParallelMacs ? 1 : std::min<int64_t>(num_threads(), std::max<int64_t>(1, out / 64));
  const int64_t block = (out + parts - 1) / parts;
  parallel_for(parts, [&](int64_t p) {
    const int64_t c0 = p * block, c1 = std::min(out, c0 + block);
    if (c1 > c0) onednn_matmul_f32(a, t_out, K, b.data + c0, out, bias ? bias->data + c0 : nullptr, c1 - c0, c + c0, out);
  });
  y.matrix() = yt.transpose();
  // The scratch is per thread and kept for the next call, except when a long input made it large (the fp32
  // generator's last noise convolution over a 27 s segment: ~80 MB): that would stay resident for the rest
  // of the process. (Chunking it as conv1d_bf16 does could change oneDNN's blocking, hence its sums.)
  constexpr Eigen::Index kKeepFloats = Eigen::Index{4} << 20;
  if (xt.size() + cols.size() + yt.size() > kKeepFloats) xt = cols = yt = RowMatrix();
}

void conv1d_bf16(const Tensor& x, const TensorView& w, const TensorView* bias, int padding, int dilation, Tensor& y) {
  const int64_t in = x.dim(0), T = x.dim(1), out = w.dim(0), k = w.dim(2), K = k * in, d = dilation;
  if (w.dim(1) != in) throw Error("conv1d: weight " + shape_to_string(w.shape) + " vs input " + shape_to_string(x.shape()));
  if (out % 16 != 0 || in % 2 != 0) throw Error("conv1d_bf16: needs out % 16 == 0 and an even input channel count");
  if (d < 1) throw Error("conv1d_bf16: dilation " + std::to_string(d));
  const int64_t t_out = T + 2 * padding - d * (k - 1);
  if (t_out <= 0) throw Error("conv1d: input of length " + std::to_string(T) + " is too short");
  y.resize({out, t_out});
  // The weight with its taps ordered tap-major (W'[o, j*in + i] = W[o, i, j]): then row t of the im2col matrix
  // is rows t, t+d, .., t+(k-1)d of the zero-padded, transposed input laid end to end. Undilated, that is
  // row t of that input read with a row stride of `in` (rows overlap): no im2col copy. Dilated, the rows are
  // copied (a few hundred KB at the short chunks that come here). One GEMM of [t_out, k*in] x [k*in, out].
  auto pack = [&] {
    return pack_bt_bf16_parallel(nullptr, K, K, out, [&](int64_t o, float* tap_major) {
      const float* wo = w.data + o * in * k;
      for (int64_t j = 0; j < k; ++j)
        for (int64_t i = 0; i < in; ++i) tap_major[j * in + i] = wo[i * k + j];
    });
  };
  auto packed = cached_weights_as<bf16_t>(w.data, "conv1d-bf16-tap-major " + shape_to_string(w.shape), pack);
  // Output columns in chunks of kBf16ConvColumns, so that the scratch (x^T in fp32 and bf16, y^T) stays a few
  // MB however long the input is: these buffers are per thread and kept, and over a whole 27 s segment (the
  // generator's last noise convolution, 130k columns) they were ~85 MB for the rest of the process. Every
  // output row of gemm_bf16 depends on its own input row only, so chunking does not change any result.
  constexpr int64_t kBf16ConvColumns = 1024;
  thread_local std::vector<bf16_t> xt, im2col;
  thread_local RowMatrix xt_f32, yt;
  const int64_t pairs = K / 2, panels = out / 16;
  // Dilated, the copied im2col rows are kept too: at most ~1 M values (2 MB) per thread, in shorter chunks.
  const int64_t chunk = d > 1 ? std::clamp<int64_t>((int64_t{1} << 20) / K, 16, kBf16ConvColumns) : kBf16ConvColumns;
  for (int64_t t0 = 0; t0 < t_out; t0 += chunk) {
    const int64_t n = std::min(chunk, t_out - t0);
    // Rows [t0, t0 + n + d(k - 1)) of x^T with `padding` zero rows above and below, in bf16.
    const int64_t rows = n + d * (k - 1);
    const int64_t lo = std::clamp<int64_t>(padding - t0, 0, rows), hi = std::clamp<int64_t>(padding + T - t0, lo, rows);
    if (xt.size() < static_cast<size_t>(rows * in)) xt.resize(static_cast<size_t>(rows * in));
    std::fill(xt.begin(), xt.begin() + lo * in, bf16_t{0});
    if (hi > lo) {
      xt_f32.resize(hi - lo, in);
      xt_f32 = x.matrix().middleCols(t0 + lo - padding, hi - lo).transpose();
      to_bf16(xt_f32.data(), xt.data() + lo * in, (hi - lo) * in);
    }
    std::fill(xt.begin() + hi * in, xt.begin() + rows * in, bf16_t{0});
    if (d > 1) {
      if (im2col.size() < static_cast<size_t>(n * K)) im2col.resize(static_cast<size_t>(n * K));
      for (int64_t t = 0; t < n; ++t)
        for (int64_t j = 0; j < k; ++j) std::copy_n(xt.data() + (t + j * d) * in, in, im2col.data() + t * K + j * in);
    }
    yt.resize(n, out);
    const bf16_t* a = d > 1 ? im2col.data() : xt.data();  // this thread's buffers (a worker's task would see the worker's)
    const int64_t lda = d > 1 ? K : in;
    float* c = yt.data();
    const int64_t parts = double(out) * K * n < kParallelMacs ? 1 : 2 * num_threads();
    parallel_ranges(panels, 2, static_cast<int>(parts), [&](int64_t p0, int64_t p1) {
      gemm_bf16(a, lda, n, K, packed.data + p0 * pairs * 32, 16 * (p1 - p0), c + 16 * p0, out);
    });
    y.matrix().middleCols(t0, n) = yt.transpose();
  }
  add_bias_columns(y, bias);
}

// Winograd where it pays: enough columns to amortise the per-call weight transform, and channel counts
// whose transformed weights stay small (the generator's and the F0/N branches'). The 1024-wide decoder half
// only in bf16, whose transformed weights are prepared once (7 points x 2 bytes: 125 MB for its ten
// convolutions, 72 MB more than its tap-major bf16 weights) and which it runs 2.0-2.5x faster than the direct
// bf16 convolution: it is on the path to a segment's first audio (docs/benchmarks.md).
const WinogradTransform* conv1d_winograd_for(int64_t in, int64_t out, int64_t k, int64_t t_out, int dilation) {
  const WinogradTransform* wt = winograd_for_kernel(k);
  if (!wt || in < 32) return nullptr;
  if (in * out <= 512 * 512) return t_out >= winograd_min_columns(k, dilation) ? wt : nullptr;
  // Wide (the decoder half): from 64 columns (1.5-1.8x faster there, 2.0-2.5x from 240; below, its 2.3x larger
  // weights make it the slower of the two: bench/bench_kernels BM_conv1d_decoder).
  return k == 3 && kernel_precision() != Precision::fp32 && t_out >= 64 ? wt : nullptr;
}

namespace {
const WinogradTransform* winograd_for(const Tensor& x, const TensorView& w, int padding, int dilation) {
  const int64_t k = w.dim(2);
  return conv1d_winograd_for(x.dim(0), w.dim(0), k, x.dim(1) + 2 * padding - dilation * (k - 1), dilation);
}
}  // namespace

void conv1d_in_place(Tensor& x, const TensorView& w, const TensorView* bias, int padding, int dilation) {
  if (x.rank() != 2 || w.shape.size() != 3 || w.dim(1) != x.dim(0))
    throw Error("conv1d: weight " + shape_to_string(w.shape) + " vs input " + shape_to_string(x.shape()));
  if (const WinogradTransform* wt = winograd_for(x, w, padding, dilation))
    if (conv1d_winograd_in_place(x, w, bias, padding, dilation, *wt)) return;
  Tensor y;
  conv1d(x, w, bias, 1, padding, dilation, y);
  x = std::move(y);
}

void conv1d(const Tensor& x, const TensorView& w, const TensorView* bias, int stride, int padding, int dilation,
            Tensor& y) {
  if (stride != 1) return conv1d_gemm_per_tap(x, w, bias, stride, padding, dilation, y);
  const int64_t in = x.dim(0), out = w.dim(0), k = w.dim(2);
  const int64_t t_out = x.dim(1) + 2 * padding - dilation * (k - 1);
  if (const WinogradTransform* wt = winograd_for(x, w, padding, dilation))
    return conv1d_winograd(x, w, bias, padding, dilation, *wt, y);
  if (kernel_precision() != Precision::fp32 && out % 16 == 0 && in % 2 == 0 && t_out > 0)
    return conv1d_bf16(x, w, bias, padding, dilation, y);
  conv1d_onednn(x, w, bias, padding, dilation, y);
}

namespace {

// conv_transpose1d in bf16: the same scatter-add as below, with z^T[t, o*k + j] = sum_i x[i, t] w[i, o, j] one
// gemm_bf16 per block of columns (B = w viewed as [in, out*k], packed once per model). Blocks of output
// channels in parallel, each a whole number of 16-column panels.
void conv_transpose1d_bf16(const Tensor& x, const TensorView& w, const TensorView* bias, int stride, int padding,
                           int64_t channels_per_panel_group, Tensor& y) {
  const int64_t in = x.dim(0), T = x.dim(1), out = w.dim(1), k = w.dim(2), N = out * k, t_out = y.dim(1);
  auto pack = [&] {
    // Row n = o*k + j of B^T is column n of w viewed as [in, out*k].
    return pack_bt_bf16_parallel(nullptr, in, in, N, [&](int64_t n, float* dst) {
      for (int64_t i = 0; i < in; ++i) dst[i] = w.data[i * N + n];
    });
  };
  auto packed = cached_weights_as<bf16_t>(w.data, "conv-transpose-bf16 " + shape_to_string(w.shape), pack);
  // The input is transposed and rounded in spans of kSpanColumns columns, so that this per-thread scratch
  // stays small however long x is (over a whole 27 s segment it was ~34 MB, kept for the rest of the
  // process). Each output sample still receives its contributions in order of t, and every block of
  // kColumns rows is the same gemm_bf16 as over the whole input: the same result.
  constexpr int64_t kColumns = 128, kSpanColumns = 16 * kColumns;
  thread_local std::vector<bf16_t> xt;
  thread_local RowMatrix xt_f32;
  const int64_t pairs = in / 2;
  const int64_t groups = out / channels_per_panel_group;
  const int64_t blocks = double(in) * N * T < kParallelMacs ? 1 : std::min<int64_t>(groups, 2 * num_threads());
  float* Y = y.data();
  for (int64_t span0 = 0; span0 < T; span0 += kSpanColumns) {
    const int64_t span_n = std::min(kSpanColumns, T - span0);
    if (xt.size() < static_cast<size_t>(span_n * in)) xt.resize(static_cast<size_t>(span_n * in));
    xt_f32.resize(span_n, in);
    xt_f32 = x.matrix().middleCols(span0, span_n).transpose();
    to_bf16(xt_f32.data(), xt.data(), span_n * in);
    const bf16_t* a = xt.data();  // this thread's buffer (a task on a worker would see the worker's)
    parallel_ranges(groups, 1, static_cast<int>(std::max<int64_t>(1, blocks)), [&](int64_t g0, int64_t g1) {
      const int64_t o0 = g0 * channels_per_panel_group, o1 = g1 * channels_per_panel_group, n = (o1 - o0) * k;
      thread_local std::vector<float> zt;
      if (zt.size() < static_cast<size_t>(kColumns * n)) zt.resize(static_cast<size_t>(kColumns * n));
      if (span0 == 0)
        for (int64_t o = o0; o < o1; ++o) std::fill(Y + o * t_out, Y + (o + 1) * t_out, bias ? bias->data[o] : 0.0f);
      for (int64_t c0 = span0; c0 < span0 + span_n; c0 += kColumns) {
        const int64_t rows = std::min(kColumns, span0 + span_n - c0);
        gemm_bf16(a + (c0 - span0) * in, in, rows, in, packed.data + (o0 * k / 16) * pairs * 32, n, zt.data(), n);
        for (int64_t o = o0; o < o1; ++o) {
          float* yr = Y + o * t_out;
          for (int64_t t = 0; t < rows; ++t) {
            const float* zr = zt.data() + t * n + (o - o0) * k;
            const int64_t s0 = (c0 + t) * stride - padding;
            const int64_t j0 = std::max<int64_t>(0, -s0), j1 = std::min<int64_t>(k, t_out - s0);
            for (int64_t j = j0; j < j1; ++j) yr[s0 + j] += zr[j];
          }
        }
      }
    });
  }
}

}  // namespace

void conv_transpose1d(const Tensor& x, const TensorView& w, const TensorView* bias, int stride, int padding,
                      int output_padding, Tensor& y) {
  const int64_t in = x.dim(0), T = x.dim(1), out = w.dim(1), k = w.dim(2);
  if (w.dim(0) != in) throw Error("conv_transpose1d: weight " + shape_to_string(w.shape) + " vs input " + shape_to_string(x.shape()));
  const int64_t t_out = (T - 1) * stride - 2 * padding + k + output_padding;
  y.resize({out, t_out});
  // bf16 needs whole 16-column panels per block of output channels: g channels make g*k columns.
  const int64_t g = 16 / std::gcd<int64_t>(k, 16);
  if (kernel_precision() != Precision::fp32 && in % 2 == 0 && out % g == 0 && T > 0)
    return conv_transpose1d_bf16(x, w, bias, stride, padding, g, y);
  // Per block of output channels: z[o*k + j, t] = sum_i w[i, o, j] x[i, t] (w viewed as [in, out*k]), then
  // scatter-add z into y at t*stride + j - padding. Blocks write disjoint rows of y; within a block, columns
  // of x go in chunks so that z stays small (chunks' contributions overlap when k > stride: they add up).
  const int64_t blocks = double(in) * out * k * T < kParallelMacs ? 1 : std::min<int64_t>(out / 8, 2 * num_threads());
  constexpr int64_t kColumns = 256;
  parallel_ranges(out, 8, static_cast<int>(std::max<int64_t>(1, blocks)), [&](int64_t o0, int64_t o1) {
    thread_local RowMatrix z;
    float* Y = y.data();
    for (int64_t o = o0; o < o1; ++o) std::fill(Y + o * t_out, Y + (o + 1) * t_out, 0.0f);
    for (int64_t c0 = 0; c0 < T; c0 += kColumns) {
      const int64_t n = std::min(kColumns, T - c0);
      z.resize((o1 - o0) * k, n);
      z.noalias() = w.matrix().middleCols(o0 * k, (o1 - o0) * k).transpose() * x.matrix().middleCols(c0, n);
      for (int64_t o = o0; o < o1; ++o) {
        float* yr = Y + o * t_out;
        for (int64_t j = 0; j < k; ++j) {
          const float* zr = z.data() + ((o - o0) * k + j) * n;
          for (int64_t t = 0; t < n; ++t) {
            const int64_t s = (c0 + t) * stride + j - padding;
            if (s >= 0 && s < t_out) yr[s] += zr[t];
          }
        }
      }
    }
    if (bias)
      for (int64_t o = o0; o < o1; ++o)
        for (int64_t t = 0; t < t_out; ++t) Y[o * t_out + t] += bias->data[o];
  });
}

void conv_transpose1d_depthwise(const Tensor& x, const TensorView& w, const TensorView* bias, int stride,
                                int padding, int output_padding, Tensor& y) {
  const int64_t C = x.dim(0), T = x.dim(1), k = w.dim(2);
  if (w.dim(0) != C || w.dim(1) != 1) throw Error("depthwise conv_transpose1d: weight " + shape_to_string(w.shape));
  const int64_t t_out = (T - 1) * stride - 2 * padding + k + output_padding;
  y.resize({C, t_out});
  y.matrix().setZero();
  for (int64_t c = 0; c < C; ++c) {
    const float* xr = x.data() + c * T;
    float* yr = y.data() + c * t_out;
    for (int64_t t = 0; t < T; ++t)
      for (int64_t j = 0; j < k; ++j) {
        const int64_t s = t * stride + j - padding;
        if (s >= 0 && s < t_out) yr[s] += w.data[c * k + j] * xr[t];
      }
  }
  add_bias_columns(y, bias);
}

void layer_norm_channels(Tensor& x, const float* gamma, const float* beta, float eps) {
  const int64_t C = x.dim(0), T = x.dim(1);
  // Columns in blocks of 16, the lanes of a partial block masked: every column gets the same arithmetic
  // whatever block it falls in, so its result depends on that column alone, not on where it is or how many
  // there are. A sentence's text encoder computed in pieces while its text streams in then gives the bytes
  // of the whole (acoustic/text_encoder.h); Eigen's column means summed vectorised columns and a scalar tail
  // in different orders.
  constexpr int64_t B = 16;
  const float inv_c = 1.0f / static_cast<float>(C);
  float* X = x.data();
  parallel_ranges((T + B - 1) / B, 1, elementwise_parts(C * T), [&](int64_t b0, int64_t b1) {
    for (int64_t b = b0; b < b1; ++b) {
      const int64_t t0 = b * B, n = std::min(B, T - t0);
#ifdef __AVX512F__
      const __mmask16 m = n == B ? __mmask16(0xffff) : __mmask16((1u << n) - 1);
      __m512 sum = _mm512_setzero_ps(), sq = _mm512_setzero_ps();
      for (int64_t c = 0; c < C; ++c) sum = _mm512_add_ps(sum, _mm512_maskz_loadu_ps(m, X + c * T + t0));
      const __m512 mean = _mm512_mul_ps(sum, _mm512_set1_ps(inv_c));
      for (int64_t c = 0; c < C; ++c) {
        const __m512 d = _mm512_sub_ps(_mm512_maskz_loadu_ps(m, X + c * T + t0), mean);
        sq = _mm512_fmadd_ps(d, d, sq);
      }
      const __m512 inv = _mm512_div_ps(_mm512_set1_ps(1.0f),
                                       _mm512_sqrt_ps(_mm512_fmadd_ps(sq, _mm512_set1_ps(inv_c), _mm512_set1_ps(eps))));
      for (int64_t c = 0; c < C; ++c) {
        float* r = X + c * T + t0;
        const __m512 v = _mm512_mul_ps(_mm512_sub_ps(_mm512_maskz_loadu_ps(m, r), mean), inv);
        _mm512_mask_storeu_ps(r, m, gamma ? _mm512_fmadd_ps(v, _mm512_set1_ps(gamma[c]), _mm512_set1_ps(beta[c])) : v);
      }
#else
      for (int64_t t = t0; t < t0 + n; ++t) {
        float sum = 0, sq = 0;
        for (int64_t c = 0; c < C; ++c) sum += X[c * T + t];
        const float mean = sum * inv_c;
        for (int64_t c = 0; c < C; ++c) sq += (X[c * T + t] - mean) * (X[c * T + t] - mean);
        const float inv = 1.0f / std::sqrt(sq * inv_c + eps);
        for (int64_t c = 0; c < C; ++c) {
          const float v = (X[c * T + t] - mean) * inv;
          X[c * T + t] = gamma ? v * gamma[c] + beta[c] : v;
        }
      }
#endif
    }
  });
}

void layer_norm_rows(Tensor& x, const float* gamma, const float* beta, float eps) {
  const int64_t T = x.dim(0), C = x.dim(1);
  // Rows in parallel: each alone, the same arithmetic however they are split.
  parallel_ranges(T, 1, elementwise_parts(T * C), [&](int64_t t0, int64_t t1) {
    for (int64_t t = t0; t < t1; ++t) {
      Eigen::Map<Eigen::RowVectorXf> r(x.data() + t * C, C);
      const float mean = r.mean();
      r.array() -= mean;
      const float inv = 1.0f / std::sqrt(r.squaredNorm() / static_cast<float>(C) + eps);
      r *= inv;
      if (gamma)
        for (int64_t c = 0; c < C; ++c) r[c] = r[c] * gamma[c] + beta[c];
    }
  });
}

void adain(Tensor& x, const float* gamma, const float* beta, float eps) {
  const int64_t C = x.dim(0), T = x.dim(1);
  for (int64_t c = 0; c < C; ++c) {
    Eigen::Map<Eigen::RowVectorXf> r(x.data() + c * T, T);
    const float mean = r.mean();
    r.array() -= mean;
    const float inv = 1.0f / std::sqrt(r.squaredNorm() / static_cast<float>(T) + eps);
    r.array() = r.array() * ((1.0f + gamma[c]) * inv) + beta[c];
  }
}

void instance_norm_affine(Tensor& x, const float* scale, const float* shift, float eps) {
  const int64_t C = x.dim(0), T = x.dim(1);
  for (int64_t c = 0; c < C; ++c) {
    Eigen::Map<Eigen::RowVectorXf> r(x.data() + c * T, T);
    const float mean = r.mean();
    r.array() -= mean;
    const float inv = 1.0f / std::sqrt(r.squaredNorm() / static_cast<float>(T) + eps);
    r.array() = r.array() * (scale[c] * inv) + shift[c];
  }
}

void leaky_relu(Tensor& x, float slope) {
  float* p = x.data();
  parallel_ranges(x.numel(), 4096, elementwise_parts(x.numel()), [&](int64_t i0, int64_t i1) {
    // Eigen's select (both sides computed per packet, then blended): GCC keeps `p[i] >= 0 ? p[i] : p[i] * slope`
    // a scalar loop with a branch (it may not multiply the values it does not change, -ftrapping-math), which
    // mispredicts on half the values: ~0.5 ms per text-encoder layer. The same values either way.
    Eigen::Map<Eigen::ArrayXf> v(p + i0, i1 - i0);
    v = (v >= 0.0f).select(v, v * slope);
  });
}

void add_in_place(Tensor& y, const Tensor& x, float divide_by) {
  if (y.shape() != x.shape())
    throw Error("add_in_place: " + shape_to_string(y.shape()) + " += " + shape_to_string(x.shape()));
  float* a = y.data();
  const float* b = x.data();
  parallel_ranges(y.numel(), 4096, elementwise_parts(y.numel()), [&](int64_t i0, int64_t i1) {
    if (divide_by == 1.0f)
      for (int64_t i = i0; i < i1; ++i) a[i] += b[i];
    else
      for (int64_t i = i0; i < i1; ++i) a[i] = (a[i] + b[i]) / divide_by;
  });
}

void copy_tensor(const Tensor& src, Tensor& dst) {
  if (&src == &dst) return;
  dst.resize(src.shape());
  const float* a = src.data();
  float* b = dst.data();
  parallel_ranges(src.numel(), 4096, elementwise_parts(src.numel()), [&](int64_t i0, int64_t i1) {
    std::copy(a + i0, a + i1, b + i0);
  });
}

}  // namespace kokoro
