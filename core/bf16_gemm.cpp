#include "core/bf16_gemm.h"

#include <algorithm>
#include <cstring>
#include <string>
#include <vector>

#include "core/error.h"
#include "core/parallel.h"
#include "core/precision.h"
#if defined(__AVX512BF16__) && defined(__AVX512F__)
#include <immintrin.h>
#define KOKORO_HAVE_BF16 1
#endif

namespace kokoro {

namespace {

bf16_t round_to_bf16(float f) {
  uint32_t u;
  std::memcpy(&u, &f, 4);
  if ((u & 0x7f800000u) == 0x7f800000u && (u & 0x007fffffu)) return static_cast<bf16_t>((u >> 16) | 0x40);  // NaN
  if ((u & 0x7f800000u) == 0) return static_cast<bf16_t>((u >> 16) & 0x8000);  // denormal -> 0, as vcvtneps2bf16
  u += 0x7fffu + ((u >> 16) & 1u);
  return static_cast<bf16_t>(u >> 16);
}

#ifdef KOKORO_HAVE_BF16
// MR rows x 16 NV columns of C over the whole K: MR * NV accumulators stay in registers; per pair of k,
// NV panel loads and MR broadcasts of A's (k, k+1) pair feed MR * NV dot products.
template <int MR, int NV>
void micro_kernel(const bf16_t* a, int64_t lda, int64_t pairs, const bf16_t* panel, int64_t panel_stride, float* c,
                  int64_t ldc) {
  __m512 acc[MR][NV];
  for (int r = 0; r < MR; ++r)
    for (int v = 0; v < NV; ++v) acc[r][v] = _mm512_setzero_ps();
  for (int64_t kp = 0; kp < pairs; ++kp) {
    __m512bh b[NV];
    for (int v = 0; v < NV; ++v)
      b[v] = (__m512bh)_mm512_loadu_si512(panel + v * panel_stride + kp * 32);
    for (int r = 0; r < MR; ++r) {
      int32_t pair;
      std::memcpy(&pair, a + r * lda + 2 * kp, 4);
      const __m512bh av = (__m512bh)_mm512_set1_epi32(pair);
      for (int v = 0; v < NV; ++v) acc[r][v] = _mm512_dpbf16_ps(acc[r][v], av, b[v]);
    }
  }
  for (int r = 0; r < MR; ++r)
    for (int v = 0; v < NV; ++v) _mm512_storeu_ps(c + r * ldc + v * 16, acc[r][v]);
}

template <int NV>
void rows_tail(int rows, const bf16_t* a, int64_t lda, int64_t pairs, const bf16_t* panel, int64_t ps, float* c,
               int64_t ldc) {
  switch (rows) {
    case 1: return micro_kernel<1, NV>(a, lda, pairs, panel, ps, c, ldc);
    case 2: return micro_kernel<2, NV>(a, lda, pairs, panel, ps, c, ldc);
    case 3: return micro_kernel<3, NV>(a, lda, pairs, panel, ps, c, ldc);
    case 4: return micro_kernel<4, NV>(a, lda, pairs, panel, ps, c, ldc);
    case 5: return micro_kernel<5, NV>(a, lda, pairs, panel, ps, c, ldc);
    case 6: return micro_kernel<6, NV>(a, lda, pairs, panel, ps, c, ldc);
    case 7: return micro_kernel<7, NV>(a, lda, pairs, panel, ps, c, ldc);
    case 8: return micro_kernel<8, NV>(a, lda, pairs, panel, ps, c, ldc);
    case 9: return micro_kernel<9, NV>(a, lda, pairs, panel, ps, c, ldc);
    case 10: return micro_kernel<10, NV>(a, lda, pairs, panel, ps, c, ldc);
    case 11: return micro_kernel<11, NV>(a, lda, pairs, panel, ps, c, ldc);
    default: return;
  }
}
#endif

}  // namespace

void to_bf16(const float* src, bf16_t* dst, int64_t n) {
  int64_t i = 0;
#ifdef KOKORO_HAVE_BF16
  // The x86-64-v4 kernels also run on AVX-512 CPUs without BF16 (docs/architecture.md): ask the CPU.
  if (bf16_supported())
    for (; i + 16 <= n; i += 16)
      _mm256_storeu_si256(reinterpret_cast<__m256i*>(dst + i), (__m256i)_mm512_cvtneps_pbh(_mm512_loadu_ps(src + i)));
#endif
  for (; i < n; ++i) dst[i] = round_to_bf16(src[i]);
}

void scaled_to_bf16(const float* src, float factor, bf16_t* dst, int64_t n) {
  int64_t i = 0;
#ifdef KOKORO_HAVE_BF16
  if (bf16_supported()) {
    const __m512 f = _mm512_set1_ps(factor);
    for (; i + 16 <= n; i += 16)
      _mm256_storeu_si256(reinterpret_cast<__m256i*>(dst + i),
                          (__m256i)_mm512_cvtneps_pbh(_mm512_mul_ps(_mm512_loadu_ps(src + i), f)));
  }
#endif
  for (; i < n; ++i) dst[i] = round_to_bf16(src[i] * factor);
}

// Packing rounds each row with to_bf16 (vectorised, the same rounding as round_to_bf16) and then only moves
// 16- or 32-bit values: a model's ~80 M weights are packed on the first sentence, on its critical path.
void pack_b_bf16(const float* b, int64_t ldb, int64_t K, int64_t N, bf16_t* out) {
  if (N % 16 != 0) throw Error("pack_b_bf16: N = " + std::to_string(N) + " is not a multiple of 16");
  const int64_t pairs = (K + 1) / 2;
  std::vector<bf16_t> r0(static_cast<size_t>(N)), r1(static_cast<size_t>(N));
  for (int64_t kp = 0; kp < pairs; ++kp) {
    to_bf16(b + 2 * kp * ldb, r0.data(), N);
    if (2 * kp + 1 < K) to_bf16(b + (2 * kp + 1) * ldb, r1.data(), N);
    else std::fill(r1.begin(), r1.end(), bf16_t{0});
    for (int64_t p = 0; p < N / 16; ++p) {
      bf16_t* dst = out + p * pairs * 32 + kp * 32;
      for (int64_t j = 0; j < 16; ++j) {
        dst[2 * j] = r0[p * 16 + j];
        dst[2 * j + 1] = r1[p * 16 + j];
      }
    }
  }
}

void pack_bt_bf16(const float* w, int64_t ldw, int64_t K, int64_t N, bf16_t* out) {
  if (N % 16 != 0) throw Error("pack_bt_bf16: N = " + std::to_string(N) + " is not a multiple of 16");
  const int64_t pairs = (K + 1) / 2;
  // A row of W is column n of B: its k pairs go to one 32-bit slot per pair, 16 slots (64 bytes) apart.
  std::vector<bf16_t> row(static_cast<size_t>(2 * pairs), bf16_t{0});
  for (int64_t n = 0; n < N; ++n) {
    to_bf16(w + n * ldw, row.data(), K);
    bf16_t* panel = out + (n / 16) * pairs * 32 + (n % 16) * 2;
    for (int64_t kp = 0; kp < pairs; ++kp) std::memcpy(panel + kp * 32, row.data() + 2 * kp, 4);
  }
}

std::shared_ptr<const std::vector<bf16_t>> pack_bt_bf16_parallel(
    const float* w, int64_t ldw, int64_t K, int64_t N,
    const std::function<void(int64_t n, float* dst)>& row) {
  auto p = std::make_shared<std::vector<bf16_t>>(static_cast<size_t>(packed_b_bf16_size(K, N)));
  const int64_t pairs = (K + 1) / 2;
  parallel_ranges(N / 16, 1, 4 * num_threads(), [&](int64_t p0, int64_t p1) {
    bf16_t* dst = p->data() + p0 * pairs * 32;
    if (!row) return pack_bt_bf16(w + p0 * 16 * ldw, ldw, K, 16 * (p1 - p0), dst);
    std::vector<float> rows(static_cast<size_t>(16 * (p1 - p0) * K));
    for (int64_t n = 16 * p0; n < 16 * p1; ++n) row(n, rows.data() + (n - 16 * p0) * K);
    pack_bt_bf16(rows.data(), K, K, 16 * (p1 - p0), dst);
  });
  return p;
}

void gemm_bf16(const bf16_t* a, int64_t lda, int64_t M, int64_t K, const bf16_t* b_packed, int64_t N, float* c,
               int64_t ldc) {
  if (K % 2 != 0 || N % 16 != 0)
    throw Error("gemm_bf16: K = " + std::to_string(K) + " must be even and N = " + std::to_string(N) +
                " a multiple of 16");
#ifdef KOKORO_HAVE_BF16
  if (!bf16_supported()) throw Error("gemm_bf16: this CPU has no AVX512-BF16 (avx512_bf16 in /proc/cpuinfo)");
  const int64_t pairs = K / 2, ps = pairs * 32;  // panel stride in elements
  if (M <= 2) {
    // Matrix-vector products (an LSTM step): one row has too few accumulators to hide vdpbf16ps' latency
    // with two panels; eight panels give eight independent chains.
    for (int64_t m = 0; m < M; ++m) {
      int64_t n0 = 0;
      for (; n0 + 128 <= N; n0 += 128) micro_kernel<1, 8>(a + m * lda, lda, pairs, b_packed + (n0 / 16) * ps, ps, c + m * ldc + n0, ldc);
      for (; n0 < N; n0 += 16) micro_kernel<1, 1>(a + m * lda, lda, pairs, b_packed + (n0 / 16) * ps, ps, c + m * ldc + n0, ldc);
    }
    return;
  }
  constexpr int MR = 12;
  int64_t n0 = 0;
  // 32 columns (two panels) at a time: 24 accumulators; a last odd panel runs alone.
  for (; n0 + 32 <= N; n0 += 32) {
    const bf16_t* panel = b_packed + (n0 / 16) * ps;
    int64_t m0 = 0;
    for (; m0 + MR <= M; m0 += MR) micro_kernel<MR, 2>(a + m0 * lda, lda, pairs, panel, ps, c + m0 * ldc + n0, ldc);
    rows_tail<2>(static_cast<int>(M - m0), a + m0 * lda, lda, pairs, panel, ps, c + m0 * ldc + n0, ldc);
  }
  if (n0 < N) {
    const bf16_t* panel = b_packed + (n0 / 16) * ps;
    int64_t m0 = 0;
    for (; m0 + MR <= M; m0 += MR) micro_kernel<MR, 1>(a + m0 * lda, lda, pairs, panel, ps, c + m0 * ldc + n0, ldc);
    rows_tail<1>(static_cast<int>(M - m0), a + m0 * lda, lda, pairs, panel, ps, c + m0 * ldc + n0, ldc);
  }
#else
  (void)a, (void)lda, (void)M, (void)b_packed, (void)c, (void)ldc;
  throw Error("gemm_bf16: these kernels have no AVX512-BF16 (the x86-64-v4 family or a -march=native build on a "
              "CPU that has it)");
#endif
}

}  // namespace kokoro
