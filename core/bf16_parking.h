// A tensor that only waits, kept in bf16: half the memory while it is not read.
//
// The generator's last stage holds four full-length tensors of 128 channels at 4800 columns per second of
// audio (issue 12, "peak RSS"): the running sum of the resblocks, the upsampled input the next resblock
// starts from, the resblock being computed and its unit's temporary. The first two only wait while the
// middle resblock runs. With bf16 kernels their values reach every convolution rounded to bf16 anyway, so
// parking them in bf16 costs one more rounding of the stage's residual path (measured in
// docs/benchmarks.md) and saves a quarter of the stage's peak. fp32 never parks (the golden path).
#pragma once
#include <vector>

#include "core/bf16_gemm.h"
#include "core/tensor.h"

namespace kokoro {

class Bf16ParkedTensor {
 public:
  // Rounds x to bf16 (to nearest even, as the kernels round their inputs) and frees x.
  void park(Tensor& x);
  // x = the parked values as fp32 (exactly the bf16 values); frees the parked copy.
  void restore(Tensor& x);
  // y += the parked values as fp32 (y has the parked shape); frees the parked copy.
  void add_to(Tensor& y);

 private:
  Shape shape_;
  std::vector<bf16_t, UninitialisedAllocator<bf16_t>> values_;
};

}  // namespace kokoro
