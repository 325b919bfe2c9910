#include "vocoder/snake_resblock.h"

#include "core/error.h"
#include "core/kernels.h"
#include "core/parallel.h"

namespace kokoro {

void snake_row(float* row, int64_t n, float a) {
  Eigen::Map<Eigen::ArrayXf> r(row, n);
  const float inv_a = 1.0f / a;  // the reference computes (1 / a) as a tensor first
  r += inv_a * (a * r).sin().square();
}

void snake(Tensor& x, const float* alpha) {
  const int64_t C = x.dim(0), T = x.dim(1);
  // Channels are independent (a sine per element: the costliest element-wise step of the generator).
  parallel_ranges(C, 8, elementwise_parts(C * T), [&](int64_t c0, int64_t c1) {
    for (int64_t c = c0; c < c1; ++c) snake_row(x.data() + c * T, T, alpha[c]);
  });
}

SnakeResBlock::SnakeResBlock(const ModelFile& model, const std::string& prefix, int64_t channels,
                             int64_t kernel_size, const std::vector<int>& dilations, int64_t style_dim)
    : channels_(channels), kernel_size_(kernel_size) {
  for (size_t i = 0; i < dilations.size(); ++i) {
    const std::string n = std::to_string(i);
    units_.push_back(Unit{
        AdaIN1d(model, prefix + ".adain1." + n, channels, style_dim),
        AdaIN1d(model, prefix + ".adain2." + n, channels, style_dim),
        model.get(prefix + ".alpha1." + n, {1, channels, 1}),
        model.get(prefix + ".alpha2." + n, {1, channels, 1}),
        model.get(prefix + ".convs1." + n + ".weight", {channels, channels, kernel_size}),
        model.get(prefix + ".convs1." + n + ".bias", {channels}),
        model.get(prefix + ".convs2." + n + ".weight", {channels, channels, kernel_size}),
        model.get(prefix + ".convs2." + n + ".bias", {channels}),
        dilations[i],
    });
  }
}

void SnakeResBlock::forward(const Tensor& x, const float* style, Tensor& out) const {
  if (x.rank() != 2 || x.dim(0) != channels_)
    throw Error("SnakeResBlock: expected [" + std::to_string(channels_) + ", T], got " + shape_to_string(x.shape()));
  out = x;
  forward_in_place(out, style);
}

void SnakeResBlock::forward_in_place(Tensor& out, const float* style) const {
  if (out.rank() != 2 || out.dim(0) != channels_)
    throw Error("SnakeResBlock: expected [" + std::to_string(channels_) + ", T], got " + shape_to_string(out.shape()));
  // One full-length temporary: both convolutions run in place on it (conv1d_in_place), so that a long
  // segment's last stage holds one tensor less at its peak (67 MB for a 27 s segment).
  // Each AdaIN runs with its Snake on the same rows while they are in cache (AdaIN1d::RowEpilogue), and the
  // first one reads `out` and writes t directly: one pass over memory where a copy, a norm and a Snake took
  // three.
  Tensor t;
  for (const Unit& u : units_) {
    u.adain1.apply(out, t, style, [&](int64_t c, float* r, int64_t n) { snake_row(r, n, u.alpha1.data[c]); });
    // get_padding(k, d) = (k*d - d) / 2 keeps the length.
    conv1d_in_place(t, u.conv1_w, &u.conv1_b, static_cast<int>((kernel_size_ * u.dilation - u.dilation) / 2), u.dilation);
    u.adain2.apply(t, style, [&](int64_t c, float* r, int64_t n) { snake_row(r, n, u.alpha2.data[c]); });
    conv1d_in_place(t, u.conv2_w, &u.conv2_b, static_cast<int>((kernel_size_ - 1) / 2), 1);
    add_in_place(out, t);
  }
}

int64_t SnakeResBlock::macs_per_column() const {
  int64_t macs = 0;
  for (const Unit& u : units_) macs += u.conv1_w.numel() + u.conv2_w.numel();
  return macs;
}

}  // namespace kokoro
