#include "vocoder/adain_resblk.h"

#include <cmath>

#include "core/error.h"
#include "core/kernels.h"
#include "core/parallel.h"

namespace kokoro {

AdainResBlk1d::AdainResBlk1d(const ModelFile& model, const std::string& prefix, int64_t dim_in, int64_t dim_out,
                             int64_t style_dim, bool upsample)
    : dim_in_(dim_in),
      dim_out_(dim_out),
      upsample_(upsample),
      norm1_(model, prefix + ".norm1", dim_in, style_dim),
      norm2_(model, prefix + ".norm2", dim_out, style_dim),
      conv1_w_(model.get(prefix + ".conv1.weight", {dim_out, dim_in, 3})),
      conv1_b_(model.get(prefix + ".conv1.bias", {dim_out})),
      conv2_w_(model.get(prefix + ".conv2.weight", {dim_out, dim_out, 3})),
      conv2_b_(model.get(prefix + ".conv2.bias", {dim_out})) {
  if (dim_in != dim_out) conv1x1_w_ = model.get(prefix + ".conv1x1.weight", {dim_out, dim_in, 1});
  if (upsample) {
    pool_w_ = model.get(prefix + ".pool.weight", {dim_in, 1, 3});
    pool_b_ = model.get(prefix + ".pool.bias", {dim_in});
  }
}

void AdainResBlk1d::forward(const Tensor& x, const float* style, Tensor& out) const {
  if (x.rank() != 2 || x.dim(0) != dim_in_)
    throw Error("AdainResBlk1d: expected [" + std::to_string(dim_in_) + ", T], got " + shape_to_string(x.shape()));
  const int64_t T = x.dim(1), T_out = upsample_ ? 2 * T : T;

  // Residual branch. Each norm hands its rows to the leaky ReLU while they are in cache (the same arithmetic as
  // core/kernels.h leaky_relu, one pass over the activations instead of three with the copy of x).
  const AdaIN1d::RowEpilogue leaky = [](int64_t, float* r, int64_t n) {
    for (int64_t i = 0; i < n; ++i) r[i] = r[i] >= 0 ? r[i] : r[i] * 0.2f;
  };
  Tensor h, pooled, c1;
  norm1_.apply(x, h, style, leaky);
  if (upsample_) {
    conv_transpose1d_depthwise(h, pool_w_, &pool_b_, 2, 1, 1, pooled);
    h = std::move(pooled);
  }
  conv1d(h, conv1_w_, &conv1_b_, 1, 1, 1, c1);
  norm2_.apply(c1, style, leaky);
  conv1d(c1, conv2_w_, &conv2_b_, 1, 1, 1, out);

  // Shortcut. A 1x1 conv commutes with nearest upsampling, so it runs on the T columns before repeating.
  Tensor sc;
  if (conv1x1_w_) {
    linear_columns(x, *conv1x1_w_, nullptr, sc);
  } else {
    sc = x;
  }
  // torch.rsqrt(torch.tensor(2)) is evaluated in float32.
  const float inv_sqrt2 = 1.0f / std::sqrt(2.0f);
  float* o = out.data();
  const float* s = sc.data();
  parallel_ranges(dim_out_, 8, elementwise_parts(dim_out_ * T_out), [&](int64_t c0, int64_t c1) {
    for (int64_t c = c0; c < c1; ++c) {
      float* oc = o + c * T_out;
      const float* sc_row = s + c * T;
      if (upsample_)
        for (int64_t t = 0; t < T_out; ++t) oc[t] = (oc[t] + sc_row[t / 2]) * inv_sqrt2;
      else
        for (int64_t t = 0; t < T_out; ++t) oc[t] = (oc[t] + sc_row[t]) * inv_sqrt2;
    }
  });
}

int64_t AdainResBlk1d::macs_per_column() const {
  // The two convs run on the upsampled columns, the 1x1 shortcut before the upsampling.
  const int64_t convs = conv1_w_.numel() + conv2_w_.numel();
  return (upsample_ ? 2 * convs : convs) + (conv1x1_w_ ? conv1x1_w_->numel() : 0);
}

}  // namespace kokoro
