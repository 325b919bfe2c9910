#include "core/linear_int8.h"

#include <algorithm>
#include <cmath>
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
  thread_local std::vector<float> absmax, sorted, partial;
  // Ranges of rows in parallel, each into its own maxima, then their maxima (exact in any order).
  const int parts = elementwise_parts(T * in);
  partial.assign(static_cast<size_t>(parts * in), 0.0f);
  float* const maxima = partial.data();  // this thread's buffer (a task on a worker would see the worker's)
  const int64_t step = (T + parts - 1) / parts;
  parallel_for(parts, [&](int64_t p) {
    float* m = maxima + p * in;
    for (int64_t t = p * step; t < std::min(T, (p + 1) * step); ++t) {
      const float* row = x.data() + t * in;
      for (int64_t c = 0; c < in; ++c) m[c] = std::max(m[c], std::fabs(row[c]));
    }
  });
  absmax.assign(maxima, maxima + in);
  for (int p = 1; p < parts; ++p)
    for (int64_t c = 0; c < in; ++c) absmax[c] = std::max(absmax[c], maxima[p * in + c]);
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
  // The outlier channels' products are added in gemm_u8s8's epilogue (Fp32Terms), in the channels' order:
  // their values per row here, their weights per block of columns as fp32 (the packed form's bf16 W^T rows).
  const int64_t k = static_cast<int64_t>(xq.outliers.size());
  thread_local std::vector<float> values;
  values.resize(static_cast<size_t>(T * k));
  for (int64_t t = 0; t < T; ++t)
    for (int64_t j = 0; j < k; ++j) values[t * k + j] = x[t * in + xq.outliers[j]];
  const float* v = values.data();  // this thread's buffer (a task on a worker would see the worker's)
  const int64_t panels = out / 16;
  const int64_t parts = double(out) * in * T < kParallelMacs ? 1 : 2 * num_threads();
  parallel_ranges(panels, 2, static_cast<int>(parts), [&](int64_t p0, int64_t p1) {
    const int64_t n0 = 16 * p0, n1 = 16 * p1, n = n1 - n0;
    thread_local std::vector<float> wf;
    wf.resize(static_cast<size_t>(k * n));
    for (int64_t j = 0; j < k; ++j) {
      const uint16_t* wt = packed_s8_transposed_row(packed.data, in, out, xq.outliers[j]) + n0;
      for (int64_t i = 0; i < n; ++i) wf[j * n + i] = from_bf16(wt[i]);
    }
    Fp32Terms extra;
    extra.k = k;
    extra.values = v;
    extra.weights = wf.data();
    extra.ldw = n;
    gemm_u8s8(xq.q, packed.data, out, n0, n1, bias ? bias->data : nullptr, y.data(), out, extra);
  });
}

void linear_rows_int8(const Tensor& x, const TensorView& w, const TensorView* bias, Tensor& y) {
  thread_local Int8Rows xq;
  quantize_for_linear_int8(x, xq);
  const Int8Rows& mine = xq;  // this thread's buffers (a task on a worker would see the worker's)
  linear_rows_int8(x, mine, w, bias, y);
}

}  // namespace kokoro
