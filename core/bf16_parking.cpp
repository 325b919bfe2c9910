#include "core/bf16_parking.h"

#include "core/error.h"
#include "core/parallel.h"

namespace kokoro {

void Bf16ParkedTensor::park(Tensor& x) {
  shape_ = x.shape();
  const int64_t n = x.numel();
  values_.resize(static_cast<size_t>(n));
  parallel_ranges(n, 4096, elementwise_parts(n), [&](int64_t i0, int64_t i1) {
    to_bf16(x.data() + i0, values_.data() + i0, i1 - i0);
  });
  x = Tensor();
}

void Bf16ParkedTensor::restore(Tensor& x) {
  x.resize(shape_);
  const int64_t n = x.numel();
  parallel_ranges(n, 4096, elementwise_parts(n), [&](int64_t i0, int64_t i1) {
    float* dst = x.data();
    for (int64_t i = i0; i < i1; ++i) dst[i] = from_bf16(values_[static_cast<size_t>(i)]);
  });
  decltype(values_)().swap(values_);
}

void Bf16ParkedTensor::add_to(Tensor& y) {
  if (y.shape() != shape_) throw Error("Bf16ParkedTensor::add_to: " + shape_to_string(y.shape()) + " vs parked " +
                                      shape_to_string(shape_));
  const int64_t n = y.numel();
  parallel_ranges(n, 4096, elementwise_parts(n), [&](int64_t i0, int64_t i1) {
    float* dst = y.data();
    for (int64_t i = i0; i < i1; ++i) dst[i] += from_bf16(values_[static_cast<size_t>(i)]);
  });
  decltype(values_)().swap(values_);
}

}  // namespace kokoro
