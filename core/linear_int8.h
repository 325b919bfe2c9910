// Linear layers in 8 bits (the int8 precision, core/precision.h): rows of x quantised per row and W per output
// feature (core/int8_gemm.h, AVX512-VNNI), with x's outlier channels (a few far above the others) multiplied
// apart in fp32. What ALBERT runs in int8 (acoustic/albert.cpp); linear_rows (core/kernels.h) is the fp32 and
// bf16 form of the same product.
#pragma once
#include <cstdint>
#include <vector>

#include "core/int8_gemm.h"
#include "core/tensor.h"

namespace kokoro {

// y[T, out] = x[T, in] W[out, in]^T + b[out] in 8 bits. Needs int8_supported(), in % 4 == 0 and out % 16 == 0
// (throws otherwise).
void linear_rows_int8(const Tensor& x, const TensorView& w, const TensorView* bias, Tensor& y);
// The same with x quantised once for several weights (ALBERT's Q, K and V read one input).
struct Int8Rows {
  RowsU8 q;
  std::vector<int64_t> outliers;
};
void quantize_for_linear_int8(const Tensor& x, Int8Rows& out);
void linear_rows_int8(const Tensor& x, const Int8Rows& xq, const TensorView& w, const TensorView* bias, Tensor& y);

}  // namespace kokoro
