// The fast convolution kernels against a double-precision direct convolution: Winograd (core/winograd.h)
// and the chunked parallel direct form, at the generator's kernel sizes and dilations, with "same" and
// other paddings, lengths that do not fill a tile, and 1 or 2 threads. The golden tests then check the
// whole vocoder on the real weights.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <random>
#include <thread>
#include <vector>

#include "core/kernels.h"
#include "core/onednn_matmul.h"
#include "core/parallel.h"
#include "core/precision.h"
#include "core/weight_cache.h"
#include "core/winograd.h"

using namespace kokoro;

namespace {

struct Case {
  int64_t ci, co, k, T;
  int dilation, padding;
};

struct Data {
  Tensor x;
  std::vector<float> w, b;
  TensorView wv, bv;
};

Data make(const Case& c, unsigned seed) {
  std::mt19937 rng(seed);
  std::normal_distribution<float> n(0.0f, 1.0f);
  Data d;
  d.x = Tensor({c.ci, c.T});
  for (int64_t i = 0; i < d.x.numel(); ++i) d.x[i] = n(rng);
  d.w.resize(c.co * c.ci * c.k);
  for (auto& v : d.w) v = n(rng) / std::sqrt(float(c.ci * c.k));
  d.b.resize(c.co);
  for (auto& v : d.b) v = n(rng);
  d.wv = TensorView{d.w.data(), {c.co, c.ci, c.k}};
  d.bv = TensorView{d.b.data(), {c.co}};
  return d;
}

// max |y - reference| / max |reference|, the reference in double.
double rel_error(const Case& c, const Data& d, const Tensor& y) {
  const int64_t t_out = c.T + 2 * c.padding - c.dilation * (c.k - 1);
  EXPECT_EQ(y.dim(0), c.co);
  EXPECT_EQ(y.dim(1), t_out);
  double worst = 0, scale = 0;
  for (int64_t o = 0; o < c.co; ++o)
    for (int64_t t = 0; t < t_out; ++t) {
      double s = d.b[o];
      for (int64_t i = 0; i < c.ci; ++i)
        for (int64_t j = 0; j < c.k; ++j) {
          const int64_t p = t + j * c.dilation - c.padding;
          if (p >= 0 && p < c.T) s += double(d.w[(o * c.ci + i) * c.k + j]) * d.x[i * c.T + p];
        }
      worst = std::max(worst, std::abs(s - y[o * t_out + t]));
      scale = std::max(scale, std::abs(s));
    }
  return worst / scale;
}

std::vector<Case> cases() {
  std::vector<Case> v;
  for (int64_t k : {3, 7, 11})
    for (int d : {1, 3, 5})
      for (int64_t T : {1, 37, 700}) {
        const int same = static_cast<int>((k * d - d) / 2);
        if (T + 2 * same - d * (k - 1) <= 0) continue;
        v.push_back({48, 40, k, T, d, same});
      }
  v.push_back({16, 24, 7, 300, 3, 0});    // no padding
  v.push_back({16, 24, 11, 300, 1, 7});   // more than "same"
  v.push_back({20, 8, 4, 129, 2, 3});     // k = 4, one group
  v.push_back({20, 8, 5, 129, 1, 2});     // k = 5 (text encoder size), two groups
  return v;
}

class FastConv : public ::testing::TestWithParam<int> {};

TEST_P(FastConv, WinogradMatchesDoublePrecisionDirect) {
  set_num_threads(GetParam());
  for (const Case& c : cases()) {
    const Data d = make(c, 7 + c.k * 100 + c.T);
    const WinogradTransform* t = winograd_for_kernel(c.k);
    ASSERT_NE(t, nullptr) << "k=" << c.k;
    Tensor y;
    conv1d_winograd(d.x, d.wv, &d.bv, c.padding, c.dilation, *t, y);
    const double e = rel_error(c, d, y);
    if (GetParam() == 1 && c.T == 700)
      std::printf("winograd k=%lld d=%d T=%lld: max rel %.2e\n", (long long)c.k, c.dilation, (long long)c.T, e);
    EXPECT_LE(e, 2e-6) << "k=" << c.k << " d=" << c.dilation << " T=" << c.T << " pad=" << c.padding;
  }
}

// The two GEMM forms of a convolution without a fast transform: Eigen's per-tap products (conv1d_direct) and
// one oneDNN matmul of a tap-major im2col (conv1d_onednn, what conv1d runs in fp32).
TEST_P(FastConv, DirectAndOnednnMatchDoublePrecisionDirect) {
  set_num_threads(GetParam());
  for (const bool onednn : {false, true})
    for (const Case& c : cases()) {
      const Data d = make(c, (onednn ? 13 : 11) + c.k * 100 + c.T);
      Tensor y;
      if (onednn) conv1d_onednn(d.x, d.wv, &d.bv, c.padding, c.dilation, y);
      else conv1d_direct(d.x, d.wv, &d.bv, c.padding, c.dilation, y);
      EXPECT_LE(rel_error(c, d, y), 1e-6) << (onednn ? "onednn" : "direct") << " k=" << c.k << " d=" << c.dilation
                                          << " T=" << c.T;
    }
}

TEST_P(FastConv, DispatchAgreesWithTheBaselineOnGeneratorShapes) {
  set_num_threads(GetParam());
  for (const Case& c : {Case{128, 128, 3, 1500, 5, 5}, Case{128, 128, 7, 1500, 5, 15}, Case{128, 128, 11, 1500, 5, 25},
                        Case{512, 512, 5, 490, 1, 2}, Case{512, 512, 3, 300, 1, 1}}) {
    const int64_t k = c.k;
    const Data d = make(c, 99 + k);
    Tensor fast, base;
    conv1d(d.x, d.wv, &d.bv, 1, c.padding, c.dilation, fast);
    conv1d_gemm_per_tap(d.x, d.wv, &d.bv, 1, c.padding, c.dilation, base);
    ASSERT_EQ(fast.shape(), base.shape());
    double worst = 0, scale = 0;
    for (int64_t i = 0; i < base.numel(); ++i) {
      worst = std::max(worst, double(std::abs(fast[i] - base[i])));
      scale = std::max(scale, double(std::abs(base[i])));
    }
    // Both are fp32 with errors of ~1e-6 of the output scale against double (tests above).
    std::printf("generator shape k=%lld d=5: fast vs baseline max rel %.2e\n", (long long)k, worst / scale);
    EXPECT_LE(worst / scale, 5e-6) << "k=" << k;
  }
}


// The threaded linear layers and transposed convolution (split over output features / channels) against
// double precision, at sizes above the threshold where they go parallel.
TEST_P(FastConv, LinearAndTransposedConvMatchDouble) {
  set_num_threads(GetParam());
  std::mt19937 rng(5);
  std::normal_distribution<float> n(0, 1);
  auto fill = [&](std::vector<float>& v) { for (auto& e : v) e = n(rng); };
  {  // linear_rows: x [T, in] W^T, linear_columns: W x [in, T]
    const int64_t T = 40, in = 768, out = 768;
    std::vector<float> w(out * in), b(out);
    fill(w);
    fill(b);
    Tensor xr({T, in}), xc({in, T}), yr, yc;
    for (int64_t i = 0; i < xr.numel(); ++i) xr[i] = n(rng);
    for (int64_t t = 0; t < T; ++t)
      for (int64_t i = 0; i < in; ++i) xc[i * T + t] = xr[t * in + i];
    const TensorView wv{w.data(), {out, in}}, bv{b.data(), {out}};
    linear_rows(xr, wv, &bv, yr);
    linear_columns(xc, wv, &bv, yc);
    double worst = 0;
    for (int64_t t = 0; t < T; ++t)
      for (int64_t o = 0; o < out; ++o) {
        double s = b[o];
        for (int64_t i = 0; i < in; ++i) s += double(w[o * in + i]) * xr[t * in + i];
        worst = std::max({worst, std::abs(s - yr[t * out + o]), std::abs(s - yc[o * T + t])});
      }
    EXPECT_LE(worst, 2e-4) << "linear";  // |y| ~ 30: ~1e-5 relative
  }
  {  // conv_transpose1d at the ups_1 shape (k 12, stride 6, padding 3), shortened
    const int64_t ci = 256, co = 128, k = 12, T = 60;
    const int stride = 6, pad = 3;
    std::vector<float> w(ci * co * k), b(co);
    fill(w);
    fill(b);
    Tensor x({ci, T}), y;
    for (int64_t i = 0; i < x.numel(); ++i) x[i] = n(rng);
    conv_transpose1d(x, TensorView{w.data(), {ci, co, k}}, nullptr, stride, pad, 0, y);
    Tensor yb;
    const TensorView bias{b.data(), {co}};
    conv_transpose1d(x, TensorView{w.data(), {ci, co, k}}, &bias, stride, pad, 0, yb);
    const int64_t t_out = (T - 1) * stride - 2 * pad + k;
    ASSERT_EQ(y.shape(), (Shape{co, t_out}));
    double worst = 0;
    for (int64_t o = 0; o < co; ++o)
      for (int64_t s = 0; s < t_out; ++s) {
        double acc = 0;
        for (int64_t i = 0; i < ci; ++i)
          for (int64_t j = 0; j < k; ++j) {
            const int64_t num = s + pad - j;
            if (num < 0 || num % stride) continue;
            const int64_t t = num / stride;
            if (t < T) acc += double(w[(i * co + o) * k + j]) * x[i * T + t];
          }
        worst = std::max({worst, std::abs(acc - y[o * t_out + s]), std::abs(acc + b[o] - yb[o * t_out + s])});
      }
    EXPECT_LE(worst, 2e-4) << "conv_transpose1d";
  }
}

INSTANTIATE_TEST_SUITE_P(Threads, FastConv, ::testing::Values(1, 2));

TEST(Winograd, TransformIsExactOnSmallIntegers) {
  // F(4, 4) on integer data: every product and sum is exactly representable up to the transform's
  // rounding of 1/2-based coefficients, so the result is within float rounding of the exact integer.
  const WinogradTransform& t = *winograd_for_kernel(7);
  ASSERT_EQ(t.alpha, t.m + t.r - 1);
  const float g[4] = {1, -2, 3, 1}, dd[7] = {2, 0, -1, 4, 1, 3, -2};
  for (int i = 0; i < t.m; ++i) {
    double y = 0;
    for (int p = 0; p < t.alpha; ++p) {
      double gg = 0, bd = 0;
      for (int j = 0; j < t.r; ++j) gg += t.G[p * t.r + j] * g[j];
      for (int s = 0; s < t.alpha; ++s) bd += t.BT[p * t.alpha + s] * dd[s];
      y += t.AT[i * t.alpha + p] * gg * bd;
    }
    double ref = 0;
    for (int j = 0; j < 4; ++j) ref += g[j] * dd[i + j];
    EXPECT_NEAR(y, ref, 1e-4) << "output " << i;
  }
}

// conv1d_in_place (the generator's resblocks): bit-identical to conv1d, in fp32 and (where the CPU has it)
// bf16, over inputs long enough for several groups of chunks and short enough for one, at the generator's
// kernels and dilations; shapes it cannot run in place go through a temporary with the same result.
TEST(Winograd, InPlaceEqualsOutOfPlaceBitForBit) {
  const Case cases[] = {{32, 32, 3, 20000, 1, 1}, {32, 32, 7, 9001, 3, 9}, {32, 32, 11, 12345, 5, 25},
                        {32, 32, 11, 300, 5, 25}, {48, 48, 3, 130, 1, 1}, {32, 32, 3, 60, 1, 1}};
  const int saved_threads = num_threads();
  std::vector<Precision> precisions = {Precision::fp32};
  if (bf16_supported()) precisions.push_back(Precision::bf16_all);
  for (const Precision p : precisions)
    for (const int threads : {1, 2}) {
      set_num_threads(threads);
      set_precision(p);
      for (const Case& c : cases) {
        const Data d = make(c, 7);
        Tensor y, z = d.x;
        conv1d(d.x, d.wv, &d.bv, 1, c.padding, c.dilation, y);
        conv1d_in_place(z, d.wv, &d.bv, c.padding, c.dilation);
        ASSERT_EQ(z.shape(), y.shape());
        int64_t differ = 0;
        for (int64_t i = 0; i < y.numel(); ++i) differ += y[i] != z[i];
        EXPECT_EQ(differ, 0) << precision_name(p) << ", " << threads << " thread(s), k " << c.k << " d " << c.dilation
                             << " T " << c.T;
      }
    }
  set_precision(Precision::fp32);
  set_num_threads(saved_threads);
}

// bf16: a convolution of a few tiles splits its products over the output channels on two threads, a longer
// one over chunks of tiles; one thread computes every tile in chunks. The same bits in all three: a streamed
// sentence's text encoder columns computed in windows of a few tiles must equal the whole's
// (acoustic/text_encoder.h).
TEST(Winograd, Bf16SumsDoNotDependOnHowTheWorkIsSplit) {
  if (!bf16_supported()) GTEST_SKIP() << "this CPU has no AVX512-BF16: the bf16 Winograd products cannot run here";
  const Case cases[] = {{512, 512, 5, 20, 1, 2},  {512, 512, 5, 37, 1, 2},  {256, 256, 7, 100, 3, 9},
                        {256, 256, 11, 120, 5, 25}, {256, 256, 3, 400, 1, 1}, {512, 512, 5, 363, 1, 2}};
  const int saved_threads = num_threads();
  set_precision(Precision::bf16_all);
  for (const Case& c : cases) {
    const Data d = make(c, 9);
    const WinogradTransform& tr = *winograd_for_kernel(c.k);
    Tensor one, two;
    set_num_threads(1);
    conv1d_winograd(d.x, d.wv, &d.bv, c.padding, c.dilation, tr, one);
    set_num_threads(2);
    conv1d_winograd(d.x, d.wv, &d.bv, c.padding, c.dilation, tr, two);
    ASSERT_EQ(one.shape(), two.shape());
    int64_t differ = 0;
    for (int64_t i = 0; i < one.numel(); ++i) differ += one[i] != two[i];
    EXPECT_EQ(differ, 0) << c.co << " channels, k " << c.k << " d " << c.dilation << " T " << c.T;
  }
  set_precision(Precision::fp32);
  set_num_threads(saved_threads);
}

// fp32 transforms a model's weights once (core/weight_cache.h), not on every call: the same output bit for bit,
// one cache entry per weight, and none for weights outside a registered region.
TEST(Winograd, Fp32WeightsTransformedOncePerRegionWithTheSameOutput) {
  const Precision saved = precision();
  set_precision(Precision::fp32);
  const Case c{48, 40, 7, 700, 3, 9};
  const Data d = make(c, 11);
  const WinogradTransform& tr = *winograd_for_kernel(c.k);
  const std::string kind = "winograd-f32 F(" + std::to_string(tr.m) + "," + std::to_string(tr.r) + ") " +
                           shape_to_string(d.wv.shape);
  int builds = 0;
  auto lookup = [&] {
    return cached_weights(d.w.data(), kind, [&] {
      ++builds;
      return PreparedBytes{};
    });
  };
  Tensor per_call, cached, again;
  conv1d_winograd(d.x, d.wv, &d.bv, c.padding, c.dilation, tr, per_call);  // outside a region: per call
  register_weight_region(d.w.data(), d.w.size() * sizeof(float));
  conv1d_winograd(d.x, d.wv, &d.bv, c.padding, c.dilation, tr, cached);
  conv1d_winograd(d.x, d.wv, &d.bv, c.padding, c.dilation, tr, again);
  const PreparedBytes entry = lookup();
  EXPECT_EQ(builds, 0) << "the first call cached the transformed weights";
  ASSERT_NE(entry.data, nullptr);
  EXPECT_EQ(entry.bytes, static_cast<size_t>(tr.alpha) * c.ci * c.co * ((c.k + tr.r - 1) / tr.r) * sizeof(float));
  unregister_weight_region(d.w.data());
  ASSERT_EQ(per_call.shape(), cached.shape());
  int64_t differ = 0;
  for (int64_t i = 0; i < per_call.numel(); ++i) differ += (per_call[i] != cached[i]) + (cached[i] != again[i]);
  EXPECT_EQ(differ, 0);
  set_precision(saved);
}

TEST(Winograd, RejectsMismatchedWeights) {
  Tensor x({4, 50});
  std::vector<float> w(3 * 5 * 7);
  EXPECT_THROW(conv1d_winograd(x, TensorView{w.data(), {3, 5, 7}}, nullptr, 3, 1, *winograd_for_kernel(7), x),
               std::exception);
}

}  // namespace

// onednn_warm_up runs on a loader's thread while the engine may already compute: it must be safe beside
// products (also under TSan, scripts/sanitize.sh) and leave their results as they are.
TEST(OnednnWarmUp, RunsBesideProductsAndLeavesThemUnchanged) {
  constexpr int64_t M = 24, K = 96, N = 80;
  std::mt19937 rng(5);
  std::uniform_real_distribution<float> u(-1.0f, 1.0f);
  std::vector<float> x(M * K), b(K * N), bias(N);
  for (float& v : x) v = u(rng);
  for (float& v : b) v = u(rng);
  for (float& v : bias) v = u(rng);
  std::vector<double> want(M * N);
  for (int64_t t = 0; t < M; ++t)
    for (int64_t c = 0; c < N; ++c) {
      double s = bias[c];
      for (int64_t k = 0; k < K; ++k) s += double(x[t * K + k]) * b[k * N + c];
      want[t * N + c] = s;
    }
  std::vector<float> first(M * N);
  std::vector<std::thread> warmers;
  for (int i = 0; i < 2; ++i) warmers.emplace_back([] { onednn_warm_up(); });
  onednn_matmul_f32(x.data(), M, K, b.data(), N, bias.data(), N, first.data(), N);
  for (auto& w : warmers) w.join();
  double worst = 0;
  for (int64_t i = 0; i < M * N; ++i) worst = std::max(worst, std::abs(first[i] - want[i]));
  EXPECT_LT(worst, 1e-4) << "the product beside the warm-up";
  onednn_warm_up();
  std::vector<float> again(M * N);
  onednn_matmul_f32(x.data(), M, K, b.data(), N, bias.data(), N, again.data(), N);
  EXPECT_EQ(first, again) << "the same product after the warm-up";
}
