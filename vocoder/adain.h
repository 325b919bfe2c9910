// AdaIN1d of the reference: instance norm over time, then a per-channel affine predicted from the style:
//   h = fc(s); gamma, beta = h[:C], h[C:];  y = (1 + gamma) * InstanceNorm1d(x) + beta
// InstanceNorm1d has affine=True in the reference only to dodge an old ONNX-export bug; its weight/bias are
// absent from the official checkpoint (identity) but honoured here when a model file carries them.
#pragma once
#include <string>
#include <vector>

#include "core/model_file.h"

namespace kokoro {

class AdaIN1d {
 public:
  // prefix e.g. "decoder.encode.norm1"; channels C; style_dim the length of s.
  AdaIN1d(const ModelFile& model, const std::string& prefix, int64_t channels, int64_t style_dim);
  // In place on x [C, T].
  void apply(Tensor& x, const float* style) const;
  int64_t channels() const { return channels_; }

 private:
  int64_t channels_;
  TensorView fc_w_, fc_b_;
  bool has_norm_affine_ = false;
  TensorView norm_w_, norm_b_;
};

}  // namespace kokoro
