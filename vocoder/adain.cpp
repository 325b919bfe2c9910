#include "vocoder/adain.h"

#include "core/error.h"
#include "core/kernels.h"

namespace kokoro {

AdaIN1d::AdaIN1d(const ModelFile& model, const std::string& prefix, int64_t channels, int64_t style_dim)
    : channels_(channels),
      fc_w_(model.get(prefix + ".fc.weight", {2 * channels, style_dim})),
      fc_b_(model.get(prefix + ".fc.bias", {2 * channels})) {
  if (model.has(prefix + ".norm.weight") || model.has(prefix + ".norm.bias")) {
    has_norm_affine_ = true;
    norm_w_ = model.get(prefix + ".norm.weight", {channels});
    norm_b_ = model.get(prefix + ".norm.bias", {channels});
  }
}

void AdaIN1d::apply(Tensor& x, const float* style) const {
  const int64_t C = channels_;
  if (x.rank() != 2 || x.dim(0) != C)
    throw Error("AdaIN1d: expected [" + std::to_string(C) + ", T], got " + shape_to_string(x.shape()));
  Eigen::VectorXf h = fc_w_.matrix() * ConstVectorMap(style, fc_w_.dim(1)) + fc_b_.vector();
  Eigen::VectorXf gamma = h.head(C), beta = h.tail(C);
  if (has_norm_affine_) {
    // (1 + g) * (x_hat * w + b) + beta == (1 + g') * x_hat + beta'  with g' = (1 + g) w - 1, beta' = (1 + g) b + beta
    const Eigen::ArrayXf one_plus = 1.0f + gamma.array();
    gamma = (one_plus * norm_w_.vector().array() - 1.0f).matrix();
    beta = (one_plus * norm_b_.vector().array() + beta.array()).matrix();
  }
  adain(x, gamma.data(), beta.data(), 1e-5f);
}

}  // namespace kokoro
