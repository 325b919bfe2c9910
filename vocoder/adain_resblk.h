// AdainResBlk1d of the reference (the Decoder's encode/decode blocks):
//   residual = conv2(lrelu(norm2(conv1(pool(lrelu(norm1(x)))))))     lrelu slope 0.2, convs k=3 pad 1
//   shortcut = conv1x1(upsample2x_nearest(x))                        conv1x1 only when dim_in != dim_out
//   out = (residual + shortcut) * rsqrt(2)
// With upsample, `pool` is a depthwise ConvTranspose1d(k=3, stride 2, pad 1, output_padding 1): T -> 2T.
#pragma once
#include <optional>
#include <string>

#include "core/model_file.h"
#include "vocoder/adain.h"

namespace kokoro {

class StreamAdainResBlk1d;

class AdainResBlk1d {
 public:
  AdainResBlk1d(const ModelFile& model, const std::string& prefix, int64_t dim_in, int64_t dim_out,
                int64_t style_dim, bool upsample);
  // x [dim_in, T] -> out [dim_out, T or 2T]
  void forward(const Tensor& x, const float* style, Tensor& out) const;

  bool upsample() const { return upsample_; }
  int64_t dim_in() const { return dim_in_; }
  int64_t dim_out() const { return dim_out_; }
  // Multiply-adds per input column of its convolutions (their weights' sizes).
  int64_t macs_per_column() const;

 private:
  friend class StreamAdainResBlk1d;  // runs the same weights chunk by chunk (vocoder/stream_blocks.h)
  int64_t dim_in_, dim_out_;
  bool upsample_;
  AdaIN1d norm1_, norm2_;
  TensorView conv1_w_, conv1_b_, conv2_w_, conv2_b_;
  std::optional<TensorView> conv1x1_w_;
  TensorView pool_w_, pool_b_;
};

}  // namespace kokoro
