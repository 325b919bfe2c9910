// bfloat16 matrix product with fp32 accumulation on AVX512-BF16 (vdpbf16ps: 32 multiply-adds per
// instruction, twice the fp32 FMA's 16). Inputs are rounded to bf16 (8 significant bits, round to nearest
// even), products are exact in fp32 and accumulated in fp32, so the error is ~2^-9 of each input, about
// 4e-3 relative per product and less on sums of many terms of mixed sign.
//
//   C[M, N] = A[M, K] B[K, N]     A: bf16 row-major, K contiguous (rows lda apart), K even
//                                 B: bf16 packed once (pack_b_bf16), N a multiple of 16
//
// Packed B: panels of 16 columns, each [K/2][16][2] (the two k of a pair adjacent, as vdpbf16ps reads
// them), so a micro-kernel streams one contiguous panel per 16 output columns.
// Only compiled into the fast path when the build targets AVX512-BF16; callers check bf16_supported()
// (core/precision.h) first, and these functions throw kokoro::Error otherwise.
#pragma once
#include <cstdint>
#include <cstring>
#include <functional>
#include <memory>
#include <vector>

namespace kokoro {

using bf16_t = uint16_t;

// Round to nearest even (NaN kept quiet, denormals to zero as vcvtneps2bf16 does), n values.
void to_bf16(const float* src, bf16_t* dst, int64_t n);
// dst[i] = bf16(src[i] * factor): the product rounded to fp32 first, then to bf16, as a pass that stores
// src * factor and then calls to_bf16 would give (ALBERT's softmax rows: their normalisation and their
// conversion for the second attention product in one pass over the row).
void scaled_to_bf16(const float* src, float factor, bf16_t* dst, int64_t n);
// The bf16 value as fp32 (exact: bf16 is fp32's upper half). Inline: elementwise loops call it per value.
inline float from_bf16(bf16_t v) {
  const uint32_t u = static_cast<uint32_t>(v) << 16;
  float f;
  std::memcpy(&f, &u, 4);
  return f;
}

// Elements of the packed form of a [K, N] matrix (K rounded up to even).
inline int64_t packed_b_bf16_size(int64_t K, int64_t N) { return (K + 1) / 2 * 2 * N; }
// b [K, N] row-major with rows ldb apart -> out (packed_b_bf16_size elements). N % 16 == 0.
void pack_b_bf16(const float* b, int64_t ldb, int64_t K, int64_t N, bf16_t* out);

// The same packing of B = W^T for a weight W [N, K] with rows ldw apart (torch.nn.Linear's layout).
void pack_bt_bf16(const float* w, int64_t ldw, int64_t K, int64_t N, bf16_t* out);
// The same into a new buffer, panels of 16 rows in parallel (core/parallel.h): a model's weights are prepared
// on its first sentence, on the way to first audio. `row` (optional) writes row n of W into dst[K] instead of
// reading w (used to reorder a convolution's taps on the fly).
std::shared_ptr<const std::vector<bf16_t>> pack_bt_bf16_parallel(
    const float* w, int64_t ldw, int64_t K, int64_t N,
    const std::function<void(int64_t n, float* dst)>& row = nullptr);

// C = A * B (overwrites C, rows ldc apart). Single-threaded: callers parallelise over blocks of rows.
void gemm_bf16(const bf16_t* a, int64_t lda, int64_t M, int64_t K, const bf16_t* b_packed, int64_t N, float* c,
               int64_t ldc);

}  // namespace kokoro
