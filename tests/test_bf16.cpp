// The opt-in bf16 path (core/precision.h, core/bf16_gemm.h): the bf16 GEMM against a double-precision
// product of the same bf16-rounded inputs (the kernel itself must be exact up to fp32 accumulation), and
// against the fp32 product within bf16's rounding; the bf16 Winograd convolution against the fp32 one at
// the generator's shapes within 1e-2 of the output scale; weights prepared once per registered region and
// dropped with it; and, on a CPU without AVX512-BF16, a clear error instead of a silent fp32 run.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <random>
#include <vector>

#include "core/bf16_gemm.h"
#include "core/bf16_parking.h"
#include "core/error.h"
#include "core/kernels.h"
#include "core/precision.h"
#include "core/weight_cache.h"
#include "core/winograd.h"

#include "tests/random_values.h"

using namespace kokoro;

namespace {

using test::randn;

// Restores fp32 when a test ends, whatever happened.
struct PrecisionGuard {
  ~PrecisionGuard() { set_precision(Precision::fp32); }
};

}  // namespace

TEST(Precision, ParsesNamesAndRejectsOthers) {
  EXPECT_EQ(parse_precision("fp32", "--precision"), Precision::fp32);
  EXPECT_EQ(parse_precision("bf16", "--precision"), Precision::bf16);
  EXPECT_EQ(parse_precision("bf16-all", "--precision"), Precision::bf16_all);
  try {
    parse_precision("fp16", "--precision");
    FAIL() << "fp16 accepted";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("--precision: unknown precision 'fp16'"), std::string::npos) << e.what();
  }
  EXPECT_EQ(precision(), Precision::fp32) << "fp32 must be the default (KOKORO_PRECISION unset in tests)";
}

TEST(Precision, ScopeOverridesTheKernelsPrecisionOnItsThreadOnly) {
  EXPECT_EQ(kernel_precision(), Precision::fp32);
  {
    const ScopedKernelPrecision outer(Precision::bf16);
    EXPECT_EQ(kernel_precision(), Precision::bf16);
    EXPECT_EQ(precision(), Precision::fp32) << "the setting itself is untouched";
    {
      const ScopedKernelPrecision inner(Precision::fp32);
      EXPECT_EQ(kernel_precision(), Precision::fp32);
    }
    EXPECT_EQ(kernel_precision(), Precision::bf16);
  }
  EXPECT_EQ(kernel_precision(), Precision::fp32);
}

TEST(Precision, Bf16OnlyWhereTheCpuHasIt) {
  PrecisionGuard guard;
  if (bf16_supported()) {
    set_precision(Precision::bf16);
    EXPECT_EQ(precision(), Precision::bf16);
  } else {
    // The fallback is an error naming the missing instruction set, never a silent fp32 run.
    try {
      set_precision(Precision::bf16);
      FAIL() << "bf16 accepted on a CPU without AVX512-BF16";
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find("AVX512-BF16"), std::string::npos) << e.what();
    }
    std::vector<bf16_t> a(32), b(packed_b_bf16_size(2, 16));
    std::vector<float> c(16);
    EXPECT_THROW(gemm_bf16(a.data(), 2, 1, 2, b.data(), 16, c.data(), 16), Error);
  }
}

TEST(Bf16, RoundsToNearestEven) {
  const float in[] = {1.0f, 1.00390625f /* 1 + 2^-8: tie, to even 1 */, 1.01171875f /* 1 + 3*2^-8: tie, up */,
                      -2.5f, 3.0e38f, 1e-40f};
  bf16_t out[6];
  to_bf16(in, out, 6);
  EXPECT_EQ(from_bf16(out[0]), 1.0f);
  EXPECT_EQ(from_bf16(out[1]), 1.0f);
  EXPECT_EQ(from_bf16(out[2]), 1.015625f);
  EXPECT_EQ(from_bf16(out[3]), -2.5f);
  EXPECT_NEAR(from_bf16(out[4]) / 3.0e38f, 1.0f, 4e-3f);
  EXPECT_EQ(from_bf16(out[5]), 0.0f) << "denormals flush to zero, as the vector instruction does";
  // 16-wide (vector) and scalar rounding agree.
  const auto v = randn(37, 5);
  std::vector<bf16_t> vec(37), one(37);
  to_bf16(v.data(), vec.data(), 37);
  for (int i = 0; i < 37; ++i) to_bf16(&v[i], &one[i], 1);
  EXPECT_EQ(vec, one);
}

// ALBERT's softmax rows are normalised and converted in one pass: the same bits as the product stored in fp32
// and then converted, in the vector body and the scalar tail alike, zeros (a row's padding) staying zero.
TEST(Bf16, ScaledConversionIsTheConversionOfTheFp32Product) {
  for (const int64_t n : {1, 15, 16, 37, 368}) {
    auto v = randn(static_cast<size_t>(n), 7, 3.0f);
    v[static_cast<size_t>(n - 1)] = 0.0f;
    for (const float factor : {1.0f / 363.0f, 0.73f, 2.0f}) {
      std::vector<float> product(v.size());
      for (size_t i = 0; i < v.size(); ++i) product[i] = v[i] * factor;
      std::vector<bf16_t> fused(v.size(), 0xffff), two_pass(v.size());
      scaled_to_bf16(v.data(), factor, fused.data(), n);
      to_bf16(product.data(), two_pass.data(), n);
      EXPECT_EQ(fused, two_pass) << "n " << n << " factor " << factor;
      EXPECT_EQ(fused.back(), 0) << "a zero stays +0";
    }
  }
}

TEST(Bf16, GemmMatchesDoublePrecisionOfRoundedInputsAndFp32WithinBf16Rounding) {
  if (!bf16_supported()) GTEST_SKIP() << "this CPU has no AVX512-BF16: the kernel cannot be checked here";
  struct Shape {
    int64_t M, K, N, lda;
  };
  for (const Shape s : {Shape{1, 2, 16, 2}, Shape{13, 64, 48, 64}, Shape{30, 768, 256, 256 * 3},
                        Shape{25, 512, 128, 256}, Shape{12, 6, 32, 6},
                        // matrix-vector products (eight panels at a time, then single panels): an LSTM step
                        Shape{1, 256, 1024, 256}, Shape{2, 64, 144, 64}}) {
    // A's rows are lda apart with K contiguous (Winograd's windows overlap: lda may be < K).
    const int64_t a_len = (s.M - 1) * s.lda + s.K;
    const auto a = randn(static_cast<size_t>(a_len), 1), b = randn(static_cast<size_t>(s.K * s.N), 2, 0.05f);
    std::vector<bf16_t> ab(a.size()), bp(packed_b_bf16_size(s.K, s.N));
    to_bf16(a.data(), ab.data(), a_len);
    pack_b_bf16(b.data(), s.N, s.K, s.N, bp.data());
    std::vector<float> c(s.M * s.N, -1.0f);
    gemm_bf16(ab.data(), s.lda, s.M, s.K, bp.data(), s.N, c.data(), s.N);
    std::vector<bf16_t> bb(b.size());
    to_bf16(b.data(), bb.data(), static_cast<int64_t>(b.size()));
    double worst_exact = 0, worst_fp32 = 0, scale = 0;
    for (int64_t i = 0; i < s.M; ++i)
      for (int64_t j = 0; j < s.N; ++j) {
        double rounded = 0, full = 0;
        for (int64_t k = 0; k < s.K; ++k) {
          rounded += double(from_bf16(ab[i * s.lda + k])) * from_bf16(bb[k * s.N + j]);
          full += double(a[i * s.lda + k]) * b[k * s.N + j];
        }
        const double got = c[i * s.N + j];
        worst_exact = std::max(worst_exact, std::abs(got - rounded));
        worst_fp32 = std::max(worst_fp32, std::abs(got - full));
        scale = std::max(scale, std::abs(full));
      }
    SCOPED_TRACE("M " + std::to_string(s.M) + " K " + std::to_string(s.K) + " N " + std::to_string(s.N));
    EXPECT_LT(worst_exact / scale, 1e-5) << "kernel error beyond fp32 accumulation";
    EXPECT_LT(worst_fp32 / scale, 1e-2) << "beyond bf16 rounding";
    EXPECT_GT(worst_fp32 / scale, 1e-5) << "no rounding at all: was bf16 used?";
  }
}

TEST(Bf16, GemmRejectsShapesItCannotRun) {
  std::vector<bf16_t> a(64), b(packed_b_bf16_size(4, 32));
  std::vector<float> c(64), bf(4 * 20);
  EXPECT_THROW(gemm_bf16(a.data(), 3, 2, 3, b.data(), 16, c.data(), 16), Error);  // odd K
  EXPECT_THROW(gemm_bf16(a.data(), 4, 2, 4, b.data(), 20, c.data(), 20), Error);  // N % 16
  EXPECT_THROW(pack_b_bf16(bf.data(), 20, 4, 20, b.data()), Error);
}

namespace {

struct ConvCase {
  int64_t ch, k, T;
  int dilation;
};

struct RelError {
  double max, rms;  // max |d| / max |y_fp32|, rms(d) / rms(y_fp32)
};

// |y16 - y32| relative to y32: max over max, and RMS over RMS.
RelError relative_error(const Tensor& y16, const Tensor& y32) {
  EXPECT_EQ(y16.shape(), y32.shape());
  double worst = 0, scale = 0, d2 = 0, y2 = 0;
  for (int64_t i = 0; i < std::min(y32.numel(), y16.numel()); ++i) {
    const double d = double(y16[i]) - y32[i];
    worst = std::max(worst, std::abs(d));
    scale = std::max(scale, double(std::abs(y32[i])));
    d2 += d * d;
    y2 += double(y32[i]) * y32[i];
  }
  return {worst / scale, std::sqrt(d2 / y2)};
}

// bf16 against fp32 for one Winograd convolution ("same" padding).
RelError winograd_bf16_error(const ConvCase& c, const TensorView& w, const TensorView& b, const Tensor& x) {
  const int pad = static_cast<int>(c.dilation * (c.k - 1) / 2);
  const WinogradTransform& tr = *winograd_for_kernel(c.k);
  Tensor y32, y16;
  set_precision(Precision::fp32);
  conv1d_winograd(x, w, &b, pad, c.dilation, tr, y32);
  set_precision(Precision::bf16);
  conv1d_winograd(x, w, &b, pad, c.dilation, tr, y16);
  set_precision(Precision::fp32);
  return relative_error(y16, y32);
}

}  // namespace

TEST(Bf16, WinogradConvolutionWithinBf16ToleranceOfFp32AtGeneratorShapes) {
  if (!bf16_supported()) GTEST_SKIP() << "this CPU has no AVX512-BF16: the bf16 convolution cannot be checked here";
  PrecisionGuard guard;
  for (const ConvCase c : {ConvCase{256, 3, 803, 1}, ConvCase{256, 7, 640, 3}, ConvCase{256, 11, 777, 5},
                           ConvCase{128, 3, 2411, 5}, ConvCase{128, 7, 1203, 1}, ConvCase{128, 11, 97, 3}}) {
    const auto wd = randn(static_cast<size_t>(c.ch * c.ch * c.k), 3, 1.0f / std::sqrt(float(c.ch * c.k)));
    const auto bd = randn(static_cast<size_t>(c.ch), 4);
    Tensor x({c.ch, c.T});
    const auto xd = randn(static_cast<size_t>(c.ch * c.T), 6);
    std::copy(xd.begin(), xd.end(), x.data());
    const TensorView w{wd.data(), {c.ch, c.ch, c.k}}, b{bd.data(), {c.ch}};
    const RelError err = winograd_bf16_error(c, w, b, x);
    SCOPED_TRACE(std::to_string(c.ch) + " ch, k " + std::to_string(c.k) + ", d " + std::to_string(c.dilation));
    std::printf("winograd bf16 vs fp32, %lld ch, k %lld, d %d: max %.2e, rms %.2e (relative)\n",
                static_cast<long long>(c.ch), static_cast<long long>(c.k), c.dilation, err.max, err.rms);
    // Inputs are rounded after the Winograd input transform (entries up to 4-8 at points +-2): the error is
    // a few bf16 ulps (2^-8 = 3.9e-3) of the output scale, worst single value ~1e-2.
    EXPECT_LT(err.max, 2e-2);
    EXPECT_LT(err.rms, 1e-2);
    EXPECT_GT(err.rms, 1e-6) << "identical to fp32: the bf16 path did not run";
  }
}

// The decoder's 1024-channel convolutions (and short generator chunks) in bf16: one GEMM over tap-major
// packed weights whose im2col rows are overlapping rows of the padded, transposed input (dilated: copied
// rows; the generator's resblocks on short slices and chunks).
TEST(Bf16, DirectConvolutionWithinBf16ToleranceOfFp32AtDecoderShapes) {
  if (!bf16_supported()) GTEST_SKIP() << "this CPU has no AVX512-BF16: the bf16 convolution cannot be checked here";
  PrecisionGuard guard;
  struct Case {
    int64_t in, out, k, T;
    int padding, dilation = 1;
  };
  for (const Case c : {Case{1090, 1024, 3, 157, 1}, Case{1024, 1024, 3, 40, 1}, Case{512, 256, 7, 12, 3},
                       Case{64, 32, 3, 1, 1}, Case{514, 512, 5, 23, 0}, Case{256, 256, 11, 70, 25, 5},
                       Case{128, 128, 7, 90, 9, 3}, Case{256, 256, 3, 40, 0, 5}}) {
    const auto wd = randn(static_cast<size_t>(c.out * c.in * c.k), 11, 1.0f / std::sqrt(float(c.in * c.k)));
    const auto bd = randn(static_cast<size_t>(c.out), 12);
    Tensor x({c.in, c.T});
    const auto xd = randn(static_cast<size_t>(c.in * c.T), 13);
    std::copy(xd.begin(), xd.end(), x.data());
    const TensorView w{wd.data(), {c.out, c.in, c.k}}, b{bd.data(), {c.out}};
    Tensor y32, y16, via_conv1d;
    set_precision(Precision::fp32);
    conv1d_direct(x, w, &b, c.padding, c.dilation, y32);
    set_precision(Precision::bf16);
    conv1d_bf16(x, w, &b, c.padding, c.dilation, y16);
    conv1d(x, w, &b, 1, c.padding, c.dilation, via_conv1d);
    set_precision(Precision::fp32);
    SCOPED_TRACE(std::to_string(c.in) + " -> " + std::to_string(c.out) + ", k " + std::to_string(c.k) + ", T " +
                 std::to_string(c.T) + ", padding " + std::to_string(c.padding) + ", dilation " +
                 std::to_string(c.dilation));
    ASSERT_EQ(y16.shape(), y32.shape());
    const RelError err = relative_error(y16, y32);
    std::printf("direct bf16 vs fp32, %lld -> %lld, k %lld, T %lld: max %.2e, rms %.2e (relative)\n",
                static_cast<long long>(c.in), static_cast<long long>(c.out), static_cast<long long>(c.k),
                static_cast<long long>(c.T), err.max, err.rms);
    EXPECT_LT(err.max, 2e-2);
    EXPECT_LT(err.rms, 1e-2);
    EXPECT_GT(err.rms, 1e-6) << "identical to fp32: the bf16 path did not run";
    const int64_t t_out = c.T + 2 * c.padding - c.dilation * (c.k - 1);
    const bool wide = c.in * c.out > 512 * 512;
    // Winograd in bf16 from 64 columns, or 96 for a kernel spanning 31 columns or more (core/kernels.cpp)
    const int64_t winograd_from = (c.k - 1) * c.dilation < 30 ? 64 : 96;
    if (wide ? t_out < 64 || c.k != 3 : t_out < winograd_from)  // no Winograd: conv1d goes here
      for (int64_t i = 0; i < y16.numel(); ++i) ASSERT_EQ(via_conv1d[i], y16[i]) << "conv1d did not take the bf16 path";
  }
  Tensor x({7, 10}), y;
  const std::vector<float> wd(16 * 7 * 3, 0.1f);
  EXPECT_THROW(conv1d_bf16(x, TensorView{wd.data(), {16, 7, 3}}, nullptr, 1, 1, y), Error) << "odd input channels";
}

// The decoder half's 1024-wide convolutions from 64 columns on: conv1d takes Winograd F(5, 3) in bf16 (2.0-2.5x
// faster than the direct bf16 form; core/kernels.cpp). Its error is larger than the direct form's (transformed
// inputs and outputs are rounded at up to 16x the input's scale) and is what the decoder's fidelity in
// docs/benchmarks.md was measured with.
TEST(Bf16, WideConvolutionsTakeWinogradWithinBf16ToleranceOfFp32) {
  if (!bf16_supported()) GTEST_SKIP() << "this CPU has no AVX512-BF16: the bf16 convolution cannot be checked here";
  PrecisionGuard guard;
  struct Case {
    int64_t in, out, T;
  };
  for (const Case c : {Case{1090, 1024, 157}, Case{1024, 1024, 64}, Case{1090, 512, 301}, Case{514, 1024, 90}}) {
    const auto wd = randn(static_cast<size_t>(c.out * c.in * 3), 21, 1.0f / std::sqrt(float(c.in * 3)));
    const auto bd = randn(static_cast<size_t>(c.out), 22);
    Tensor x({c.in, c.T});
    const auto xd = randn(static_cast<size_t>(c.in * c.T), 23);
    std::copy(xd.begin(), xd.end(), x.data());
    const TensorView w{wd.data(), {c.out, c.in, 3}}, b{bd.data(), {c.out}};
    Tensor y32, y16, direct16, via_winograd;
    set_precision(Precision::fp32);
    conv1d_direct(x, w, &b, 1, 1, y32);
    set_precision(Precision::bf16);
    conv1d(x, w, &b, 1, 1, 1, y16);
    conv1d_bf16(x, w, &b, 1, 1, direct16);
    conv1d_winograd(x, w, &b, 1, 1, *winograd_for_kernel(3), via_winograd);
    set_precision(Precision::fp32);
    SCOPED_TRACE(std::to_string(c.in) + " -> " + std::to_string(c.out) + ", T " + std::to_string(c.T));
    ASSERT_EQ(y16.shape(), y32.shape());
    for (int64_t i = 0; i < y16.numel(); ++i) ASSERT_EQ(y16[i], via_winograd[i]) << "conv1d did not take Winograd";
    const RelError err = relative_error(y16, y32), direct = relative_error(direct16, y32);
    std::printf("wide winograd bf16 vs fp32, %lld -> %lld, T %lld: max %.2e, rms %.2e (direct bf16: %.2e, %.2e)\n",
                static_cast<long long>(c.in), static_cast<long long>(c.out), static_cast<long long>(c.T), err.max,
                err.rms, direct.max, direct.rms);
    EXPECT_LT(err.max, 3e-2);
    EXPECT_LT(err.rms, 1.5e-2);
    EXPECT_GT(err.rms, direct.rms) << "no larger than the direct form's: not the Winograd path";
  }
}

// The generator's upsampling (ups.0: 512 -> 256, k 20, stride 10; ups.1: 256 -> 128, k 12, stride 6) in bf16:
// one GEMM per block of columns against w viewed as [in, out*k], scatter-added as in fp32.
TEST(Bf16, TransposedConvolutionWithinBf16ToleranceOfFp32AtUpsamplingShapes) {
  if (!bf16_supported()) GTEST_SKIP() << "this CPU has no AVX512-BF16: the bf16 convolution cannot be checked here";
  PrecisionGuard guard;
  struct Case {
    int64_t in, out, k, T;
    int stride, padding;
    bool bf16;  // whole 16-column panels per group of output channels (out % (16 / gcd(k, 16)) == 0)
  };
  for (const Case c : {Case{512, 256, 20, 97, 10, 5, true}, Case{256, 128, 12, 300, 6, 3, true},
                       Case{256, 128, 12, 1, 6, 3, true}, Case{64, 16, 4, 131, 2, 1, true},
                       Case{10, 6, 20, 9, 10, 5, false}}) {
    const auto wd = randn(static_cast<size_t>(c.in * c.out * c.k), 21, 1.0f / std::sqrt(float(c.in)));
    const auto bd = randn(static_cast<size_t>(c.out), 22);
    Tensor x({c.in, c.T});
    const auto xd = randn(static_cast<size_t>(c.in * c.T), 23);
    std::copy(xd.begin(), xd.end(), x.data());
    const TensorView w{wd.data(), {c.in, c.out, c.k}}, b{bd.data(), {c.out}};
    Tensor y32, y16;
    set_precision(Precision::fp32);
    conv_transpose1d(x, w, &b, c.stride, c.padding, 0, y32);
    set_precision(Precision::bf16);
    conv_transpose1d(x, w, &b, c.stride, c.padding, 0, y16);
    set_precision(Precision::fp32);
    SCOPED_TRACE(std::to_string(c.in) + " -> " + std::to_string(c.out) + ", k " + std::to_string(c.k) + ", T " +
                 std::to_string(c.T));
    ASSERT_EQ(y16.shape(), y32.shape());
    const RelError err = relative_error(y16, y32);
    std::printf("transposed bf16 vs fp32, %lld -> %lld, k %lld, T %lld: max %.2e, rms %.2e (relative)\n",
                static_cast<long long>(c.in), static_cast<long long>(c.out), static_cast<long long>(c.k),
                static_cast<long long>(c.T), err.max, err.rms);
    if (c.bf16) {
      EXPECT_LT(err.max, 2e-2);
      EXPECT_LT(err.rms, 1e-2);
      EXPECT_GT(err.rms, 1e-6) << "identical to fp32: the bf16 path did not run";
    } else {
      EXPECT_EQ(err.max, 0.0) << "a shape without whole panels stays in fp32";
    }
  }
}

TEST(Bf16, WeightsPreparedOncePerRegionAndDroppedWithIt) {
  if (!bf16_supported()) GTEST_SKIP() << "this CPU has no AVX512-BF16";
  PrecisionGuard guard;
  const ConvCase c{128, 7, 500, 3};
  const auto wd = randn(static_cast<size_t>(c.ch * c.ch * c.k), 7, 0.03f), bd = randn(c.ch, 8);
  Tensor x({c.ch, c.T});
  const auto xd = randn(static_cast<size_t>(c.ch * c.T), 9);
  std::copy(xd.begin(), xd.end(), x.data());
  const TensorView w{wd.data(), {c.ch, c.ch, c.k}}, b{bd.data(), {c.ch}};
  const WinogradTransform& tr = *winograd_for_kernel(c.k);
  const int pad = static_cast<int>(c.dilation * (c.k - 1) / 2);

  set_precision(Precision::bf16);
  Tensor per_call, cached, again;
  conv1d_winograd(x, w, &b, pad, c.dilation, tr, per_call);  // not in a region: prepared per call
  int builds = 0;
  register_weight_region(wd.data(), wd.size() * sizeof(float));
  conv1d_winograd(x, w, &b, pad, c.dilation, tr, cached);
  conv1d_winograd(x, w, &b, pad, c.dilation, tr, again);
  // The cache holds exactly one entry for this weight and kind: a second lookup never builds.
  const auto entry = cached_weights(wd.data(), "winograd-bf16 F(4,4) " + shape_to_string(w.shape), [&] {
    ++builds;
    return PreparedBytes{};
  });
  EXPECT_EQ(builds, 0);
  EXPECT_NE(entry.data, nullptr);
  unregister_weight_region(wd.data());
  EXPECT_EQ(cached_weights(wd.data(), "anything", [&] {
              ++builds;
              return PreparedBytes{};
            }).data,
            nullptr);
  EXPECT_EQ(builds, 0) << "outside a region nothing is built or kept";
  ASSERT_EQ(per_call.shape(), cached.shape());
  for (int64_t i = 0; i < per_call.numel(); ++i) {
    ASSERT_EQ(per_call[i], cached[i]) << i;
    ASSERT_EQ(cached[i], again[i]) << i;
  }
}

TEST(Bf16, LinearRowsWithinBf16ToleranceOfFp32AtAlbertShapes) {
  if (!bf16_supported()) GTEST_SKIP() << "this CPU has no AVX512-BF16";
  PrecisionGuard guard;
  struct L {
    int64_t T, in, out;
  };
  for (const L l : {L{22, 768, 768}, L{22, 768, 2048}, L{5, 2048, 768}, L{300, 128, 768}, L{1, 512, 48}}) {
    const auto wd = randn(static_cast<size_t>(l.out * l.in), 11, 1.0f / std::sqrt(float(l.in)));
    const auto bd = randn(static_cast<size_t>(l.out), 12);
    Tensor x({l.T, l.in});
    const auto xd = randn(static_cast<size_t>(l.T * l.in), 13);
    std::copy(xd.begin(), xd.end(), x.data());
    const TensorView w{wd.data(), {l.out, l.in}}, b{bd.data(), {l.out}};
    Tensor y32, y16;
    set_precision(Precision::fp32);
    linear_rows(x, w, &b, y32);
    set_precision(Precision::bf16);
    linear_rows(x, w, &b, y16);
    set_precision(Precision::fp32);
    ASSERT_EQ(y16.shape(), y32.shape());
    double worst = 0, scale = 0;
    for (int64_t i = 0; i < y32.numel(); ++i) {
      worst = std::max(worst, double(std::abs(y16[i] - y32[i])));
      scale = std::max(scale, double(std::abs(y32[i])));
    }
    SCOPED_TRACE("T " + std::to_string(l.T) + " in " + std::to_string(l.in) + " out " + std::to_string(l.out));
    EXPECT_LT(worst / scale, 1e-2);
    EXPECT_GT(worst / scale, 1e-6) << "identical to fp32: the bf16 path did not run";
  }
}

TEST(Bf16, LstmWithinBf16ToleranceOfFp32AtProsodyShape) {
  if (!bf16_supported()) GTEST_SKIP() << "this CPU has no AVX512-BF16";
  PrecisionGuard guard;
  // The prosody predictor's BiLSTM: 640 inputs, 256 hidden per direction; 60 steps let rounding errors of
  // the recurrence accumulate as they would over a sentence.
  const int64_t in = 640, H = 256, T = 60;
  const auto wih = randn(static_cast<size_t>(4 * H * in), 21, 0.05f), whh = randn(static_cast<size_t>(4 * H * H), 22, 0.05f);
  const auto bih = randn(static_cast<size_t>(4 * H), 23, 0.1f), bhh = randn(static_cast<size_t>(4 * H), 24, 0.1f);
  const LstmWeights lw{{wih.data(), {4 * H, in}}, {whh.data(), {4 * H, H}}, {bih.data(), {4 * H}}, {bhh.data(), {4 * H}}};
  Tensor x({T, in});
  const auto xd = randn(static_cast<size_t>(T * in), 25);
  std::copy(xd.begin(), xd.end(), x.data());
  Tensor y32, y16;
  set_precision(Precision::fp32);
  bilstm(x, lw, lw, y32);
  set_precision(Precision::bf16);
  bilstm(x, lw, lw, y16);
  set_precision(Precision::fp32);
  ASSERT_EQ(y16.shape(), y32.shape());
  double worst = 0;
  for (int64_t i = 0; i < y32.numel(); ++i) worst = std::max(worst, double(std::abs(y16[i] - y32[i])));
  // Hidden states are in (-1, 1): an absolute bound. bf16 rounds each product's inputs by ~2^-9.
  EXPECT_LT(worst, 2e-2);
  EXPECT_GT(worst, 1e-6) << "identical to fp32: the bf16 recurrence did not run";
}

TEST(Bf16, PackingFollowsThePanelLayout) {
  // B [K, N] with K odd (the last pair padded with zero), and W = B^T packed by pack_bt_bf16: both give
  // panel p, pair kp, column j, half h = bf16(B[2 kp + h][16 p + j]), each value rounded as to_bf16 does.
  const int64_t K = 37, N = 48, pairs = (K + 1) / 2;
  const auto b = randn(static_cast<size_t>(K * N), 31);
  std::vector<float> w(static_cast<size_t>(N * K));
  for (int64_t k = 0; k < K; ++k)
    for (int64_t n = 0; n < N; ++n) w[n * K + k] = b[k * N + n];
  std::vector<bf16_t> from_b(packed_b_bf16_size(K, N), 0xffff), from_w(packed_b_bf16_size(K, N), 0xffff);
  pack_b_bf16(b.data(), N, K, N, from_b.data());
  pack_bt_bf16(w.data(), K, K, N, from_w.data());
  for (int64_t p = 0; p < N / 16; ++p)
    for (int64_t kp = 0; kp < pairs; ++kp)
      for (int64_t j = 0; j < 16; ++j)
        for (int64_t h = 0; h < 2; ++h) {
          const int64_t k = 2 * kp + h, at = p * pairs * 32 + kp * 32 + j * 2 + h;
          bf16_t expected = 0;
          if (k < K) to_bf16(&b[k * N + p * 16 + j], &expected, 1);
          ASSERT_EQ(from_b[at], expected) << "pack_b_bf16 p " << p << " k " << k << " j " << j;
          ASSERT_EQ(from_w[at], expected) << "pack_bt_bf16 p " << p << " k " << k << " j " << j;
        }
}

namespace {
// Columns [a, b) of x [C, T] as a tensor of their own.
Tensor columns(const Tensor& x, int64_t a, int64_t b) {
  const int64_t C = x.dim(0), T = x.dim(1);
  Tensor part({C, b - a});
  for (int64_t i = 0; i < C; ++i) std::copy_n(x.data() + i * T + a, b - a, part.data() + i * (b - a));
  return part;
}
}  // namespace

// Memory (issue 12): the kernels below work through long inputs in spans of columns so that their scratch
// stays small. The spans must not change a single bit: every output column of a long input equals that of
// a shorter input around it, as far as both see the same samples (the columns away from the short input's
// zero-padded ends), and in-place Winograd equals the out-of-place one.
TEST(Bf16, LongInputsGiveTheSameColumnsAsShortOnesAroundThem) {
  if (!bf16_supported()) GTEST_SKIP() << "this CPU has no AVX512-BF16: the bf16 convolutions cannot be checked here";
  PrecisionGuard guard;
  set_precision(Precision::bf16_all);
  const int64_t T = 5000, a = 1900, b = 4300, margin = 16;  // spans of 1024 (direct) and 2048 (transposed)
  {  // direct: 48 -> 32 channels, kernel 3 (the path of the decoder and of short generator inputs)
    const int64_t ci = 48, co = 32, k = 3;
    const auto xv = randn(ci * T, 41), wv = randn(co * ci * k, 42, 0.1f), bv = randn(co, 43);
    const Tensor x = Tensor::from(xv.data(), {ci, T}), part = columns(x, a, b);
    const TensorView w{wv.data(), {co, ci, k}}, bias{bv.data(), {co}};
    Tensor y, yp;
    conv1d_bf16(x, w, &bias, 1, 1, y);
    conv1d_bf16(part, w, &bias, 1, 1, yp);
    int64_t differ = 0;
    for (int64_t o = 0; o < co; ++o)
      for (int64_t t = a + margin; t < b - margin; ++t) differ += y[o * T + t] != yp[o * (b - a) + t - a];
    EXPECT_EQ(differ, 0) << "conv1d_bf16";
  }
  {  // direct, dilated (copied im2col rows, in chunks of (1 << 20) / (k ci) = 873 columns): 400 -> 32, k 3, dilation 5
    const int64_t ci = 400, co = 32, k = 3, d = 5;
    const auto xv = randn(ci * T, 47), wv = randn(co * ci * k, 48, 0.1f), bv = randn(co, 49);
    const Tensor x = Tensor::from(xv.data(), {ci, T}), part = columns(x, a, b);
    const TensorView w{wv.data(), {co, ci, k}}, bias{bv.data(), {co}};
    Tensor y, yp;
    conv1d_bf16(x, w, &bias, d, d, y);
    conv1d_bf16(part, w, &bias, d, d, yp);
    int64_t differ = 0;
    for (int64_t o = 0; o < co; ++o)
      for (int64_t t = a + margin; t < b - margin; ++t) differ += y[o * T + t] != yp[o * (b - a) + t - a];
    EXPECT_EQ(differ, 0) << "conv1d_bf16, dilated";
  }
  {  // transposed: 64 -> 32 channels, stride 6, kernel 12 (the last upsampling layer's shape, narrower)
    const int64_t ci = 64, co = 32, k = 12, stride = 6, pad = 3;
    const auto xv = randn(ci * T, 44), wv = randn(ci * co * k, 45, 0.1f), bv = randn(co, 46);
    const Tensor x = Tensor::from(xv.data(), {ci, T}), part = columns(x, a, b);
    const TensorView w{wv.data(), {ci, co, k}}, bias{bv.data(), {co}};
    Tensor y, yp;
    conv_transpose1d(x, w, &bias, stride, pad, 0, y);
    conv_transpose1d(part, w, &bias, stride, pad, 0, yp);
    const int64_t n = y.dim(1), np = yp.dim(1), shift = a * stride;
    int64_t differ = 0;
    for (int64_t o = 0; o < co; ++o)
      for (int64_t s = shift + margin * stride; s < shift + np - margin * stride; ++s)
        differ += y[o * n + s] != yp[o * np + s - shift];
    EXPECT_EQ(differ, 0) << "conv_transpose1d (bf16)";
  }
}


// The generator's last stage parks the tensors that only wait in bf16 (core/bf16_parking.h): they come back
// rounded exactly as the kernels round their inputs, parking frees the fp32 tensor, and add_to is the same
// sum as restoring and adding.
TEST(Bf16, AParkedTensorComesBackRoundedAsTheKernelsRound) {
  const int64_t C = 128, T = 3001;  // large enough to be split between threads
  auto v = randn(C * T, 51, 3.0f);
  v[7] = 1e-40f;  // a denormal: flushed to zero, as vcvtneps2bf16 does
  const Tensor original = Tensor::from(v.data(), {C, T});
  std::vector<bf16_t> rounded(v.size());
  to_bf16(v.data(), rounded.data(), static_cast<int64_t>(v.size()));

  Tensor x = original;
  Bf16ParkedTensor parked;
  parked.park(x);
  EXPECT_EQ(x.numel(), 0) << "parking frees the fp32 tensor";
  parked.restore(x);
  ASSERT_EQ(x.shape(), original.shape());
  int64_t differ = 0;
  for (int64_t i = 0; i < x.numel(); ++i) differ += x[i] != from_bf16(rounded[static_cast<size_t>(i)]);
  EXPECT_EQ(differ, 0);
  EXPECT_EQ(x[7], 0.0f);
  int64_t changed = 0;
  for (int64_t i = 0; i < x.numel(); ++i) changed += x[i] != original[i];
  EXPECT_GT(changed, x.numel() / 2) << "the values really went through bf16";

  const auto yv = randn(C * T, 52);
  Tensor y = Tensor::from(yv.data(), {C, T});
  Tensor wrong_shape({C, T - 1});
  Tensor x2 = original;
  parked.park(x2);
  EXPECT_THROW(parked.add_to(wrong_shape), Error);
  parked.add_to(y);
  differ = 0;
  for (int64_t i = 0; i < y.numel(); ++i)
    differ += y[i] != yv[static_cast<size_t>(i)] + from_bf16(rounded[static_cast<size_t>(i)]);
  EXPECT_EQ(differ, 0) << "add_to is y + the restored values, element by element";
}
