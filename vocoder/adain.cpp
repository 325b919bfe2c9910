#include "vocoder/adain.h"

#include <algorithm>
#include <cmath>

#include "core/error.h"
#include "core/parallel.h"

namespace kokoro {

namespace {
thread_local InstanceStatsCapture* g_capture = nullptr;
}  // namespace

void adain_scale_row(float* r, int64_t n, float inv_std, float gamma, float beta) {
  Eigen::Map<Eigen::RowVectorXf> row(r, n);
  row.array() = row.array() * ((1.0f + gamma) * inv_std) + beta;
}

void adain_normalize_row(float* r, int64_t n, float mean, float inv_std, float gamma, float beta) {
  Eigen::Map<Eigen::RowVectorXf> row(r, n);
  row.array() -= mean;
  adain_scale_row(r, n, inv_std, gamma, beta);
}

AdaIN1d::AdaIN1d(const ModelFile& model, const std::string& prefix, int64_t channels, int64_t style_dim)
    : prefix_(prefix),
      channels_(channels),
      fc_w_(model.get(prefix + ".fc.weight", {2 * channels, style_dim})),
      fc_b_(model.get(prefix + ".fc.bias", {2 * channels})) {
  if (model.has(prefix + ".norm.weight") || model.has(prefix + ".norm.bias")) {
    has_norm_affine_ = true;
    norm_w_ = model.get(prefix + ".norm.weight", {channels});
    norm_b_ = model.get(prefix + ".norm.bias", {channels});
  }
}

AdaINAffine AdaIN1d::affine(const float* style) const {
  if (!style) throw Error("AdaIN1d " + prefix_ + ": no style vector");
  const int64_t C = channels_, rows = 2 * C;
  // Rows in two halves on the pool when there are many: each segment's begin projects the style through every
  // AdaIN of the decoder and generator (~19 MB of fc weights, read from memory) on its first audio's path.
  // Eigen gives a row the same dot product in any block of 3 rows or more (a single row takes its dot-product
  // path), so the halves (512 rows or more each) are the same bits as one product (test
  // AdaIN.StyleProjectionSplitIsTheSameAsOneProduct).
  const auto W = fc_w_.matrix();
  const ConstVectorMap s(style, fc_w_.dim(1));
  Eigen::VectorXf h(rows);
  parallel_ranges(rows, 16, rows >= 1024 ? 2 : 1,
                  [&](int64_t r0, int64_t r1) { h.segment(r0, r1 - r0).noalias() = W.middleRows(r0, r1 - r0) * s; });
  h += fc_b_.vector();
  Eigen::VectorXf gamma = h.head(C), beta = h.tail(C);
  if (has_norm_affine_) {
    // (1 + g) * (x_hat * w + b) + beta == (1 + g') * x_hat + beta'  with g' = (1 + g) w - 1, beta' = (1 + g) b + beta
    const Eigen::ArrayXf one_plus = 1.0f + gamma.array();
    gamma = (one_plus * norm_w_.vector().array() - 1.0f).matrix();
    beta = (one_plus * norm_b_.vector().array() + beta.array()).matrix();
  }
  return {std::vector<float>(gamma.data(), gamma.data() + C), std::vector<float>(beta.data(), beta.data() + C)};
}

void AdaIN1d::apply(Tensor& x, const float* style, const RowEpilogue& then) const { apply(x, x, style, then); }

void AdaIN1d::apply(const Tensor& src, Tensor& dst, const float* style, const RowEpilogue& then) const {
  const int64_t C = channels_;
  if (src.rank() != 2 || src.dim(0) != C)
    throw Error("AdaIN1d " + prefix_ + ": expected [" + std::to_string(C) + ", T], got " + shape_to_string(src.shape()));
  const AdaINAffine a = affine(style);
  const int64_t T = src.dim(1);
  if (&src != &dst) dst.resize({C, T});
  InstanceStatsCapture* capture = g_capture;
  InstanceStats recorded;
  if (capture) {
    recorded.mean.resize(C);
    recorded.inv_std.resize(C);
  }
  // Channels are independent: ranges of them in parallel (between the convolutions, which are parallel
  // themselves, a serial norm would leave the other threads idle). A row is copied, normalised and handed
  // to `then` in one go, so that it crosses the memory bus once instead of once per step.
  parallel_ranges(C, 8, elementwise_parts(C * T), [&](int64_t c0, int64_t c1) {
    for (int64_t c = c0; c < c1; ++c) {
      if (&src != &dst) std::copy_n(src.data() + c * T, T, dst.data() + c * T);
      // Instance norm over time with the biased variance, as torch.nn.InstanceNorm1d.
      Eigen::Map<Eigen::RowVectorXf> r(dst.data() + c * T, T);
      const float mean = r.mean();
      r.array() -= mean;
      const float inv = 1.0f / std::sqrt(r.squaredNorm() / static_cast<float>(T) + kInstanceNormEps);
      adain_scale_row(r.data(), T, inv, a.gamma[c], a.beta[c]);
      if (then) then(c, r.data(), T);
      if (capture) {
        recorded.mean[c] = mean;
        recorded.inv_std[c] = inv;
      }
    }
  });
  if (capture) capture->record(prefix_, std::move(recorded));
}

void AdaIN1d::normalize(Tensor& x, int64_t c0, int64_t n, const InstanceStats& stats, const AdaINAffine& a) const {
  const int64_t C = channels_;
  if (x.rank() != 2 || x.dim(0) != C || c0 < 0 || n < 0 || c0 + n > x.dim(1))
    throw Error("AdaIN1d " + prefix_ + ": columns [" + std::to_string(c0) + ", +" + std::to_string(n) + ") of " +
                shape_to_string(x.shape()));
  if (static_cast<int64_t>(stats.mean.size()) != C || static_cast<int64_t>(stats.inv_std.size()) != C)
    throw Error("AdaIN1d " + prefix_ + ": statistics for " + std::to_string(stats.mean.size()) + " channels, layer has " +
                std::to_string(C));
  const int64_t T = x.dim(1);
  for (int64_t c = 0; c < C; ++c)
    adain_normalize_row(x.data() + c * T + c0, n, stats.mean[c], stats.inv_std[c], a.gamma[c], a.beta[c]);
}

InstanceStatsCapture::InstanceStatsCapture() {
  if (g_capture) throw Error("InstanceStatsCapture: a capture is already active on this thread");
  g_capture = this;
}

InstanceStatsCapture::~InstanceStatsCapture() { g_capture = nullptr; }

void InstanceStatsCapture::record(const std::string& name, InstanceStats s) {
  if (!stats_.emplace(name, std::move(s)).second)
    throw Error("InstanceStatsCapture: layer " + name + " ran twice in one capture");
}

InstanceStatsCapture* InstanceStatsCapture::active() { return g_capture; }

}  // namespace kokoro
