// AdaINResBlock1 of the reference (generator resblocks and noise_res): three residual units
//   xt = conv2(snake(adain2(conv1(snake(adain1(x))))));  x = x + xt
// conv1 has dilation d in (1, 3, 5), conv2 dilation 1, both "same" padding; Snake is
//   snake(x) = x + (1/alpha) * sin(alpha * x)^2      with a learned alpha per channel.
#pragma once
#include <string>
#include <vector>

#include "core/model_file.h"
#include "vocoder/adain.h"

namespace kokoro {

class StreamSnakeResBlock;

class SnakeResBlock {
 public:
  SnakeResBlock(const ModelFile& model, const std::string& prefix, int64_t channels, int64_t kernel_size,
                const std::vector<int>& dilations, int64_t style_dim);
  // x [channels, T] -> out [channels, T]; out may not alias x.
  void forward(const Tensor& x, const float* style, Tensor& out) const;
  // The same on x itself (x becomes out): no copy of the input when the caller does not need it again.
  void forward_in_place(Tensor& x, const float* style) const;

  int64_t channels() const { return channels_; }
  // Multiply-adds per column of its convolutions (their weights' sizes): the block's work.
  int64_t macs_per_column() const;

 private:
  friend class StreamSnakeResBlock;  // runs the same weights chunk by chunk (vocoder/stream_blocks.h)
  struct Unit {
    AdaIN1d adain1, adain2;
    TensorView alpha1, alpha2;
    TensorView conv1_w, conv1_b, conv2_w, conv2_b;
    int dilation;
  };
  int64_t channels_, kernel_size_;
  std::vector<Unit> units_;
};

// x[c, t] += (1 / alpha[c]) * sin(alpha[c] * x[c, t])^2, in place on x [C, T].
void snake(Tensor& x, const float* alpha);
// The same on one channel's n samples with that channel's alpha.
void snake_row(float* r, int64_t n, float alpha);

}  // namespace kokoro
