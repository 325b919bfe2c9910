// The int8 precision (core/precision.h, core/int8_gemm.h): the row quantiser against its definition, the VNNI
// product against a double-precision evaluation of the same quantised formula (the kernel itself must be
// exact up to its fp32 epilogue), against the fp32 product within 8-bit quantisation's error, linear_rows_int8
// against linear_rows, the LSTMs in 8 bits against fp32, and the precision's name and refusal where the CPU
// cannot run it.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <numeric>
#include <random>
#include <vector>

#include "core/error.h"
#include "core/int8_gemm.h"
#include "core/kernels.h"
#include "core/linear_int8.h"
#include "core/lstm.h"
#include "core/parallel.h"
#include "core/precision.h"

#include "tests/random_values.h"

using namespace kokoro;

namespace {

using test::randn;

#define REQUIRE_INT8()                                                                                           \
  if (!int8_precision_supported())                                                                              \
  GTEST_SKIP() << "this CPU or build has no AVX512-VNNI with AVX512-BF16: the int8 kernels cannot be checked here"

// The weight quantisation as int8_gemm.h defines it, written out independently: per output feature, +-127
// steps of max|W[n, :]| / 127, rounded to nearest even.
struct QuantisedWeights {
  std::vector<int> q;  // [N, K]
  std::vector<double> scale;
};
QuantisedWeights quantise_weights(const std::vector<float>& w, int64_t N, int64_t K) {
  QuantisedWeights r{std::vector<int>(static_cast<size_t>(N * K)), std::vector<double>(static_cast<size_t>(N))};
  for (int64_t n = 0; n < N; ++n) {
    float top = 0;
    for (int64_t k = 0; k < K; ++k) top = std::max(top, std::fabs(w[n * K + k]));
    const float inv = top > 0 ? 127.0f / top : 0.0f;
    r.scale[n] = top > 0 ? top / 127.0f : 1.0f;
    for (int64_t k = 0; k < K; ++k) r.q[n * K + k] = static_cast<int>(std::nearbyint(w[n * K + k] * inv));
  }
  return r;
}

}  // namespace

TEST(Int8, QuantisesEachRowTo255StepsBetweenItsMinAndMax) {
  REQUIRE_INT8();
  for (int64_t K : {1, 5, 16, 37, 768}) {
    const int64_t rows = 7;
    std::vector<float> x = randn(static_cast<size_t>(rows * K), 3 + static_cast<unsigned>(K), 2.0f);
    std::fill(x.begin() + 2 * K, x.begin() + 3 * K, 0.75f);  // a constant row
    RowsU8 q;
    quantize_rows_u8(x.data(), K, rows, K, q);
    ASSERT_EQ(q.q.size(), static_cast<size_t>(rows * K));
    for (int64_t r = 0; r < rows; ++r) {
      const float* row = x.data() + r * K;
      const float lo = *std::min_element(row, row + K), hi = *std::max_element(row, row + K);
      EXPECT_EQ(q.offset[r], lo);
      if (hi == lo) {
        EXPECT_EQ(q.scale[r], 1.0f) << "constant row " << r;
        for (int64_t k = 0; k < K; ++k) EXPECT_EQ(q.q[r * K + k], 0);
        continue;
      }
      EXPECT_FLOAT_EQ(q.scale[r], (hi - lo) / 255.0f);
      const float inv = 255.0f / (hi - lo);
      for (int64_t k = 0; k < K; ++k) {
        const int expected = static_cast<int>(std::clamp(std::nearbyint((row[k] - lo) * inv), 0.0f, 255.0f));
        ASSERT_EQ(q.q[r * K + k], expected) << "K " << K << " row " << r << " k " << k;
        // The value it stands for is within half a step of the input.
        EXPECT_LE(std::fabs(q.scale[r] * q.q[r * K + k] + lo - row[k]), 0.5f * q.scale[r] * 1.001f);
      }
    }
  }
}

// Every row count the micro-kernel has (1..11 and full blocks of 12), one and two panels, a column range.
TEST(Int8, ProductIsTheQuantisedFormulaExactly) {
  REQUIRE_INT8();
  struct Case { int64_t M, K, N, n0, n1; };
  for (const Case c : {Case{1, 4, 16, 0, 16}, Case{5, 8, 48, 0, 48}, Case{11, 64, 32, 0, 32}, Case{12, 128, 64, 16, 48},
                       Case{13, 768, 80, 0, 80}, Case{37, 2048, 64, 32, 64}, Case{277, 768, 48, 0, 48}}) {
    const auto x = randn(static_cast<size_t>(c.M * c.K), 11, 1.5f), w = randn(static_cast<size_t>(c.N * c.K), 12, 0.05f);
    const auto bias = randn(static_cast<size_t>(c.N), 13);
    RowsU8 xq;
    quantize_rows_u8(x.data(), c.K, c.M, c.K, xq);
    std::vector<int8_t> packed(static_cast<size_t>(packed_s8_bytes(c.K, c.N)));
    pack_weights_s8(w.data(), c.K, c.K, c.N, packed.data());
    const QuantisedWeights wq = quantise_weights(w, c.N, c.K);
    const float nan = std::nanf("");
    std::vector<float> y(static_cast<size_t>(c.M * c.N), nan);
    gemm_u8s8(xq, packed.data(), c.N, c.n0, c.n1, bias.data(), y.data(), c.N);
    for (int64_t m = 0; m < c.M; ++m)
      for (int64_t n = 0; n < c.N; ++n) {
        const float got = y[m * c.N + n];
        if (n < c.n0 || n >= c.n1) {
          ASSERT_TRUE(std::isnan(got)) << "wrote outside its columns: m " << m << " n " << n;
          continue;
        }
        long long dot = 0, wsum = 0;
        for (int64_t k = 0; k < c.K; ++k) {
          dot += static_cast<long long>(xq.q[m * c.K + k]) * wq.q[n * c.K + k];
          wsum += wq.q[n * c.K + k];
        }
        const double expected = double(xq.scale[m]) * wq.scale[n] * double(dot) +
                                double(xq.offset[m]) * wq.scale[n] * double(wsum) + bias[n];
        // The epilogue's fp32 arithmetic: a few ulps of the two terms' magnitudes.
        const double terms = std::fabs(double(xq.scale[m]) * wq.scale[n] * double(dot)) +
                             std::fabs(double(xq.offset[m]) * wq.scale[n] * double(wsum)) + std::fabs(bias[n]);
        ASSERT_NEAR(got, expected, 1e-6 * terms + 1e-7)
            << "M " << c.M << " K " << c.K << " N " << c.N << " at m " << m << " n " << n;
      }
  }
}

// The fp32 terms (linear_rows_int8's outlier channels) are added in the epilogue as a separate pass over y
// would add them: after the dequantised value, one fused multiply-add per term in their order. Same bits.
TEST(Int8, Fp32TermsAddInTheEpilogueAsInAPassAfterIt) {
  REQUIRE_INT8();
  struct Case { int64_t M, K, N, n0, n1, k; };
  for (const Case c : {Case{29, 768, 64, 16, 64, 3}, Case{12, 128, 48, 0, 48, 1}, Case{5, 256, 32, 0, 32, 8}}) {
    const auto x = randn(static_cast<size_t>(c.M * c.K), 51, 1.5f), w = randn(static_cast<size_t>(c.N * c.K), 52, 0.05f);
    const auto bias = randn(static_cast<size_t>(c.N), 53), values = randn(static_cast<size_t>(c.M * c.k), 54, 10.0f);
    const int64_t n = c.n1 - c.n0;
    const auto weights = randn(static_cast<size_t>(c.k * n), 55, 0.05f);
    RowsU8 xq;
    quantize_rows_u8(x.data(), c.K, c.M, c.K, xq);
    std::vector<int8_t> packed(static_cast<size_t>(packed_s8_bytes(c.K, c.N)));
    pack_weights_s8(w.data(), c.K, c.K, c.N, packed.data());
    std::vector<float> plain(static_cast<size_t>(c.M * c.N)), fused(plain.size());
    gemm_u8s8(xq, packed.data(), c.N, c.n0, c.n1, bias.data(), plain.data(), c.N);
    Fp32Terms extra;
    extra.k = c.k;
    extra.values = values.data();
    extra.weights = weights.data();
    extra.ldw = n;
    gemm_u8s8(xq, packed.data(), c.N, c.n0, c.n1, bias.data(), fused.data(), c.N, extra);
    int64_t differ = 0, changed = 0;
    for (int64_t m = 0; m < c.M; ++m)
      for (int64_t col = c.n0; col < c.n1; ++col) {
        float y = plain[m * c.N + col];
        for (int64_t j = 0; j < c.k; ++j) y = std::fma(values[m * c.k + j], weights[j * n + col - c.n0], y);
        differ += fused[m * c.N + col] != y;
        changed += fused[m * c.N + col] != plain[m * c.N + col];
      }
    EXPECT_EQ(differ, 0) << "M " << c.M << " K " << c.K << " columns " << c.n0 << ".." << c.n1 << ", " << c.k << " terms";
    EXPECT_GT(changed, c.M * n / 2) << "the terms were not added";
  }
}

TEST(Int8, ProductIsWithinEightBitErrorOfTheFp32One) {
  REQUIRE_INT8();
  const int64_t M = 120, K = 768, N = 256;
  const auto x = randn(static_cast<size_t>(M * K), 21), w = randn(static_cast<size_t>(N * K), 22, 0.03f);
  RowsU8 xq;
  quantize_rows_u8(x.data(), K, M, K, xq);
  std::vector<int8_t> packed(static_cast<size_t>(packed_s8_bytes(K, N)));
  pack_weights_s8(w.data(), K, K, N, packed.data());
  std::vector<float> y(static_cast<size_t>(M * N));
  gemm_u8s8(xq, packed.data(), N, 0, N, nullptr, y.data(), N);
  double err = 0, ref = 0;
  for (int64_t m = 0; m < M; ++m)
    for (int64_t n = 0; n < N; ++n) {
      double exact = 0;
      for (int64_t k = 0; k < K; ++k) exact += double(x[m * K + k]) * w[n * K + k];
      err += (y[m * N + n] - exact) * (y[m * N + n] - exact);
      ref += exact * exact;
    }
  const double rel = std::sqrt(err / ref);
  std::printf("int8 product vs fp64: relative rms error %.2e\n", rel);
  // Gaussian rows span ~+-3.5 sigma: steps of ~sigma/36 on x and ~sigma/40 on W, ~1 % relative in all.
  EXPECT_LT(rel, 1.5e-2);
  EXPECT_GT(rel, 1e-4) << "as exact as fp32: the products cannot have been 8-bit";
}

TEST(Int8, RejectsShapesItCannotRun) {
  RowsU8 xq;
  const std::vector<float> x(24, 1.0f);
  quantize_rows_u8(x.data(), 6, 4, 6, xq);  // K = 6: not a multiple of 4
  std::vector<int8_t> packed(static_cast<size_t>(packed_s8_bytes(8, 16)));
  std::vector<float> y(64);
  EXPECT_THROW(gemm_u8s8(xq, packed.data(), 16, 0, 16, nullptr, y.data(), 16), Error);
  const std::vector<float> w(6 * 16, 0.5f);
  EXPECT_THROW(pack_weights_s8(w.data(), 6, 6, 16, packed.data()), Error);
  quantize_rows_u8(x.data(), 8, 3, 8, xq);
  EXPECT_THROW(gemm_u8s8(xq, packed.data(), 16, 0, 8, nullptr, y.data(), 16), Error) << "a column range of half a panel";
}

// What ALBERT calls: the same as linear_rows within 8-bit error, and the same bits however many threads split it.
TEST(Int8, LinearRowsAgreesWithFp32AndWithItselfOnOneThread) {
  REQUIRE_INT8();
  const int64_t T = 97, in = 768, out = 2048;
  auto xv = randn(static_cast<size_t>(T * in), 31), wv = randn(static_cast<size_t>(out * in), 32, 0.03f),
       bv = randn(static_cast<size_t>(out), 33, 0.1f);
  Tensor x({T, in});
  std::copy(xv.begin(), xv.end(), x.data());
  const TensorView w{wv.data(), {out, in}}, b{bv.data(), {out}};
  Tensor y8, y32, y8_one;
  linear_rows_int8(x, w, &b, y8);
  linear_rows(x, w, &b, y32);
  const int saved = num_threads();
  set_num_threads(1);
  linear_rows_int8(x, w, &b, y8_one);
  set_num_threads(saved);
  ASSERT_EQ(y8.shape(), y32.shape());
  double err = 0, ref = 0;
  for (int64_t i = 0; i < y8.numel(); ++i) {
    err += (y8[i] - y32[i]) * (y8[i] - y32[i]);
    ref += y32[i] * y32[i];
    ASSERT_EQ(y8[i], y8_one[i]) << "element " << i << " differs between thread counts";
  }
  EXPECT_LT(std::sqrt(err / ref), 1.5e-2);
}

// ALBERT's inputs have a channel ~15x above the others (core/linear_int8.cpp): quantised with the
// rest it would make every row's steps ~15x coarser. Here channel 5 is 40x the others: the product stays within
// the same 8-bit error as without it, because that channel is multiplied apart.
TEST(Int8, AnOutlierChannelIsMultipliedApart) {
  REQUIRE_INT8();
  const int64_t T = 64, in = 256, out = 128;
  auto xv = randn(static_cast<size_t>(T * in), 41), wv = randn(static_cast<size_t>(out * in), 42, 0.05f);
  for (int64_t t = 0; t < T; ++t) xv[t * in + 5] *= 40.0f;
  Tensor x({T, in});
  std::copy(xv.begin(), xv.end(), x.data());
  const TensorView w{wv.data(), {out, in}};
  Int8Rows xq;
  quantize_for_linear_int8(x, xq);
  ASSERT_EQ(xq.outliers, std::vector<int64_t>{5});
  Tensor y8, y32;
  linear_rows_int8(x, xq, w, nullptr, y8);
  linear_rows(x, w, nullptr, y32);
  double err = 0, ref = 0;
  for (int64_t i = 0; i < y8.numel(); ++i) {
    err += (y8[i] - y32[i]) * (y8[i] - y32[i]);
    ref += y32[i] * y32[i];
  }
  EXPECT_LT(std::sqrt(err / ref), 1.5e-2);
  // The same input with its outlier in the 8-bit product: the error that the separate product avoids.
  Int8Rows plain;
  quantize_rows_u8(x.data(), in, T, in, plain.q);
  Tensor yp;
  linear_rows_int8(x, plain, w, nullptr, yp);
  double err_plain = 0;
  for (int64_t i = 0; i < yp.numel(); ++i) err_plain += (yp[i] - y32[i]) * (yp[i] - y32[i]);
  std::printf("relative rms error with the outlier apart %.2e, in the 8-bit product %.2e\n", std::sqrt(err / ref),
              std::sqrt(err_plain / ref));
  EXPECT_GT(err_plain, 4 * err);
}

// Zeroed channels (linear_rows_int8's outliers) are read around, not copied: the bytes, scales and offsets
// must be those of the row with zeros written in, wherever the channels are (first, last, adjacent, a whole
// row of them), and a list out of order is refused.
TEST(Int8, ZeroedChannelsQuantiseAsARowWithZerosWrittenIn) {
  REQUIRE_INT8();
  const int64_t rows = 5;
  for (int64_t K : {1, 15, 16, 17, 37, 768}) {
    std::vector<float> x = randn(static_cast<size_t>(rows * K), 50 + static_cast<unsigned>(K), 2.0f);
    for (float& v : x) v += 3.0f;  // every value above 0: a zero written in moves the row's minimum
    std::vector<std::vector<int64_t>> sets = {{0}, {K - 1}};
    if (K > 1) sets.push_back({0, K - 1});
    if (K >= 17) sets.push_back({3, 4, 5, 15, 16});
    std::vector<int64_t> all(static_cast<size_t>(K));
    std::iota(all.begin(), all.end(), 0);
    if (K <= 16) sets.push_back(all);
    for (const std::vector<int64_t>& zeroed : sets) {
      for (int64_t r = 0; r < rows; ++r) x[r * K + zeroed.back()] += 100.0f;  // an outlier that must not count
      std::vector<float> copy = x;
      for (int64_t r = 0; r < rows; ++r)
        for (int64_t z : zeroed) copy[r * K + z] = 0.0f;
      RowsU8 around, written;
      quantize_rows_u8(x.data(), K, rows, K, around, zeroed.data(), static_cast<int64_t>(zeroed.size()));
      quantize_rows_u8(copy.data(), K, rows, K, written);
      EXPECT_EQ(around.q, written.q) << "K " << K << ", " << zeroed.size() << " zeroed";
      EXPECT_EQ(around.scale, written.scale) << "K " << K;
      EXPECT_EQ(around.offset, written.offset) << "K " << K;
    }
  }
  const std::vector<float> x(32, 1.0f);
  RowsU8 q;
  const std::vector<int64_t> unordered = {5, 2}, repeated = {2, 2}, outside = {32};
  EXPECT_THROW(quantize_rows_u8(x.data(), 32, 1, 32, q, unordered.data(), 2), Error);
  EXPECT_THROW(quantize_rows_u8(x.data(), 32, 1, 32, q, repeated.data(), 2), Error);
  EXPECT_THROW(quantize_rows_u8(x.data(), 32, 1, 32, q, outside.data(), 1), Error);
}

// The outlier scan runs over ranges of rows in parallel: an outlier in any range, the last row's included,
// is found, and the same channels on one thread.
TEST(Int8, OutliersAreFoundInEveryRangeOfRows) {
  REQUIRE_INT8();
  const int64_t T = 301, in = 768;
  auto xv = randn(static_cast<size_t>(T * in), 61);
  xv[0 * in + 700] = 40.0f;
  xv[150 * in + 3] = -35.0f;
  xv[(T - 1) * in + 511] = 30.0f;
  Tensor x({T, in});
  std::copy(xv.begin(), xv.end(), x.data());
  Int8Rows xq, one;
  quantize_for_linear_int8(x, xq);
  EXPECT_EQ(xq.outliers, (std::vector<int64_t>{3, 511, 700}));
  const int saved = num_threads();
  set_num_threads(1);
  quantize_for_linear_int8(x, one);
  set_num_threads(saved);
  EXPECT_EQ(one.outliers, xq.outliers);
  EXPECT_EQ(one.q.q, xq.q.q);
}

TEST(Int8, PrecisionHasItsNameAndIsRefusedWhereItCannotRun) {
  EXPECT_EQ(parse_precision("int8", "--precision"), Precision::int8);
  EXPECT_STREQ(precision_name(Precision::int8), "int8");
  if (int8_precision_supported()) {
    EXPECT_NO_THROW(set_precision(Precision::int8));
    EXPECT_EQ(precision(), Precision::int8);
  } else {
    EXPECT_THROW(set_precision(Precision::int8), Error);
  }
  set_precision(Precision::fp32);
}

// The acoustic model's BiLSTMs in int8 (core/lstm.h): input projections and recurrent products in 8 bits, the
// gates in fp32. At the prosody predictor's shape over 120 steps the hidden states (in (-1, 1)) stay within
// 8-bit error of the fp32 recurrence even as the steps' rounding errors feed back; the same with the input
// given as repeated rows (the shared LSTM's alignment); and the 8-bit path did run (it differs from bf16).
TEST(Int8, LstmWithinEightBitErrorOfFp32AtProsodyShape) {
  REQUIRE_INT8();
  const Precision saved = precision();
  const int64_t in = 640, H = 256, T = 120;
  const auto wih = randn(static_cast<size_t>(4 * H * in), 41, 0.05f), whh = randn(static_cast<size_t>(4 * H * H), 42, 0.05f);
  const auto bih = randn(static_cast<size_t>(4 * H), 43, 0.1f), bhh = randn(static_cast<size_t>(4 * H), 44, 0.1f);
  const LstmWeights lw{{wih.data(), {4 * H, in}}, {whh.data(), {4 * H, H}}, {bih.data(), {4 * H}}, {bhh.data(), {4 * H}}};
  Tensor x({T, in});
  const auto xd = randn(static_cast<size_t>(T * in), 45);
  std::copy(xd.begin(), xd.end(), x.data());
  Tensor y32, y16, y8;
  set_precision(Precision::fp32);
  bilstm(x, lw, lw, y32);
  set_precision(Precision::bf16);
  bilstm(x, lw, lw, y16);
  set_precision(Precision::int8);
  bilstm(x, lw, lw, y8);
  // Rows repeated 1-3 times: the same values as over the expanded rows.
  std::vector<int64_t> repeats(static_cast<size_t>(T));
  for (int64_t t = 0; t < T; ++t) repeats[static_cast<size_t>(t)] = 1 + t % 3;
  Tensor xe({std::accumulate(repeats.begin(), repeats.end(), int64_t{0}), in}), y8_rep, y8_exp;
  for (int64_t t = 0, r = 0; t < T; ++t)
    for (int64_t i = 0; i < repeats[static_cast<size_t>(t)]; ++i, ++r) std::copy_n(x.data() + t * in, in, xe.data() + r * in);
  bilstm(x, lw, lw, y8_rep, &repeats);
  bilstm(xe, lw, lw, y8_exp);
  set_precision(saved);
  ASSERT_EQ(y8.shape(), y32.shape());
  double worst = 0, worst16 = 0, vs_bf16 = 0;
  for (int64_t i = 0; i < y32.numel(); ++i) {
    worst = std::max(worst, double(std::abs(y8[i] - y32[i])));
    worst16 = std::max(worst16, double(std::abs(y16[i] - y32[i])));
    vs_bf16 = std::max(vs_bf16, double(std::abs(y8[i] - y16[i])));
  }
  std::printf("bilstm int8: max |d| vs fp32 %.2e (bf16: %.2e)\n", worst, worst16);
  EXPECT_LT(worst, 4e-2);
  EXPECT_GT(vs_bf16, 1e-6) << "identical to bf16: the 8-bit path did not run";
  ASSERT_EQ(y8_rep.shape(), y8_exp.shape());
  for (int64_t i = 0; i < y8_rep.numel(); ++i) ASSERT_EQ(y8_rep[i], y8_exp[i]) << "element " << i;
}
