#include "core/winograd.h"

#include <Eigen/Dense>
#include <algorithm>

#include "core/error.h"
#include "core/parallel.h"

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

// Scratch of one chunk, per thread, grown to the largest size seen and kept.
struct ChunkScratch {
  std::vector<float, Eigen::aligned_allocator<float>> xt, v, m, yt;
};
ChunkScratch& chunk_scratch() {
  thread_local ChunkScratch s;
  return s;
}
std::vector<float, Eigen::aligned_allocator<float>>& weight_scratch() {
  thread_local std::vector<float, Eigen::aligned_allocator<float>> u;
  return u;
}
template <class V>
float* sized(V& v, size_t n) {
  if (v.size() < n) v.resize(n);
  return v.data();
}

constexpr int64_t kChunkOutputs = 2048;  // outputs per task: V and M stay within L2 at 128-256 channels

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

void conv1d_winograd(const Tensor& x, const TensorView& w, const TensorView* bias, int padding, int dilation,
                     const WinogradTransform& tr, Tensor& y) {
  const int64_t ci = x.dim(0), T = x.dim(1), co = w.dim(0), k = w.dim(2);
  if (w.dim(1) != ci)
    throw Error("conv1d (winograd): weight " + shape_to_string(w.shape) + " vs input " + shape_to_string(x.shape()));
  const int m = tr.m, r = tr.r, alpha = tr.alpha;
  const int64_t groups = (k + r - 1) / r;
  if (groups > 1 && r != m) throw Error("conv1d (winograd): a split kernel needs F(m, m)");
  const int64_t d = dilation, P = padding;
  const int64_t t_out = T + 2 * P - d * (k - 1);
  if (t_out <= 0) throw Error("conv1d: input of length " + std::to_string(T) + " is too short");
  y.resize({co, t_out});

  // U[p][g * ci + i][o] = sum_j G[p][j] w[o][i][g * r + j]
  const int64_t gci = groups * ci;
  float* U = sized(weight_scratch(), static_cast<size_t>(alpha) * gci * co);
  parallel_ranges(co, 16, 4 * num_threads(), [&](int64_t o0, int64_t o1) {
    for (int64_t o = o0; o < o1; ++o)
      for (int64_t i = 0; i < ci; ++i) {
        const float* wr = w.data + (o * ci + i) * k;
        for (int64_t g = 0; g < groups; ++g)
          for (int p = 0; p < alpha; ++p) {
            float s = 0;
            for (int j = 0; j < r && g * r + j < k; ++j) s += tr.G[p * r + j] * wr[g * r + j];
            U[(p * gci + g * ci + i) * co + o] = s;
          }
      }
  });

  const int64_t span = static_cast<int64_t>(m) * d;  // outputs covered by one tile index b (all phases)
  const int64_t nb = (t_out + span - 1) / span;
  const int64_t per_chunk = std::max<int64_t>(1, kChunkOutputs / span);
  const int64_t chunks = (nb + per_chunk - 1) / per_chunk;
  const float* X = x.data();
  float* Y = y.data();

  parallel_for(chunks, [&](int64_t c) {
    const int64_t b0 = c * per_chunk, n = std::min(nb, b0 + per_chunk) - b0, nv = n + groups - 1;
    ChunkScratch& s = chunk_scratch();
    // 1. Time-major slab of the input this chunk reads, zero outside [0, T).
    const int64_t base = b0 * span - P, len = (nv - 1) * span + d * alpha;
    float* xt = sized(s.xt, static_cast<size_t>(len * ci));
    for (int64_t i = 0; i < ci; ++i) {
      const float* xr = X + i * T;
      for (int64_t l = 0; l < len; ++l) {
        const int64_t t = base + l;
        xt[l * ci + i] = (t >= 0 && t < T) ? xr[t] : 0.0f;
      }
    }
    // 2. Input transform: V[ph][p][b][i] = sum_s BT[p][s] xt[b * span + ph + d * s][i]
    float* V = sized(s.v, static_cast<size_t>(d * alpha * nv * ci));
    for (int64_t ph = 0; ph < d; ++ph)
      for (int64_t b = 0; b < nv; ++b) {
        const float* src = xt + (b * span + ph) * ci;
        for (int p = 0; p < alpha; ++p) {
          float* dst = V + ((ph * alpha + p) * nv + b) * ci;
          std::fill(dst, dst + ci, 0.0f);
          for (int j = 0; j < alpha; ++j) {
            const float coef = tr.BT[p * alpha + j];
            if (coef == 0.0f) continue;
            const float* row = src + j * d * ci;
            for (int64_t i = 0; i < ci; ++i) dst[i] += coef * row[i];
          }
        }
      }
    // 3. Per phase and point: M[b][o] = V[b .. b + groups)[i] U_p, one GEMM with K = groups * ci.
    float* M = sized(s.m, static_cast<size_t>(d * alpha * n * co));
    using Strided = Eigen::Map<const RowMatrix, Eigen::Unaligned, Eigen::OuterStride<>>;
    for (int64_t ph = 0; ph < d; ++ph)
      for (int p = 0; p < alpha; ++p) {
        const Strided vin(V + (ph * alpha + p) * nv * ci, n, gci, Eigen::OuterStride<>(ci));
        const ConstMatrixMap up(U + p * gci * co, gci, co);
        MatrixMap(M + (ph * alpha + p) * n * co, n, co).noalias() = vin * up;
      }
    // 4. Output transform into a time-major block, then transposed into y with the bias.
    const int64_t t0 = b0 * span, t1 = std::min(t_out, (b0 + n) * span);
    float* yt = sized(s.yt, static_cast<size_t>((t1 - t0) * co));
    for (int64_t ph = 0; ph < d; ++ph)
      for (int64_t b = 0; b < n; ++b)
        for (int q = 0; q < m; ++q) {
          const int64_t t = (b0 + b) * span + ph + d * q;
          if (t >= t1) continue;
          float* dst = yt + (t - t0) * co;
          std::fill(dst, dst + co, 0.0f);
          for (int p = 0; p < alpha; ++p) {
            const float coef = tr.AT[q * alpha + p];
            if (coef == 0.0f) continue;
            const float* src = M + ((ph * alpha + p) * n + b) * co;
            for (int64_t o = 0; o < co; ++o) dst[o] += coef * src[o];
          }
        }
    for (int64_t o = 0; o < co; ++o) {
      const float bo = bias ? bias->data[o] : 0.0f;
      float* yr = Y + o * t_out;
      for (int64_t t = t0; t < t1; ++t) yr[t] = yt[(t - t0) * co + o] + bo;
    }
  });
}

}  // namespace kokoro
