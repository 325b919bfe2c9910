// The vocoder's residual blocks run chunk by chunk on the offline blocks' weights (stream_ops.h):
//   StreamAdaIN          AdaIN1d with statistics from a NormPolicy (stream_norm.h)
//   StreamAdainResBlk1d  the decoder's encode/decode blocks (adain_resblk.h); right context 2 input columns
//                        (two k=3 convs), the upsampling one 1 input column + 2 output columns
//   StreamSnakeResBlock  the generator's resblocks and noise_res (snake_resblock.h); right context
//                        sum over its units of (k-1)/2 * (dilation + 1) columns
// A residual connection holds its input columns in a queue until the convolution branch has produced the
// matching columns, so outputs are exactly the offline ones whatever the chunking.
#pragma once
#include <memory>
#include <optional>
#include <vector>

#include "vocoder/adain.h"
#include "vocoder/adain_resblk.h"
#include "vocoder/snake_resblock.h"
#include "vocoder/stream_norm.h"
#include "vocoder/stream_ops.h"

namespace kokoro {

class StreamAdaIN {
 public:
  // Registers the layer in `registry` (its index is the registry position).
  StreamAdaIN(const AdaIN1d& layer, int64_t columns_per_frame, std::vector<NormLayer>& registry);
  void begin(const float* style, NormPolicy& policy);
  void apply(Tensor& x, bool last);  // in place on the next chunk of the layer's input

 private:
  const AdaIN1d& layer_;
  NormLayer info_;
  NormPolicy* policy_ = nullptr;
  AdaINAffine affine_;
  InstanceStats stats_;
  int64_t first_ = 0;
};

class StreamAdainResBlk1d {
 public:
  StreamAdainResBlk1d(const AdainResBlk1d& block, int64_t columns_per_frame, std::vector<NormLayer>& registry);
  void begin(const float* style, NormPolicy& policy);
  void push(const Tensor& x, bool last, Tensor& out);

 private:
  const AdainResBlk1d& b_;
  StreamAdaIN norm1_, norm2_;
  std::optional<StreamConvTranspose1d> pool_;
  StreamConv1d conv1_, conv2_;
  ColumnQueue shortcut_;
  int64_t emitted_ = 0;
  Tensor h_, pooled_, c1_, sc_;
};

class StreamSnakeResBlock {
 public:
  StreamSnakeResBlock(const SnakeResBlock& block, int64_t columns_per_frame, std::vector<NormLayer>& registry);
  void begin(const float* style, NormPolicy& policy);
  void push(const Tensor& x, bool last, Tensor& out);

 private:
  struct Unit {
    StreamAdaIN adain1, adain2;
    StreamConv1d conv1, conv2;
    ColumnQueue skip;
  };
  const SnakeResBlock& b_;
  std::vector<std::unique_ptr<Unit>> units_;
};

}  // namespace kokoro
