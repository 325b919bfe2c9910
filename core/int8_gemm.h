// 8-bit matrix product for Linear layers on AVX512-VNNI (vpdpbusd: 64 multiply-adds of u8 x s8 per
// instruction, twice vdpbf16ps' 32 on the same port, measured 228 against 114 G multiply-adds per second on a
// Zen 4 core). Activations are quantised per row (asymmetric, 255 steps between the row's min and max),
// weights per output feature (symmetric, +-127), products are exact in int32 and dequantised in fp32:
//
//   y[r, n] = sum_k x[r, k] W[n, k] + b[n]
//          ~= sa[r] sw[n] sum_k qa[r, k] qw[n, k] + oa[r] sw[n] sum_k qw[n, k] + b[n]
//
// with x[r, k] ~= sa[r] qa[r, k] + oa[r] (qa in 0..255) and W[n, k] ~= sw[n] qw[n, k] (qw in -127..127).
// The error of one product is ~sa/2 on x and ~sw/2 on W: about 2^-9 of a row's range and of a weight row's
// largest value, comparable to bf16's 2^-9 of each value but relative to the row, not to the value.
//
// Packed weights: panels of 16 output features, each [K/4][16][4] (the four k of a quad adjacent, as
// vpdpbusd reads them), then sw[N] (float) and sw[n] * sum_k qw[n, k] (float), then W^T [K, N] in bf16 (the
// rows a caller multiplies outside the 8-bit product: linear_rows_int8's outlier channels). K must be a
// multiple of 4 and N of 16. Only compiled into the fast path when the build targets AVX512-BF16 (every CPU with BF16 also has
// VNNI: Cooper Lake, Sapphire Rapids, Zen 4 and later); callers check int8_supported() first.
#pragma once
#include <cstdint>
#include <vector>

namespace kokoro {

// True when this binary has the VNNI kernels and the CPU reports avx512vnni.
bool int8_supported();

// Rows of an fp32 matrix as u8 with one scale and offset per row.
struct RowsU8 {
  int64_t rows = 0, K = 0;
  std::vector<uint8_t> q;        // [rows, K]
  std::vector<float> scale, offset;
};
// x [rows, K] (rows ldx apart) -> out (resized). A constant row gets scale 1 and offset its value. The
// channels listed in `zeroed` (n_zeroed of them, in increasing order) are quantised as if they were 0: a caller
// that adds their products separately (linear_rows_int8's outliers) keeps them out of the rows' ranges.
void quantize_rows_u8(const float* x, int64_t ldx, int64_t rows, int64_t K, RowsU8& out,
                      const int64_t* zeroed = nullptr, int64_t n_zeroed = 0);

// Bytes of the packed form of a weight W [N, K].
inline int64_t packed_s8_bytes(int64_t K, int64_t N) {
  return N * K + 2 * N * static_cast<int64_t>(sizeof(float)) + K * N * 2;
}
// Row k of W^T in bf16 (N values) inside a packed weight.
inline const uint16_t* packed_s8_transposed_row(const int8_t* packed, int64_t K, int64_t N, int64_t k) {
  return reinterpret_cast<const uint16_t*>(packed + N * K + 2 * N * static_cast<int64_t>(sizeof(float))) + k * N;
}
// W [N, K] (rows ldw apart; torch.nn.Linear's layout) -> out (packed_s8_bytes). K % 4 == 0, N % 16 == 0.
void pack_weights_s8(const float* w, int64_t ldw, int64_t K, int64_t N, int8_t* out);

// Products a caller adds to y in fp32 beside the 8-bit one (linear_rows_int8's outlier channels): after its
// dequantised value, y[r, n] += values[r * k + j] * weights[j * ldw + n - n0] for j = 0 .. k-1 in that order,
// each one fused multiply-add, in the epilogue while y's tile is still in registers.
struct Fp32Terms {
  int64_t k = 0;
  const float* values = nullptr;   // [rows of x][k]
  const float* weights = nullptr;  // [k][ldw], column 0 at n0
  int64_t ldw = 0;
};

// y[r, n] for n in [n0, n1) (multiples of 16) and every row of x; y's rows ldy apart, bias may be null.
// Single-threaded: callers parallelise over blocks of columns.
void gemm_u8s8(const RowsU8& x, const int8_t* packed, int64_t N, int64_t n0, int64_t n1, const float* bias,
               float* y, int64_t ldy, const Fp32Terms& extra = Fp32Terms());

}  // namespace kokoro
