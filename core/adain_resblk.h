// StyleTTS2's AdainResBlk1d, shared by the prosody predictor (F0/N stacks) and the decoder:
//   residual: AdaIN -> LeakyReLU(0.2) -> [depthwise ConvTranspose x2] -> conv3 -> AdaIN -> LeakyReLU -> conv3
//   shortcut: [nearest upsample x2] -> [conv1x1 when dim_in != dim_out]
//   out = (residual + shortcut) / sqrt(2)
// AdaIN1d = InstanceNorm over the whole (true-length) time axis, scaled by (1 + gamma(s)) and shifted by
// beta(s), where [gamma, beta] = fc(s). The InstanceNorm's affine weight/bias are optional (identity when
// the model file has none, as in the official checkpoint).
#pragma once
#include <memory>
#include <string>

#include "core/model_file.h"

namespace kokoro {

class AdaIN1d {
 public:
  AdaIN1d(const ModelFile& m, const std::string& prefix, int64_t style_dim, int64_t channels);
  // Per-channel scale/shift for a style vector: x_hat * scale + shift.
  void coefficients(const float* style, float* scale, float* shift) const;
  // In place on x [C, T].
  void apply(Tensor& x, const float* style) const;
  int64_t channels() const { return channels_; }

 private:
  int64_t channels_, style_dim_;
  TensorView fc_w_, fc_b_;
  const float* norm_w_ = nullptr;
  const float* norm_b_ = nullptr;
};

class AdainResBlk1d {
 public:
  AdainResBlk1d(const ModelFile& m, const std::string& prefix, int64_t dim_in, int64_t dim_out, int64_t style_dim,
                bool upsample);
  // x [dim_in, T] -> y [dim_out, T or 2T]
  void forward(const Tensor& x, const float* style, Tensor& y) const;

 private:
  int64_t dim_in_, dim_out_;
  bool upsample_;
  AdaIN1d norm1_, norm2_;
  TensorView conv1_w_, conv1_b_, conv2_w_, conv2_b_, pool_w_, pool_b_, sc_w_;
  bool learned_sc_;
};

}  // namespace kokoro
