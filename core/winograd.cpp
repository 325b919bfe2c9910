#include "core/winograd.h"

#include <Eigen/Dense>
#include <algorithm>
#include <memory>
#include <string>
#include <type_traits>
#ifdef __AVX512F__
#include <immintrin.h>
#endif

#include "core/bf16_gemm.h"
#include "core/error.h"
#include "core/onednn_matmul.h"
#include "core/parallel.h"
#include "core/precision.h"
#include "core/weight_cache.h"

namespace kokoro {

namespace {

using DMatrix = Eigen::Matrix<double, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;

// Rows [1, a, a^2, ...] of length n for each finite point, then [0 ... 0 1] for infinity.
DMatrix evaluation(const std::vector<double>& points, int n) {
  DMatrix e = DMatrix::Zero(points.size() + 1, n);
  for (size_t p = 0; p < points.size(); ++p) {
    double v = 1;
    for (int c = 0; c < n; ++c, v *= points[p]) e(p, c) = v;
  }
  e(points.size(), n - 1) = 1;
  return e;
}

// Scratch of one chunk, per thread, kept between calls (see fitted()).
struct ChunkScratch {
  std::vector<float, Eigen::aligned_allocator<float>> xt, v, m, yt;
  std::vector<float, Eigen::aligned_allocator<float>> windows;  // fp32 with groups > 1: V's group windows, one per row
  std::vector<bf16_t> vb;  // V in bf16 (bf16 precision)
};
ChunkScratch& chunk_scratch() {
  thread_local ChunkScratch s;
  return s;
}
std::vector<float, Eigen::aligned_allocator<float>>& weight_scratch() {
  thread_local std::vector<float, Eigen::aligned_allocator<float>> u;
  return u;
}

constexpr int64_t kChunkOutputs = 2048;  // outputs per task: V and M stay within L2 at 128-256 channels
// Up to this many tiles, from 256 output channels: one chunk, its products split over the channels. Measured
// (bf16, 2 threads, the model's weights, medians of 61 calls, alternated runs): 512 channels over 5 and 10 tiles
// 0.17 / 0.20 ms against 0.28 / 0.29; 256 channels at dilation 3 over 9 tiles 0.15-0.19 against 0.21-0.23, at
// dilation 5 over 6 tiles 0.28-0.36 against 0.46-0.47; over 13-16 tiles the chunks were faster (0.060-0.069
// against 0.072-0.093).
constexpr int64_t kFewTiles = 10;

// Per-thread scratch sized for the current call: grown when too small, and given back when more than twice
// what the call needs (kKeptSlackBytes and more), so that what a larger convolution needed is not held
// through the next ones. The decoder's convolutions (1024+ channels) need ~40 MB of scratch per thread and
// the generator's first stage (256 channels) ~10 MB; kept, they stayed resident through the generator's
// last stage (128 channels), the peak of the process (issue 12, "peak RSS"). Both the decoder's (~10^10
// flops per chunk) and the generator's (a few reallocations per segment) pay little for it. Every call
// asks for the same size in all of its chunks, so the chunks of one call never reallocate.
constexpr size_t kKeptSlackBytes = size_t{1} << 20;
// The in-place write-back buffers use a tighter `kept` (1.25): their size depends only on the output channels
// and the chunk width (the same for every convolution of a generator stage on a long segment), so a buffer
// kept from the generator's first stage (256 channels) is given back at the last (128), the process's peak.
template <class V>
auto* fitted(V& v, size_t n, double kept = 2.0) {
  using T = typename V::value_type;
  if (v.capacity() > kept * n && (v.capacity() - n) * sizeof(T) > kKeptSlackBytes) V().swap(v);
  if (v.size() < n) v.resize(n);
  return v.data();
}

}  // namespace

WinogradTransform WinogradTransform::make(int m, int r, const std::vector<double>& points) {
  const int alpha = m + r - 1;
  if (static_cast<int>(points.size()) != alpha - 1)
    throw Error("winograd: F(" + std::to_string(m) + "," + std::to_string(r) + ") needs " + std::to_string(alpha - 1) +
                " points");
  // Linear convolution s = h * x (h: r taps, x: m values) is s = C [(E_h h) . (E_x x)], C = V^-1. Its
  // transpose maps alpha inputs d to the m outputs of the correlation y_i = sum_j h_j d_{i+j}:
  //   y = E_x^T [(E_h h) . (C^T d)],  so AT = E_x^T, G = E_h, BT = C^T.
  const DMatrix eh = evaluation(points, r), ex = evaluation(points, m), vand = evaluation(points, alpha);
  const DMatrix c = vand.inverse();
  WinogradTransform t;
  t.m = m;
  t.r = r;
  t.alpha = alpha;
  const DMatrix at = ex.transpose(), bt = c.transpose();
  for (int i = 0; i < m; ++i)
    for (int p = 0; p < alpha; ++p) t.AT.push_back(static_cast<float>(at(i, p)));
  for (int p = 0; p < alpha; ++p)
    for (int j = 0; j < r; ++j) t.G.push_back(static_cast<float>(eh(p, j)));
  for (int p = 0; p < alpha; ++p)
    for (int s = 0; s < alpha; ++s) t.BT.push_back(static_cast<float>(bt(p, s)));
  return t;
}

const WinogradTransform* winograd_for_kernel(int64_t k) {
  // alpha = 7 for every kernel: points 0, +-1, +-2, 1/2 and infinity keep the transforms' entries small
  // (error ~1e-7 relative); k = 3 uses F(5, 3), longer kernels F(4, 4) on groups of 4 taps.
  static const WinogradTransform f53 = WinogradTransform::make(5, 3, {0, 1, -1, 2, -2, 0.5});
  static const WinogradTransform f44 = WinogradTransform::make(4, 4, {0, 1, -1, 2, -2, 0.5});
  if (k == 3) return &f53;
  if (k >= 4) return &f44;
  return nullptr;
}

namespace {

#ifdef __AVX512F__
// 16 x 16 transpose in registers: src rows lds apart -> dst rows ldd apart.
inline void transpose16(const float* src, int64_t lds, float* dst, int64_t ldd) {
  __m512 r[16], t[16];
  for (int i = 0; i < 16; ++i) r[i] = _mm512_loadu_ps(src + i * lds);
  for (int i = 0; i < 8; ++i) {
    t[2 * i] = _mm512_unpacklo_ps(r[2 * i], r[2 * i + 1]);
    t[2 * i + 1] = _mm512_unpackhi_ps(r[2 * i], r[2 * i + 1]);
  }
  for (int i = 0; i < 4; ++i) {
    r[4 * i] = _mm512_castpd_ps(_mm512_unpacklo_pd(_mm512_castps_pd(t[4 * i]), _mm512_castps_pd(t[4 * i + 2])));
    r[4 * i + 1] = _mm512_castpd_ps(_mm512_unpackhi_pd(_mm512_castps_pd(t[4 * i]), _mm512_castps_pd(t[4 * i + 2])));
    r[4 * i + 2] = _mm512_castpd_ps(_mm512_unpacklo_pd(_mm512_castps_pd(t[4 * i + 1]), _mm512_castps_pd(t[4 * i + 3])));
    r[4 * i + 3] = _mm512_castpd_ps(_mm512_unpackhi_pd(_mm512_castps_pd(t[4 * i + 1]), _mm512_castps_pd(t[4 * i + 3])));
  }
  for (int i = 0; i < 4; ++i) {
    t[i] = _mm512_shuffle_f32x4(r[i], r[i + 4], 0x88);
    t[i + 4] = _mm512_shuffle_f32x4(r[i], r[i + 4], 0xdd);
    t[i + 8] = _mm512_shuffle_f32x4(r[i + 8], r[i + 12], 0x88);
    t[i + 12] = _mm512_shuffle_f32x4(r[i + 8], r[i + 12], 0xdd);
  }
  for (int i = 0; i < 8; ++i) {
    r[i] = _mm512_shuffle_f32x4(t[i], t[i + 8], 0x88);
    r[i + 8] = _mm512_shuffle_f32x4(t[i], t[i + 8], 0xdd);
  }
  for (int i = 0; i < 16; ++i) _mm512_storeu_ps(dst + i * ldd, r[i]);
}
#endif

// Transposes a [rows, cols] block of a row-major matrix with leading dimension ld_src into dst [cols, rows]
// (leading dimension ld_dst, rows by default): 16 x 16 register tiles, scalar edges.
void transpose_block(const float* src, int64_t ld_src, int64_t rows, int64_t cols, float* dst, int64_t ld_dst = 0) {
  if (ld_dst == 0) ld_dst = rows;
  [[maybe_unused]] constexpr int64_t B = 16;  // the AVX-512 tile (the x86-64-v3 and baseline variants go scalar)
  int64_t r_full = 0, c_full = 0;
#ifdef __AVX512F__
  r_full = rows / B * B;
  c_full = cols / B * B;
  for (int64_t r0 = 0; r0 < r_full; r0 += B)
    for (int64_t c0 = 0; c0 < c_full; c0 += B) transpose16(src + r0 * ld_src + c0, ld_src, dst + c0 * ld_dst + r0, ld_dst);
#endif
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t c = (r < r_full ? c_full : 0); c < cols; ++c) dst[c * ld_dst + r] = src[r * ld_src + c];
}

// dst[p][0..n) = sum_s T[p][s] src_s[0..n) for p < P, s < S, where src_s = src + s * stride: the tile
// transforms, 16 channels per step with the S inputs held in registers and each output written once.
// Out is float, or bf16_t (rounded to nearest even: the bf16 path's input transform).
template <int P, int S, class Out>
void combine(const float* tm, const float* src, int64_t stride, Out* const* dst, int64_t n) {
  int64_t i0 = 0;
#ifdef __AVX512F__
  for (; i0 < n; i0 += 16) {
    const __mmask16 mask = n - i0 >= 16 ? __mmask16(0xffff) : __mmask16((1u << (n - i0)) - 1);
    __m512 in[S];
    for (int s = 0; s < S; ++s) in[s] = _mm512_maskz_loadu_ps(mask, src + s * stride + i0);
    for (int p = 0; p < P; ++p) {
      __m512 acc = _mm512_mul_ps(_mm512_set1_ps(tm[p * S]), in[0]);
      for (int s = 1; s < S; ++s) acc = _mm512_fmadd_ps(_mm512_set1_ps(tm[p * S + s]), in[s], acc);
      if constexpr (std::is_same_v<Out, float>) {
        _mm512_mask_storeu_ps(dst[p] + i0, mask, acc);
      } else {
#ifdef __AVX512BF16__
        _mm256_mask_storeu_epi16(dst[p] + i0, mask, (__m256i)_mm512_cvtneps_pbh(acc));
#else
        alignas(64) float tmp[16];
        _mm512_store_ps(tmp, acc);
        to_bf16(tmp, dst[p] + i0, std::min<int64_t>(16, n - i0));
#endif
      }
    }
  }
#endif
  for (; i0 < n; ++i0)
    for (int p = 0; p < P; ++p) {
      float acc = 0;
      for (int s = 0; s < S; ++s) acc += tm[p * S + s] * src[s * stride + i0];
      if constexpr (std::is_same_v<Out, float>)
        dst[p][i0] = acc;
      else
        to_bf16(&acc, dst[p] + i0, 1);
    }
}

using CombineFn = void (*)(const float*, const float*, int64_t, float* const*, int64_t);
using CombineBf16Fn = void (*)(const float*, const float*, int64_t, bf16_t* const*, int64_t);

CombineFn input_combiner(int alpha) {
  if (alpha == 7) return &combine<7, 7, float>;
  return nullptr;
}
CombineBf16Fn input_combiner_bf16(int alpha) {
  if (alpha == 7) return &combine<7, 7, bf16_t>;
  return nullptr;
}
CombineFn output_combiner(int m, int alpha) {
  if (alpha == 7 && m == 5) return &combine<5, 7, float>;
  if (alpha == 7 && m == 4) return &combine<4, 7, float>;
  return nullptr;
}

// U[p][g * ci + i][o] = sum_j G[p][j] w[o][i][g * r + j] into U [alpha][groups * ci][co], built 16 output
// channels at a time so that the writes are contiguous.
void transform_weights(const TensorView& w, const WinogradTransform& tr, int64_t groups, float* U) {
  const int64_t co = w.dim(0), ci = w.dim(1), k = w.dim(2);
  const int r = tr.r, alpha = tr.alpha;
  const int64_t gci = groups * ci;
  parallel_ranges(co, 16, 4 * num_threads(), [&](int64_t o0, int64_t o1) {
    constexpr int64_t B = 16;
    float gm[16 * 16];  // G, local so that the compiler knows it does not alias U
    std::copy(tr.G.begin(), tr.G.end(), gm);
    for (int64_t ob = o0; ob < o1; ob += B) {
      const int64_t nb_o = std::min(o1, ob + B) - ob;
      for (int64_t i = 0; i < ci; ++i) {
        // taps[j][o]: tap j of the 16 output channels' filters for input channel i, zero past k.
        float taps[48][B];
        for (int64_t j = 0; j < groups * r; ++j) std::fill(taps[j], taps[j] + B, 0.0f);
        for (int64_t o = 0; o < nb_o; ++o) {
          const float* wr = w.data + ((ob + o) * ci + i) * k;
          for (int64_t j = 0; j < k; ++j) taps[j][o] = wr[j];
        }
        for (int64_t g = 0; g < groups; ++g)
          for (int p = 0; p < alpha; ++p) {
            float acc[B] = {};
            for (int j = 0; j < r; ++j) {
              const float c = gm[p * r + j];
              for (int64_t o = 0; o < B; ++o) acc[o] += c * taps[g * r + j][o];
            }
            float* dst = U + (p * gci + g * ci + i) * co + ob;
            for (int64_t o = 0; o < nb_o; ++o) dst[o] = acc[o];
          }
      }
    }
  });
}

// The bf16 form of U: per point, B of that point's GEMM packed for gemm_bf16 (core/bf16_gemm.h).
std::shared_ptr<const std::vector<bf16_t>> transform_weights_bf16(const TensorView& w, const WinogradTransform& tr,
                                                                   int64_t groups) {
  const int64_t co = w.dim(0), gci = groups * w.dim(1);
  std::vector<float, Eigen::aligned_allocator<float>> u(static_cast<size_t>(tr.alpha * gci * co));
  transform_weights(w, tr, groups, u.data());
  const int64_t per_point = packed_b_bf16_size(gci, co);
  auto out = std::make_shared<std::vector<bf16_t>>(static_cast<size_t>(tr.alpha * per_point));
  parallel_for(tr.alpha, [&](int64_t p) {
    pack_b_bf16(u.data() + p * gci * co, co, gci, co, out->data() + p * per_point);
  });
  return out;
}

}  // namespace

namespace {

// conv1d_winograd into y, or (y == nullptr) into x itself (conv1d_winograd_in_place: ci == co, t_out == T).
void winograd_conv(const Tensor& x, const TensorView& w, const TensorView* bias, int padding, int dilation,
                   const WinogradTransform& tr, Tensor* y, float* in_place) {
  const int64_t ci = x.dim(0), T = x.dim(1), co = w.dim(0), k = w.dim(2);
  if (w.dim(1) != ci)
    throw Error("conv1d (winograd): weight " + shape_to_string(w.shape) + " vs input " + shape_to_string(x.shape()));
  const int m = tr.m, r = tr.r, alpha = tr.alpha;
  const int64_t groups = (k + r - 1) / r;
  if (groups > 1 && r != m) throw Error("conv1d (winograd): a split kernel needs F(m, m)");
  if (groups * r > 48 || alpha * r > 256) throw Error("conv1d (winograd): kernel of " + std::to_string(k) + " taps is too long");
  const CombineFn in_combine = input_combiner(alpha), out_combine = output_combiner(m, alpha);
  if (!in_combine || !out_combine)
    throw Error("conv1d (winograd): no kernel for F(" + std::to_string(m) + "," + std::to_string(r) + ")");
  const int64_t d = dilation, P = padding;
  const int64_t t_out = T + 2 * P - d * (k - 1);
  if (t_out <= 0) throw Error("conv1d: input of length " + std::to_string(T) + " is too short");
  if (y) y->resize({co, t_out});

  // U transformed once per model (core/weight_cache.h): bf16 packed, or fp32 as it is. Per call only for
  // weights outside a model file (tests' own). fp32 was transformed on every call until measured: on an fp32
  // machine that was 18 % of a whole utterance's CPU in slice mode, where the generator runs once per slice
  // (docs/benchmarks.md, "Winograd weights transformed once"); the values are the same either way.
  const int64_t gci = groups * ci;
  const bool bf16 = kernel_precision() != Precision::fp32 && co % 16 == 0 && gci % 2 == 0;
  const std::string shape_kind = "F(" + std::to_string(m) + "," + std::to_string(r) + ") " + shape_to_string(w.shape);
  Prepared<bf16_t> Ub;
  PreparedBytes Uf;
  const float* U = nullptr;
  if (bf16) {
    Ub = cached_weights_as<bf16_t>(w.data, "winograd-bf16 " + shape_kind, [&] { return transform_weights_bf16(w, tr, groups); });
  } else {
    const size_t u_size = static_cast<size_t>(alpha) * gci * co;
    Uf = cached_weights(w.data, "winograd-f32 " + shape_kind, [&] {
      auto u = std::make_shared<std::vector<float, Eigen::aligned_allocator<float>>>(u_size);
      transform_weights(w, tr, groups, u->data());
      const void* d = u->data();
      return PreparedBytes{std::move(u), d, u_size * sizeof(float)};
    });
    if (Uf.data) {
      U = static_cast<const float*>(Uf.data);
    } else {
      float* scratch = fitted(weight_scratch(), u_size);
      transform_weights(w, tr, groups, scratch);
      U = scratch;
    }
  }
  const CombineBf16Fn in_combine_bf16 = input_combiner_bf16(alpha);
  const int64_t ub_per_point = packed_b_bf16_size(gci, co);

  const int64_t span = static_cast<int64_t>(m) * d;  // outputs covered by one tile index b (all phases)
  const int64_t nb = (t_out + span - 1) / span;
  // A few tiles (a streamed sentence's last text encoder columns, acoustic/text_encoder.h): one chunk whose
  // products are split over the output channels instead. Chunks of a tile or two each read all of U (7 MB
  // in bf16 for the text encoder's 512 channels), where a share of the channels reads its share once. Each
  // element is the same sum either way (core/bf16_gemm.h: a row's sums do not depend on the rows or
  // columns computed with it).
  const bool split_channels = bf16 && y && nb <= kFewTiles && num_threads() > 1 && co >= 256;
  // Chunks: at most kChunkOutputs outputs each, and at least two per thread when the input allows.
  const int64_t per_chunk = split_channels ? nb
                                           : std::clamp<int64_t>((nb + 2 * num_threads() - 1) / (2 * num_threads()), 1,
                                                                 std::max<int64_t>(1, kChunkOutputs / span));
  const int64_t chunks = (nb + per_chunk - 1) / per_chunk;
  const float* X = x.data();
  // Scratch sizes of the largest chunk (n = per_chunk), asked for by every chunk (see fitted()).
  const int64_t max_nv = per_chunk + groups - 1, max_rows = d * max_nv;
  const size_t xt_size = static_cast<size_t>(((max_nv - 1) * span + d * alpha) * ci);
  const size_t v_size = static_cast<size_t>(alpha * max_rows * ci), m_size = static_cast<size_t>(alpha * max_rows * co);
  const size_t yt_size = static_cast<size_t>(per_chunk * span * co);

  // Chunk c: its outputs, plus the bias, into columns [t0 - col0, t1 - col0) of Yd (rows ldy apart).
  auto compute_chunk = [&](int64_t c, float* Yd, int64_t ldy, int64_t col0) {
    const int64_t b0 = c * per_chunk, n = std::min(nb, b0 + per_chunk) - b0, nv = n + groups - 1;
    ChunkScratch& s = chunk_scratch();
    // 1. Time-major slab of the input this chunk reads, zero outside [0, T).
    const int64_t base = b0 * span - P, len = (nv - 1) * span + d * alpha;
    float* xt = fitted(s.xt, xt_size);
    const int64_t lo = std::clamp<int64_t>(-base, 0, len), hi = std::clamp<int64_t>(T - base, lo, len);
    std::fill(xt, xt + lo * ci, 0.0f);
    std::fill(xt + hi * ci, xt + len * ci, 0.0f);
    if (hi > lo) transpose_block(X + base + lo, T, ci, hi - lo, xt + lo * ci);
    // 2. Input transform: V[p][ph][b][i] = sum_s BT[p][s] xt[b * span + ph + d * s][i]
    const int64_t rows = d * nv;  // tile rows per point, phase-major
    float* dst[16];
    float* V = nullptr;
    bf16_t* Vb = nullptr;
    if (bf16) {
      Vb = fitted(s.vb, v_size);
      bf16_t* dstb[16];
      for (int64_t ph = 0; ph < d; ++ph)
        for (int64_t b = 0; b < nv; ++b) {
          for (int p = 0; p < alpha; ++p) dstb[p] = Vb + (p * rows + ph * nv + b) * ci;
          in_combine_bf16(tr.BT.data(), xt + (b * span + ph) * ci, d * ci, dstb, ci);
        }
    } else {
      V = fitted(s.v, v_size);
      for (int64_t ph = 0; ph < d; ++ph)
        for (int64_t b = 0; b < nv; ++b) {
          for (int p = 0; p < alpha; ++p) dst[p] = V + (p * rows + ph * nv + b) * ci;
          in_combine(tr.BT.data(), xt + (b * span + ph) * ci, d * ci, dst, ci);
        }
    }
    // 3. Per point, one GEMM over every phase's tiles: M[row][o] = V[row .. row + groups)[i] U_p (K = groups
    //    * ci). The last groups - 1 rows of each phase only feed the group windows; the window of such a
    //    row runs into the next phase and its (unused) result is never read.
    float* M = fitted(s.m, m_size);
    const int64_t gemm_rows = rows - (groups - 1);
    for (int p = 0; p < alpha; ++p) {
      if (bf16 && split_channels) continue;  // below, all points at once
      if (bf16) {
        gemm_bf16(Vb + p * rows * ci, ci, gemm_rows, gci, Ub.data + p * ub_per_point, co, M + p * rows * co, co);
        continue;
      }
      // oneDNN's JIT kernel reads U in place, where Eigen packs it anew in every product (per chunk and
      // point): 1.2-1.9x faster at 32-128 rows and 128-256 channels, equal at 8 rows (docs/benchmarks.md,
      // "Winograd products on oneDNN"). Its source rows must not overlap, so with groups > 1 each row's
      // window (gci contiguous floats of V from that row on) is copied out first.
      const float* vin = V + p * rows * ci;
      if (groups > 1) {
        float* w = fitted(s.windows, static_cast<size_t>(max_rows * gci));
        for (int64_t r = 0; r < gemm_rows; ++r) std::copy(vin + r * ci, vin + r * ci + gci, w + r * gci);
        vin = w;
      }
      onednn_matmul_f32(vin, gemm_rows, gci, U + p * gci * co, co, nullptr, co, M + p * rows * co, co);
    }
    if (split_channels) {
      // Per point, panels of 16 output channels (packed B's panels are contiguous: pairs * 32 elements each).
      const int64_t panels = co / 16, parts = std::min<int64_t>(panels, 2 * num_threads());
      parallel_for(alpha * parts, [&](int64_t task) {
        const int64_t p = task / parts, part = task % parts;
        const int64_t q0 = panels * part / parts, q1 = panels * (part + 1) / parts;
        gemm_bf16(Vb + p * rows * ci, ci, gemm_rows, gci, Ub.data + p * ub_per_point + q0 * (gci / 2) * 32,
                  16 * (q1 - q0), M + p * rows * co + 16 * q0, co);
      });
    }
    // 4. Output transform into a time-major block (rows past t_out land in spare rows), then transposed
    //    straight into y's columns [t0, t1) and the bias added there.
    const int64_t t0 = b0 * span, t1 = std::min(t_out, (b0 + n) * span);
    float* yt = fitted(s.yt, yt_size);
    for (int64_t ph = 0; ph < d; ++ph)
      for (int64_t b = 0; b < n; ++b) {
        for (int q = 0; q < m; ++q) dst[q] = yt + (b * span + ph + d * q) * co;
        // M rows of this tile for successive points are rows * co apart.
        out_combine(tr.AT.data(), M + (ph * nv + b) * co, rows * co, dst, co);
      }
    transpose_block(yt, co, t1 - t0, co, Yd + (t0 - col0), ldy);
    if (bias)
      for (int64_t o = 0; o < co; ++o) {
        const float bo = bias->data[o];
        float* yr = Yd + o * ldy + (t0 - col0);
        for (int64_t t = 0; t < t1 - t0; ++t) yr[t] += bo;
      }
  };
  if (split_channels) return compute_chunk(0, y->data(), t_out, 0);  // on this thread: its products in parallel
  if (y) {
    parallel_for(chunks, [&](int64_t c) { compute_chunk(c, y->data(), t_out, 0); });
    return;
  }
  // In place: groups of chunks, each group's outputs into one of two buffers and copied into x one group
  // later, once no chunk still to run reads those columns (a chunk reads its inputs from `padding` columns
  // before its first output on: a group is wider than that). The same chunks as above, so the same sums.
  const int64_t group = std::max<int64_t>(1, 2 * num_threads());
  const int64_t group_cols = group * per_chunk * span;
  thread_local std::vector<float, Eigen::aligned_allocator<float>> bufs[2];
  auto write_back = [&](int64_t g) {
    const int64_t c0 = g * group_cols, n = std::min(t_out, c0 + group_cols) - c0;
    const float* b = bufs[g % 2].data();
    parallel_ranges(co, 8, static_cast<int>(std::min<int64_t>(2 * num_threads(), co / 8)), [&](int64_t o0, int64_t o1) {
      for (int64_t o = o0; o < o1; ++o) std::copy_n(b + o * group_cols, n, in_place + o * t_out + c0);
    });
  };
  const int64_t groups_n = (chunks + group - 1) / group;
  for (int64_t g = 0; g < groups_n; ++g) {
    float* b = fitted(bufs[g % 2], static_cast<size_t>(co * group_cols), 1.25);
    const int64_t first = g * group, count = std::min(chunks, first + group) - first;
    parallel_for(count, [&](int64_t i) { compute_chunk(first + i, b, group_cols, g * group_cols); });
    if (g) write_back(g - 1);
  }
  write_back(groups_n - 1);
}

}  // namespace

void conv1d_winograd(const Tensor& x, const TensorView& w, const TensorView* bias, int padding, int dilation,
                     const WinogradTransform& tr, Tensor& y) {
  winograd_conv(x, w, bias, padding, dilation, tr, &y, nullptr);
}

bool conv1d_winograd_in_place(Tensor& x, const TensorView& w, const TensorView* bias, int padding, int dilation,
                              const WinogradTransform& tr) {
  const int64_t T = x.dim(1), k = w.dim(2);
  if (w.dim(0) != w.dim(1) || x.dim(0) != w.dim(1) || T + 2 * padding - dilation * (k - 1) != T) return false;
  // The write-back needs a group of chunks to be wider than the columns a chunk reads before its first output.
  const int64_t span = static_cast<int64_t>(tr.m) * dilation, nb = (T + span - 1) / span;
  const int64_t per_chunk = std::clamp<int64_t>((nb + 2 * num_threads() - 1) / (2 * num_threads()), 1,
                                                std::max<int64_t>(1, kChunkOutputs / span));
  if (std::max<int64_t>(1, 2 * num_threads()) * per_chunk * span <= padding) return false;
  winograd_conv(x, w, bias, padding, dilation, tr, nullptr, x.data());
  return true;
}

}  // namespace kokoro
