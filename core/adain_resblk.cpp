#include "core/adain_resblk.h"

#include <cmath>
#include <vector>

#include "core/kernels.h"

namespace kokoro {

AdaIN1d::AdaIN1d(const ModelFile& m, const std::string& prefix, int64_t style_dim, int64_t channels)
    : channels_(channels), style_dim_(style_dim) {
  fc_w_ = m.get(prefix + ".fc.weight", {2 * channels, style_dim});
  fc_b_ = m.get(prefix + ".fc.bias", {2 * channels});
  if (m.has(prefix + ".norm.weight")) {
    norm_w_ = m.get(prefix + ".norm.weight", {channels}).data;
    norm_b_ = m.get(prefix + ".norm.bias", {channels}).data;
  }
}

void AdaIN1d::coefficients(const float* style, float* scale, float* shift) const {
  const ConstVectorMap s(style, style_dim_);
  Eigen::VectorXf h = fc_w_.matrix() * s + fc_b_.vector();
  for (int64_t c = 0; c < channels_; ++c) {
    const float g = 1.0f + h[c], b = h[channels_ + c];
    // (1 + gamma) * (w * x_hat + b_n) + beta, folded into one scale and shift.
    scale[c] = norm_w_ ? g * norm_w_[c] : g;
    shift[c] = norm_b_ ? g * norm_b_[c] + b : b;
  }
}

void AdaIN1d::apply(Tensor& x, const float* style) const {
  std::vector<float> scale(channels_), shift(channels_);
  coefficients(style, scale.data(), shift.data());
  instance_norm_affine(x, scale.data(), shift.data());
}

AdainResBlk1d::AdainResBlk1d(const ModelFile& m, const std::string& p, int64_t dim_in, int64_t dim_out,
                             int64_t style_dim, bool upsample)
    : dim_in_(dim_in),
      dim_out_(dim_out),
      upsample_(upsample),
      norm1_(m, p + ".norm1", style_dim, dim_in),
      norm2_(m, p + ".norm2", style_dim, dim_out),
      learned_sc_(dim_in != dim_out) {
  conv1_w_ = m.get(p + ".conv1.weight", {dim_out, dim_in, 3});
  conv1_b_ = m.get(p + ".conv1.bias", {dim_out});
  conv2_w_ = m.get(p + ".conv2.weight", {dim_out, dim_out, 3});
  conv2_b_ = m.get(p + ".conv2.bias", {dim_out});
  if (upsample_) {
    pool_w_ = m.get(p + ".pool.weight", {dim_in, 1, 3});
    pool_b_ = m.get(p + ".pool.bias", {dim_in});
  }
  if (learned_sc_) sc_w_ = m.get(p + ".conv1x1.weight", {dim_out, dim_in, 1});
}

void AdainResBlk1d::forward(const Tensor& x, const float* style, Tensor& y) const {
  const int64_t T = x.dim(1);
  // Shortcut.
  Tensor sc;
  if (upsample_) {
    sc.resize({dim_in_, 2 * T});
    for (int64_t c = 0; c < dim_in_; ++c)
      for (int64_t t = 0; t < T; ++t) sc[c * 2 * T + 2 * t] = sc[c * 2 * T + 2 * t + 1] = x[c * T + t];
  } else {
    sc = x;
  }
  if (learned_sc_) {
    Tensor tmp;
    conv1d(sc, sc_w_, nullptr, 1, 0, 1, tmp);
    sc = std::move(tmp);
  }
  // Residual.
  Tensor r = x, pooled, h;
  norm1_.apply(r, style);
  leaky_relu(r, 0.2f);
  if (upsample_) {
    conv_transpose1d_depthwise(r, pool_w_, &pool_b_, 2, 1, 1, pooled);
    r = std::move(pooled);
  }
  conv1d(r, conv1_w_, &conv1_b_, 1, 1, 1, h);
  norm2_.apply(h, style);
  leaky_relu(h, 0.2f);
  conv1d(h, conv2_w_, &conv2_b_, 1, 1, 1, y);
  const float inv_sqrt2 = 1.0f / std::sqrt(2.0f);
  y.matrix() = (y.matrix() + sc.matrix()) * inv_sqrt2;
}

}  // namespace kokoro
