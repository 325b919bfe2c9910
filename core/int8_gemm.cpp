#include "core/int8_gemm.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <string>
#include <type_traits>

#include "core/bf16_gemm.h"
#include "core/error.h"
#include "core/parallel.h"
#if defined(__AVX512VNNI__) && defined(__AVX512F__) && defined(__AVX512BW__)
#include <immintrin.h>
#define KOKORO_HAVE_VNNI 1
#endif

namespace kokoro {

bool int8_supported() {
#ifdef KOKORO_HAVE_VNNI
  static const bool cpu = [] {
    __builtin_cpu_init();
    return __builtin_cpu_supports("avx512vnni") != 0 && __builtin_cpu_supports("avx512bw") != 0;
  }();
  return cpu;
#else
  return false;
#endif
}

void quantize_rows_u8(const float* x, int64_t ldx, int64_t rows, int64_t K, RowsU8& out, const int64_t* zeroed,
                      int64_t n_zeroed) {
  out.rows = rows;
  out.K = K;
  out.q.resize(static_cast<size_t>(rows * K));
  out.scale.resize(static_cast<size_t>(rows));
  out.offset.resize(static_cast<size_t>(rows));
  if (K <= 0) return;
  for (int64_t z = 0; z < n_zeroed; ++z)
    if (zeroed[z] < 0 || zeroed[z] >= K || (z > 0 && zeroed[z] <= zeroed[z - 1]))
      throw Error("quantize_rows_u8: zeroed channels must be increasing and within the row");
  // Rows in parallel (each alone: the same bytes however they are split); ALBERT's ran on one core.
  parallel_ranges(rows, 1, elementwise_parts(rows * K), [&](int64_t r0, int64_t r1) {
  for (int64_t r = r0; r < r1; ++r) {
    const float* row = x + r * ldx;
    // The range of the row with its zeroed channels as 0, read around them (min and max are exact in any
    // order: the range of a copy with the zeros written in, which this replaced, to the last bit). The
    // copy was a tenth of ALBERT's non-product time.
    float lo_v = n_zeroed > 0 ? 0.0f : row[0], hi_v = lo_v;
    for (int64_t z = 0, begin = 0; z <= n_zeroed; ++z) {
      const int64_t end = z < n_zeroed ? zeroed[z] : K;
      int64_t k = begin;
#ifdef KOKORO_HAVE_VNNI
      if (k + 16 <= end) {
        __m512 vmin = _mm512_set1_ps(lo_v), vmax = _mm512_set1_ps(hi_v);
        for (; k + 16 <= end; k += 16) {
          const __m512 v = _mm512_loadu_ps(row + k);
          vmin = _mm512_min_ps(vmin, v);
          vmax = _mm512_max_ps(vmax, v);
        }
        lo_v = _mm512_reduce_min_ps(vmin);
        hi_v = _mm512_reduce_max_ps(vmax);
      }
#endif
      for (; k < end; ++k) lo_v = std::min(lo_v, row[k]), hi_v = std::max(hi_v, row[k]);
      begin = end + 1;
    }
    const float range = hi_v - lo_v;
    // Quantised as (x - lo) * inv rounded to nearest even, in this order in both paths below: the same bytes.
    const float inv = range > 0 ? 255.0f / range : 0.0f;
    out.scale[r] = range > 0 ? range / 255.0f : 1.0f;
    out.offset[r] = lo_v;
    uint8_t* q = out.q.data() + r * K;
    const auto quantize = [&](float v) {
      return static_cast<uint8_t>(std::clamp(std::nearbyint((v - lo_v) * inv), 0.0f, 255.0f));
    };
    int64_t k = 0;
#ifdef KOKORO_HAVE_VNNI
    const __m512 vlo = _mm512_set1_ps(lo_v), vinv = _mm512_set1_ps(inv);
    const __m512i zero = _mm512_setzero_si512(), top = _mm512_set1_epi32(255);
    for (; k + 16 <= K; k += 16) {
      const __m512 t = _mm512_mul_ps(_mm512_sub_ps(_mm512_loadu_ps(row + k), vlo), vinv);
      const __m512i i = _mm512_min_epi32(_mm512_max_epi32(_mm512_cvtps_epi32(t), zero), top);
      _mm_storeu_si128(reinterpret_cast<__m128i*>(q + k), _mm512_cvtepi32_epi8(i));
    }
#endif
    for (; k < K; ++k) q[k] = quantize(row[k]);
    for (int64_t z = 0; z < n_zeroed; ++z) q[zeroed[z]] = quantize(0.0f);
  }
  });
}

void pack_weights_s8(const float* w, int64_t ldw, int64_t K, int64_t N, int8_t* out) {
  if (K % 4 != 0 || N % 16 != 0)
    throw Error("pack_weights_s8: K = " + std::to_string(K) + " must be a multiple of 4 and N = " + std::to_string(N) +
                " of 16");
  float* scale = reinterpret_cast<float*>(out + N * K);
  float* bias_of_offset = scale + N;
  const int64_t quads = K / 4;
  for (int64_t n = 0; n < N; ++n) {
    const float* row = w + n * ldw;
    float top = 0.0f;
    for (int64_t k = 0; k < K; ++k) top = std::max(top, std::fabs(row[k]));
    const float s = top > 0 ? top / 127.0f : 1.0f, inv = top > 0 ? 127.0f / top : 0.0f;
    int8_t* panel = out + (n / 16) * quads * 64 + (n % 16) * 4;
    int32_t sum = 0;
    for (int64_t k = 0; k < K; ++k) {
      const int8_t q = static_cast<int8_t>(std::clamp(std::nearbyint(row[k] * inv), -127.0f, 127.0f));
      panel[(k / 4) * 64 + k % 4] = q;
      sum += q;
    }
    scale[n] = s;
    bias_of_offset[n] = s * static_cast<float>(sum);
  }
  std::vector<float> column(static_cast<size_t>(N));
  for (int64_t k = 0; k < K; ++k) {
    for (int64_t n = 0; n < N; ++n) column[static_cast<size_t>(n)] = w[n * ldw + k];
    to_bf16(column.data(), const_cast<uint16_t*>(packed_s8_transposed_row(out, K, N, k)), N);
  }
}

namespace {

#ifdef KOKORO_HAVE_VNNI
// acc + the four-byte dot products of u and s in each 32-bit lane. GCC's builtin on its own vector type: with
// __m512i (8 x int64) and the intrinsic's casts to 16 x int32 around every vpdpbusd, GCC 12 kept the
// accumulators on the stack (half the instruction rate). Clang has no such builtin and needs no such help.
inline __v16si dpbusd(__v16si acc, __v16si u, __v16si s) {
#if defined(__clang__)
  return (__v16si)_mm512_dpbusd_epi32((__m512i)acc, (__m512i)u, (__m512i)s);
#else
  return __builtin_ia32_vpdpbusd_v16si(acc, u, s);
#endif
}

// MR rows x 16 NV columns over the whole K: MR * NV int32 accumulators stay in registers; per quad of k, NV
// panel loads and MR broadcasts of a row's four bytes feed MR * NV vpdpbusd. The epilogue dequantises and
// adds the fp32 terms (ev: this tile's first row's values, ew: its first column's weights).
template <int MR, int NV>
void micro_kernel(const uint8_t* a, int64_t lda, int64_t quads, const int8_t* panel, int64_t panel_stride,
                  const float* sa, const float* oa, const float* sw, const float* swc, const float* bias, float* y,
                  int64_t ldy, const Fp32Terms& extra, const float* ev, const float* ew) {
  __v16si acc[MR][NV];  // GCC's own vector type (dpbusd above)
  for (int r = 0; r < MR; ++r)
    for (int v = 0; v < NV; ++v) acc[r][v] = __v16si{};
  for (int64_t kq = 0; kq < quads; ++kq) {
    __v16si b[NV];
    for (int v = 0; v < NV; ++v) b[v] = (__v16si)_mm512_loadu_si512(panel + v * panel_stride + kq * 64);
    for (int r = 0; r < MR; ++r) {
      int32_t quad;
      std::memcpy(&quad, a + r * lda + 4 * kq, 4);
      const __v16si av = (__v16si)_mm512_set1_epi32(quad);
      for (int v = 0; v < NV; ++v) acc[r][v] = dpbusd(acc[r][v], av, b[v]);
    }
  }
  for (int v = 0; v < NV; ++v) {
    const __m512 s = _mm512_loadu_ps(sw + 16 * v), c = _mm512_loadu_ps(swc + 16 * v);
    const __m512 b = bias ? _mm512_loadu_ps(bias + 16 * v) : _mm512_setzero_ps();
    for (int r = 0; r < MR; ++r) {
      const __m512 scale = _mm512_mul_ps(_mm512_set1_ps(sa[r]), s);
      const __m512 shift = _mm512_fmadd_ps(_mm512_set1_ps(oa[r]), c, b);
      __m512 out = _mm512_fmadd_ps(_mm512_cvtepi32_ps((__m512i)acc[r][v]), scale, shift);
      for (int64_t j = 0; j < extra.k; ++j)
        out = _mm512_fmadd_ps(_mm512_set1_ps(ev[r * extra.k + j]), _mm512_loadu_ps(ew + j * extra.ldw + 16 * v), out);
      _mm512_storeu_ps(y + r * ldy + 16 * v, out);
    }
  }
}

template <int NV>
void rows_tail(int rows, const uint8_t* a, int64_t lda, int64_t quads, const int8_t* panel, int64_t ps,
               const float* sa, const float* oa, const float* sw, const float* swc, const float* bias, float* y,
               int64_t ldy, const Fp32Terms& extra, const float* ev, const float* ew) {
  switch (rows) {
#define KOKORO_ROWS_CASE(n) \
    case n: return micro_kernel<n, NV>(a, lda, quads, panel, ps, sa, oa, sw, swc, bias, y, ldy, extra, ev, ew);
    KOKORO_ROWS_CASE(1) KOKORO_ROWS_CASE(2) KOKORO_ROWS_CASE(3) KOKORO_ROWS_CASE(4) KOKORO_ROWS_CASE(5)
    KOKORO_ROWS_CASE(6) KOKORO_ROWS_CASE(7) KOKORO_ROWS_CASE(8) KOKORO_ROWS_CASE(9) KOKORO_ROWS_CASE(10)
    KOKORO_ROWS_CASE(11)
#undef KOKORO_ROWS_CASE
    default: return;
  }
}
#endif

}  // namespace

void gemm_u8s8(const RowsU8& x, const int8_t* packed, int64_t N, int64_t n0, int64_t n1, const float* bias,
               float* y, int64_t ldy, const Fp32Terms& extra) {
  const int64_t K = x.K, M = x.rows;
  if (K % 4 != 0 || N % 16 != 0 || n0 % 16 != 0 || n1 % 16 != 0 || n0 < 0 || n1 > N || n0 > n1)
    throw Error("gemm_u8s8: K = " + std::to_string(K) + ", N = " + std::to_string(N) + ", columns [" +
                std::to_string(n0) + ", " + std::to_string(n1) + ")");
#ifdef KOKORO_HAVE_VNNI
  if (!int8_supported()) throw Error("gemm_u8s8: this CPU has no AVX512-VNNI (avx512_vnni in /proc/cpuinfo)");
  const int64_t ps = K * 16;  // panel stride in bytes
  const float* sw = reinterpret_cast<const float*>(packed + N * K);
  const float* swc = sw + N;
  constexpr int MR = 12;
  const uint8_t* a = x.q.data();
  const float *sa = x.scale.data(), *oa = x.offset.data();
  const int64_t quads = K / 4;
  auto run = [&](auto nv, int64_t n) {
    constexpr int NV = decltype(nv)::value;
    const int8_t* panel = packed + (n / 16) * ps;
    const float* b = bias ? bias + n : nullptr;
    const float* ew = extra.k ? extra.weights + (n - n0) : nullptr;
    const auto ev = [&](int64_t m) { return extra.k ? extra.values + m * extra.k : nullptr; };
    int64_t m0 = 0;
    for (; m0 + MR <= M; m0 += MR)
      micro_kernel<MR, NV>(a + m0 * K, K, quads, panel, ps, sa + m0, oa + m0, sw + n, swc + n, b, y + m0 * ldy + n, ldy,
                           extra, ev(m0), ew);
    rows_tail<NV>(static_cast<int>(M - m0), a + m0 * K, K, quads, panel, ps, sa + m0, oa + m0, sw + n, swc + n, b,
                  y + m0 * ldy + n, ldy, extra, ev(m0), ew);
  };
  int64_t n = n0;
  for (; n + 32 <= n1; n += 32) run(std::integral_constant<int, 2>{}, n);
  if (n < n1) run(std::integral_constant<int, 1>{}, n);
#else
  (void)packed, (void)bias, (void)y, (void)ldy, (void)M, (void)extra;
  throw Error("gemm_u8s8: these kernels have no AVX512-VNNI (the x86-64-v4 family or a -march=native build on a "
              "CPU that has it)");
#endif
}

}  // namespace kokoro
