#include "core/linear_int8.h"

#include <algorithm>
#include <cmath>
#if defined(__AVX512F__)
#include <immintrin.h>
#endif
#include <memory>
#include <string>
#include <vector>

#include "core/bf16_gemm.h"
#include "core/error.h"
#include "core/parallel.h"
#include "core/weight_cache.h"

namespace kokoro {

namespace {
// Outlier channels of x [T, in] for linear_rows_int8: those whose largest |value| exceeds kOutlierRatio times
// the median channel's, the largest kMaxOutliers of them, in increasing order.
constexpr float kOutlierRatio = 4.0f;
constexpr int64_t kMaxOutliers = 8;
void outlier_channels(const Tensor& x, std::vector<int64_t>& out) {
  const int64_t T = x.dim(0), in = x.dim(1);
  thread_local std::vector<float> absmax, sorted;
  absmax.assign(static_cast<size_t>(in), 0.0f);
  for (int64_t t = 0; t < T; ++t) {
    const float* row = x.data() + t * in;
    for (int64_t c = 0; c < in; ++c) absmax[c] = std::max(absmax[c], std::fabs(row[c]));
  }
  sorted = absmax;
  std::nth_element(sorted.begin(), sorted.begin() + in / 2, sorted.end());
  const float limit = kOutlierRatio * sorted[static_cast<size_t>(in / 2)];
  out.clear();
  for (int64_t c = 0; c < in; ++c)
    if (absmax[c] > limit) out.push_back(c);
  if (static_cast<int64_t>(out.size()) > kMaxOutliers) {
    std::partial_sort(out.begin(), out.begin() + kMaxOutliers, out.end(),
                      [&](int64_t a, int64_t b) { return absmax[a] > absmax[b]; });
    out.resize(kMaxOutliers);
    std::sort(out.begin(), out.end());
  }
}
}  // namespace

// ALBERT's activations have a few channels far outside the others (after its layer norms channel 504 reaches
// 11-26 where the median channel's largest value is ~1.5; the FFN's GELU output has a handful at ~10): a
// row's 255 steps would span them and be 2-4x coarser for every other channel. As LLM.int8() does, those
// channels (kOutlierRatio times the median channel's largest value, at most kMaxOutliers) are quantised as 0
// and their products added in fp32 with bf16 weights (the packed form's W^T rows): a few hundred thousand
// multiply-adds beside tens of millions.
void quantize_for_linear_int8(const Tensor& x, Int8Rows& out) {
  outlier_channels(x, out.outliers);
  quantize_rows_u8(x.data(), x.dim(1), x.dim(0), x.dim(1), out.q, out.outliers.data(),
                   static_cast<int64_t>(out.outliers.size()));
}

void linear_rows_int8(const Tensor& x, const Int8Rows& xq, const TensorView& w, const TensorView* bias, Tensor& y) {
  const int64_t out = w.dim(0), in = w.dim(1), T = x.dim(0);
  if (w.dim(1) != x.dim(1) || xq.q.rows != T || xq.q.K != in)
    throw Error("linear: weight " + shape_to_string(w.shape) + " vs input " + shape_to_string(x.shape()));
  auto pack = [&] {
    auto p = std::make_shared<std::vector<int8_t>>(static_cast<size_t>(packed_s8_bytes(in, out)));
    pack_weights_s8(w.data, in, in, out, p->data());
    return std::shared_ptr<const std::vector<int8_t>>(p);
  };
  auto packed = cached_weights_as<int8_t>(w.data, "linear-s8-outlier-rows " + shape_to_string(w.shape), pack);
  y.resize({T, out});
  const int64_t panels = out / 16;
  const int64_t parts = double(out) * in * T < kParallelMacs ? 1 : 2 * num_threads();
  parallel_ranges(panels, 2, static_cast<int>(parts), [&](int64_t p0, int64_t p1) {
    const int64_t n0 = 16 * p0, n1 = 16 * p1;
    gemm_u8s8(xq.q, packed.data, out, n0, n1, bias ? bias->data : nullptr, y.data(), out);
    if (xq.outliers.empty()) return;
    // The outliers' weights for these columns as fp32 rows, then row by row of y (it stays in L1 while every
    // outlier is added, in the order of the channels).
    const int64_t k = static_cast<int64_t>(xq.outliers.size()), n = n1 - n0;
    thread_local std::vector<float> wf;
    wf.resize(static_cast<size_t>(k * n));
    for (int64_t j = 0; j < k; ++j) {
      const uint16_t* wt = packed_s8_transposed_row(packed.data, in, out, xq.outliers[j]) + n0;
      for (int64_t i = 0; i < n; ++i) wf[j * n + i] = from_bf16(wt[i]);
    }
    for (int64_t t = 0; t < T; ++t) {
      float* yr = y.data() + t * out + n0;
#if defined(__AVX512F__)
      // 64 columns of the row stay in four registers while every outlier is added (in the channels' order,
      // as the loop below: the same sums), four independent chains of FMAs; a load and a store of the row
      // per outlier made this loop ~5 % of ALBERT's time at 275 tokens.
      float v[kMaxOutliers];
      for (int64_t j = 0; j < k; ++j) v[j] = x[t * in + xq.outliers[j]];
      int64_t i0 = 0;
      for (; i0 + 64 <= n; i0 += 64) {
        __m512 a0 = _mm512_loadu_ps(yr + i0), a1 = _mm512_loadu_ps(yr + i0 + 16), a2 = _mm512_loadu_ps(yr + i0 + 32),
               a3 = _mm512_loadu_ps(yr + i0 + 48);
        for (int64_t j = 0; j < k; ++j) {
          const __m512 vj = _mm512_set1_ps(v[j]);
          const float* w = wf.data() + j * n + i0;
          a0 = _mm512_fmadd_ps(vj, _mm512_loadu_ps(w), a0);
          a1 = _mm512_fmadd_ps(vj, _mm512_loadu_ps(w + 16), a1);
          a2 = _mm512_fmadd_ps(vj, _mm512_loadu_ps(w + 32), a2);
          a3 = _mm512_fmadd_ps(vj, _mm512_loadu_ps(w + 48), a3);
        }
        _mm512_storeu_ps(yr + i0, a0);
        _mm512_storeu_ps(yr + i0 + 16, a1);
        _mm512_storeu_ps(yr + i0 + 32, a2);
        _mm512_storeu_ps(yr + i0 + 48, a3);
      }
      for (; i0 < n; i0 += 16) {
        __m512 a = _mm512_loadu_ps(yr + i0);
        for (int64_t j = 0; j < k; ++j) a = _mm512_fmadd_ps(_mm512_set1_ps(v[j]), _mm512_loadu_ps(wf.data() + j * n + i0), a);
        _mm512_storeu_ps(yr + i0, a);
      }
#else
      for (int64_t j = 0; j < k; ++j) {
        const float v = x[t * in + xq.outliers[j]];
        const float* w = wf.data() + j * n;
        for (int64_t i = 0; i < n; ++i) yr[i] += v * w[i];
      }
#endif
    }
  });
}

void linear_rows_int8(const Tensor& x, const TensorView& w, const TensorView* bias, Tensor& y) {
  thread_local Int8Rows xq;
  quantize_for_linear_int8(x, xq);
  const Int8Rows& mine = xq;  // this thread's buffers (a task on a worker would see the worker's)
  linear_rows_int8(x, mine, w, bias, y);
}

}  // namespace kokoro
