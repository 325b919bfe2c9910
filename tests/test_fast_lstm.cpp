// The parallel, vectorised bilstm against the first implementation (scalar gates, directions in turn) and a
// double-precision recurrence, at the prosody predictor's shape, with 1 and 2 threads.
#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <vector>

#include "core/kernels.h"
#include "core/parallel.h"
#include "core/precision.h"

using namespace kokoro;

namespace {

struct Lstm {
  int64_t in, H;
  std::vector<float> wih, whh, bih, bhh;
  LstmWeights view() const {
    return {{wih.data(), {4 * H, in}}, {whh.data(), {4 * H, H}}, {bih.data(), {4 * H}}, {bhh.data(), {4 * H}}};
  }
  Lstm(int64_t in_, int64_t H_, unsigned seed) : in(in_), H(H_), wih(4 * H_ * in_), whh(4 * H_ * H_), bih(4 * H_), bhh(4 * H_) {
    std::mt19937 rng(seed);
    std::normal_distribution<float> n(0, 0.15f);
    for (auto* v : {&wih, &whh, &bih, &bhh})
      for (auto& e : *v) e = n(rng);
  }
};

// One direction in double: returns h for every step (in the order of t).
std::vector<double> reference(const Tensor& x, const Lstm& l, bool reverse) {
  const int64_t T = x.dim(0), H = l.H, in = l.in;
  std::vector<double> h(H, 0), c(H, 0), out(T * H), g(4 * H);
  for (int64_t s = 0; s < T; ++s) {
    const int64_t t = reverse ? T - 1 - s : s;
    for (int64_t r = 0; r < 4 * H; ++r) {
      double v = double(l.bih[r]) + l.bhh[r];
      for (int64_t k = 0; k < in; ++k) v += double(l.wih[r * in + k]) * x[t * in + k];
      for (int64_t k = 0; k < H; ++k) v += double(l.whh[r * H + k]) * h[k];
      g[r] = v;
    }
    auto sig = [](double v) { return 1 / (1 + std::exp(-v)); };
    for (int64_t u = 0; u < H; ++u) {
      c[u] = sig(g[H + u]) * c[u] + sig(g[u]) * std::tanh(g[2 * H + u]);
      h[u] = sig(g[3 * H + u]) * std::tanh(c[u]);
      out[t * H + u] = h[u];
    }
  }
  return out;
}

// x [T, in] of standard normal values.
Tensor normal_input(int64_t T, int64_t in, std::mt19937& rng) {
  Tensor x({T, in});
  std::normal_distribution<float> n(0, 1);
  for (int64_t i = 0; i < x.numel(); ++i) x[i] = n(rng);
  return x;
}

class FastLstm : public ::testing::TestWithParam<int> {};

TEST_P(FastLstm, MatchesDoubleAndBaseline) {
  set_num_threads(GetParam());
  const int64_t in = 640, H = 256, T = 37;
  const Lstm f(in, H, 1), b(in, H, 2);
  std::mt19937 rng(3);
  const Tensor x = normal_input(T, in, rng);
  Tensor y, base;
  bilstm(x, f.view(), b.view(), y);
  bilstm_baseline(x, f.view(), b.view(), base);
  ASSERT_EQ(y.shape(), (Shape{T, 2 * H}));
  const std::vector<double> rf = reference(x, f, false), rb = reference(x, b, true);
  double worst = 0, worst_base = 0;
  for (int64_t t = 0; t < T; ++t)
    for (int64_t u = 0; u < H; ++u) {
      worst = std::max({worst, std::abs(y[t * 2 * H + u] - rf[t * H + u]), std::abs(y[t * 2 * H + H + u] - rb[t * H + u])});
      worst_base = std::max(worst_base, double(std::abs(y[t * 2 * H + u] - base[t * 2 * H + u])));
    }
  std::printf("bilstm %d thread(s): max |d| vs double %.2e, vs baseline %.2e\n", GetParam(), worst, worst_base);
  EXPECT_LE(worst, 1e-5);  // h is in (-1, 1); fp32 sums of ~900 products
  // The input projections are oneDNN's GEMM here and Eigen's in the baseline: same fp32 math, another
  // summation order (measured 2.3e-6). Accuracy itself is the bound against double above.
  EXPECT_LE(worst_base, 1e-5);
}

INSTANTIATE_TEST_SUITE_P(Threads, FastLstm, ::testing::Values(1, 2));

// Repeated rows (the shared LSTM over frames, its input the tokens' rows repeated by durations): the input
// projections computed per distinct row give the values of the input expanded, bit for bit, in fp32 (oneDNN)
// and in bf16, with 1 and 2 threads; a row repeated 0 times is skipped.
TEST_P(FastLstm, RepeatedRowsEqualTheExpandedInput) {
  set_num_threads(GetParam());
  const int64_t in = 640, H = 256, rows = 29;
  const Lstm f(in, H, 4), b(in, H, 5);
  std::mt19937 rng(6);
  const Tensor x = normal_input(rows, in, rng);
  std::vector<int64_t> repeats(rows);
  for (int64_t r = 0; r < rows; ++r) repeats[r] = r == 7 ? 0 : 1 + static_cast<int64_t>(rng() % 9);
  std::vector<float> expanded;
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t k = 0; k < repeats[r]; ++k) expanded.insert(expanded.end(), x.data() + r * in, x.data() + (r + 1) * in);
  const int64_t T = static_cast<int64_t>(expanded.size()) / in;
  Tensor xe({T, in});
  std::copy(expanded.begin(), expanded.end(), xe.data());
  std::vector<Precision> precisions{Precision::fp32};
  if (bf16_supported()) precisions.push_back(Precision::bf16);
  else std::printf("this CPU has no AVX512-BF16: the repeated rows are checked in fp32 only\n");
  for (Precision p : precisions) {
    const ScopedKernelPrecision scoped(p);
    Tensor y, ye;
    bilstm(x, f.view(), b.view(), y, &repeats);
    bilstm(xe, f.view(), b.view(), ye);
    ASSERT_EQ(y.shape(), ye.shape());
    int64_t differ = 0;
    for (int64_t i = 0; i < y.numel(); ++i) differ += y[i] != ye[i];
    EXPECT_EQ(differ, 0) << "precision " << static_cast<int>(p) << ": " << differ << " of " << y.numel() << " values differ";
  }
  std::vector<int64_t> wrong(rows - 1, 1);
  Tensor y;
  EXPECT_THROW(bilstm(x, f.view(), b.view(), y, &wrong), std::exception);
}

TEST(FastLstm, RejectsMismatchedInput) {
  const Lstm f(8, 4, 1);
  Tensor x({3, 9}), y;
  EXPECT_THROW(bilstm(x, f.view(), f.view(), y), std::exception);
}

}  // namespace
