// Unit tests of the vocoder's pieces that need no real weights: the counter-based noise, torch's linear
// interpolation and Hann window, the (i)STFT, the Snake activation and the harmonic source's invariants.
// Reference values quoted here were printed by the reference tools (tools/reference/test_noise.py) or by
// torch 1.13.1 (the reference's torch), as noted at each one.
#include <gtest/gtest.h>

#include <cmath>
#include <complex>
#include <numbers>
#include <random>
#include <vector>

#include "core/error.h"
#include "core/kernel_family.h"
#include "core/model_file.h"
#include "core/parallel.h"
#include "tests/random_values.h"
#include "tests/test_util.h"
#include "vocoder/adain.h"
#include "vocoder/noise.h"
#include "vocoder/snake_resblock.h"
#include "vocoder/source.h"
#include "vocoder/stft.h"

using namespace kokoro;

namespace {

// float32 values must be equal bit for bit.
void expect_same_floats(const std::vector<float>& got, const std::vector<float>& want) {
  ASSERT_EQ(got.size(), want.size());
  for (size_t i = 0; i < got.size(); ++i) EXPECT_EQ(got[i], want[i]) << "index " << i;
}

TEST(VocoderNoise, MatchesTheReferenceToolsGenerator) {
  // `python tools/reference/test_noise.py` prints these.
  EXPECT_EQ(splitmix64(0), 0xE220A8397B1DCDAFull);
  TestNoise noise;
  std::vector<float> phases(9), normals(9);
  noise.sine_phases(phases.data());
  noise.sine_noise(0, 9, normals.data());
  expect_same_floats(phases, {0.7663017511367798f, 0.12603101134300232f, 0.700931191444397f, 0.6328762769699097f,
                              0.3862551748752594f, 0.317145437002182f, 0.08473870158195496f, 0.15550372004508972f,
                              0.5108909606933594f});
  expect_same_floats(normals, {0.049465544521808624f, 0.8293473720550537f, 0.3040807247161865f,
                               -1.1982711553573608f, -0.9682433009147644f, 0.5706157684326172f,
                               -0.47025230526924133f, 1.1193429231643677f, 0.3068811297416687f});
}

TEST(VocoderNoise, IsCounterBasedAndSeedable) {
  TestNoise a;
  std::vector<float> whole(40), part(15);
  a.sine_noise(0, 40, whole.data());
  a.sine_noise(25, 15, part.data());  // any chunk gives the same values as the whole draw
  for (int i = 0; i < 15; ++i) EXPECT_EQ(part[i], whole[25 + i]);

  SeededNoise s1(1234), s1b(1234), s2(99);
  std::vector<float> x(64), y(64), z(64);
  s1.sine_noise(0, 64, x.data());
  s1b.sine_noise(0, 64, y.data());
  s2.sine_noise(0, 64, z.data());
  EXPECT_EQ(x, y);
  EXPECT_NE(x, z);
  std::vector<float> t(64);
  a.sine_noise(0, 64, t.data());
  EXPECT_NE(x, t);
  // Standard normal: rough moments over many draws.
  std::vector<float> many(200000);
  s2.sine_noise(0, static_cast<int64_t>(many.size()), many.data());
  double mean = 0, sq = 0;
  for (float v : many) mean += v, sq += double(v) * v;
  mean /= many.size();
  EXPECT_NEAR(mean, 0.0, 0.01);
  EXPECT_NEAR(sq / many.size() - mean * mean, 1.0, 0.02);
}

// F.interpolate(x, scale_factor, mode="linear") with a tap table, then torch's fused a*w0 + b*w1.
std::vector<float> interpolate(const std::vector<float>& x, double scale_factor) {
  const int64_t out = static_cast<int64_t>(std::floor(double(x.size()) * scale_factor));
  const float scale = static_cast<float>(1.0 / scale_factor);
  std::vector<float> y(out);
  for (int64_t i = 0; i < out; ++i) {
    const LinearTap t = linear_interp_tap(scale, i, static_cast<int64_t>(x.size()));
    y[i] = std::fma(x[t.i0], t.w0, x[t.i1] * t.w1);
  }
  return y;
}

TEST(VocoderSource, LinearInterpolationMatchesTorchBitForBit) {
  // torch 1.13.1: F.interpolate(torch.tensor([[[0., 1., 4., 9.5]]]), scale_factor=3, mode='linear')
  expect_same_floats(interpolate({0.0f, 1.0f, 4.0f, 9.5f}, 3.0),
                     {0.0f, 1.4901161193847656e-08f, 0.3333333730697632f, 0.6666666865348816f, 1.0000001192092896f,
                      2.0f, 3.000000238418579f, 4.000000476837158f, 5.833333969116211f, 7.6666669845581055f, 9.5f,
                      9.5f});
  // F.interpolate(torch.arange(12.).pow(2)[None, None], scale_factor=1/3, mode='linear')
  std::vector<float> sq(12);
  for (int i = 0; i < 12; ++i) sq[i] = float(i * i);
  expect_same_floats(interpolate(sq, 1.0 / 3.0), {1.0f, 16.0f, 49.0f, 100.0f});
}

TEST(VocoderStft, HannWindowMatchesTorch) {
  // torch 1.13.1: torch.hann_window(20, periodic=True).tolist()
  expect_same_floats(hann_window_periodic(20),
                     {0.0f, 0.02447172999382019f, 0.09549149870872498f, 0.20610737800598145f, 0.34549152851104736f,
                      0.5f, 0.6545085310935974f, 0.7938926219940186f, 0.9045085310935974f, 0.9755282998085022f, 1.0f,
                      0.9755282402038574f, 0.9045084714889526f, 0.793892502784729f, 0.6545085310935974f, 0.5f,
                      0.3454914391040802f, 0.2061072587966919f, 0.09549137949943542f, 0.02447172999382019f});
}

TEST(VocoderStft, ForwardMatchesADirectDftWithReflectPadding) {
  const int n_fft = 20, hop = 5;
  Stft stft(n_fft, hop);
  std::mt19937 rng(7);
  std::uniform_real_distribution<float> u(-1, 1);
  const int64_t L = 123;
  std::vector<float> x(L);
  for (float& v : x) v = u(rng);
  Tensor mag, phase;
  stft.forward(x.data(), L, mag, phase);
  const int64_t frames = L / hop + 1;
  ASSERT_EQ(mag.shape(), (Shape{11, frames}));
  ASSERT_EQ(phase.shape(), (Shape{11, frames}));
  const std::vector<float> w = hann_window_periodic(n_fft);
  double worst = 0;
  for (int64_t f = 0; f < frames; ++f)
    for (int k = 0; k <= n_fft / 2; ++k) {
      std::complex<double> acc = 0;
      for (int j = 0; j < n_fft; ++j) {
        int64_t s = f * hop + j - n_fft / 2;  // torch.stft center=True, pad_mode="reflect"
        if (s < 0) s = -s;
        if (s >= L) s = 2 * (L - 1) - s;
        acc += double(x[s]) * w[j] * std::polar(1.0, -2 * std::numbers::pi * k * j / n_fft);
      }
      const std::complex<double> got = std::polar(double(mag[k * frames + f]), double(phase[k * frames + f]));
      worst = std::max(worst, std::abs(got - acc));
    }
  EXPECT_LT(worst, 1e-5);
}

TEST(VocoderStft, RealBinsHavePhaseZeroOrPlusPi) {
  // torch: bins 0 and n_fft/2 have imaginary part +0, so a negative real part gives +pi, never -pi.
  Stft stft(20, 5);
  const int64_t L = 100;
  std::vector<float> x(L);
  for (int64_t i = 0; i < L; ++i) x[i] = -0.5f + ((i % 2) ? 0.25f : -0.25f);  // negative DC, Nyquist
  Tensor mag, phase;
  stft.forward(x.data(), L, mag, phase);
  const int64_t frames = mag.dim(1);
  const float pi = std::atan2(0.0f, -1.0f);
  int nyquist_pi = 0;
  for (int64_t f = 0; f < frames; ++f) {
    EXPECT_EQ(phase[0 * frames + f], pi) << "DC, frame " << f;
    // The odd hop flips the Nyquist sign from frame to frame: 0 and +pi alternate, -pi never appears.
    const float p = phase[10 * frames + f];
    EXPECT_TRUE(p == 0.0f || p == pi) << "Nyquist, frame " << f << ": " << p;
    nyquist_pi += p == pi;
  }
  EXPECT_GT(nyquist_pi, 0);
}

TEST(VocoderStft, InverseOfForwardReconstructsTheSignal) {
  Stft stft(20, 5);
  std::mt19937 rng(3);
  std::normal_distribution<float> n(0, 0.3f);
  const int64_t L = 600 * 3;  // istft returns hop * (frames - 1) = L samples for L divisible by hop
  std::vector<float> x(L);
  for (float& v : x) v = n(rng);
  Tensor mag, phase, y;
  stft.forward(x.data(), L, mag, phase);
  stft.inverse(mag, phase, y);
  ASSERT_EQ(y.numel(), L);
  double worst = 0;
  for (int64_t i = 0; i < L; ++i) worst = std::max(worst, std::abs(double(y[i]) - x[i]));
  EXPECT_LT(worst, 1e-5);
}

TEST(VocoderStft, RejectsBadShapes) {
  Stft stft(20, 5);
  std::vector<float> tiny(10, 0.0f);
  Tensor mag, phase, y;
  EXPECT_THROW(stft.forward(tiny.data(), 10, mag, phase), Error);  // too short for reflect padding of 10
  EXPECT_THROW(stft.inverse(Tensor({10, 4}), Tensor({10, 4}), y), Error);
  EXPECT_THROW(stft.inverse(Tensor({11, 4}), Tensor({11, 5}), y), Error);
}

TEST(VocoderSnake, IsXPlusSinSquaredOverAlpha) {
  Tensor x({2, 3});
  const float vals[6] = {-1.5f, 0.0f, 2.0f, 0.25f, -3.0f, 7.0f};
  std::copy(vals, vals + 6, x.data());
  const float alpha[2] = {0.5f, 2.0f};
  snake(x, alpha);
  for (int c = 0; c < 2; ++c)
    for (int t = 0; t < 3; ++t) {
      const double v = vals[c * 3 + t], a = alpha[c];
      EXPECT_NEAR(x[c * 3 + t], v + std::pow(std::sin(a * v), 2) / a, 1e-6);
    }
}

// A model file holding only the source module's merge layer.
std::shared_ptr<const ModelFile> source_only_model(const test::TempDir& dir) {
  ModelWriter w(nlohmann::json::object());
  const float lw[9] = {0.3f, -0.2f, 0.1f, 0.05f, -0.4f, 0.25f, 0.0f, 0.15f, -0.1f}, lb[1] = {0.02f};
  w.add("decoder.generator.m_source.l_linear.weight", {1, 9}, lw);
  w.add("decoder.generator.m_source.l_linear.bias", {1}, lb);
  w.write(dir.file("source.kokoro"));
  return ModelFile::open(dir.file("source.kokoro"));
}

// AdaIN1d::affine projects the style in two halves of rows on the pool (every segment's begin runs it for each
// AdaIN of the decoder and generator): the same bits as one product over all rows on one thread, which is what
// it computed before, for the decoder's and generator's widths (2C = 2180, 2048, 1028, 512). The reference
// product runs in the loaded kernel family (family_gemm): this binary's own Eigen may use other instructions.
TEST(AdaIN, StyleProjectionSplitIsTheSameAsOneProduct) {
  test::TempDir dir;
  ModelWriter w(nlohmann::json::object());
  const std::vector<int64_t> widths{1090, 1024, 514, 256};
  std::vector<std::vector<float>> weights, biases;
  for (size_t i = 0; i < widths.size(); ++i) {
    weights.push_back(test::randn(static_cast<size_t>(2 * widths[i] * 128), 60 + i, 0.1f));
    biases.push_back(test::randn(static_cast<size_t>(2 * widths[i]), 70 + i));
    const std::string name = "adain" + std::to_string(i);
    w.add(name + ".fc.weight", {2 * widths[i], 128}, weights.back().data());
    w.add(name + ".fc.bias", {2 * widths[i]}, biases.back().data());
  }
  w.write(dir.file("adain.kokoro"));
  const auto model = ModelFile::open(dir.file("adain.kokoro"));
  const auto style = test::randn(128, 80);
  const int saved = num_threads();
  set_num_threads(2);
  for (size_t i = 0; i < widths.size(); ++i) {
    const int64_t C = widths[i];
    const AdaIN1d layer(*model, "adain" + std::to_string(i), C, 128);
    const AdaINAffine a = layer.affine(style.data());
    const RowMatrix W = Eigen::Map<const RowMatrix>(weights[i].data(), 2 * C, 128),
                    s = Eigen::Map<const RowMatrix>(style.data(), 128, 1);
    RowMatrix h;
    family_gemm(W, s, h);
    h += Eigen::Map<const RowMatrix>(biases[i].data(), 2 * C, 1);
    int64_t differ = 0;
    for (int64_t c = 0; c < C; ++c) differ += (a.gamma[c] != h(c, 0)) + (a.beta[c] != h(C + c, 0));
    EXPECT_EQ(differ, 0) << "2C = " << 2 * C;
  }
  set_num_threads(saved);
}

// A NoiseSource with fixed initial phases and TestNoise's additive noise.
class PhaseOverride : public NoiseSource {
 public:
  explicit PhaseOverride(float phase) : phase_(phase) {}
  void sine_phases(float* out9) override { std::fill(out9, out9 + 9, phase_); }
  void sine_noise(int64_t first, int64_t count, float* out) override { base_.sine_noise(first, count, out); }

 private:
  float phase_;
  TestNoise base_;
};

TEST(VocoderSource, InitialPhaseNeverReachesTheOutput) {
  // The reference adds rand_ini to sample 0 only, and its x1/300 linear downsample reads samples 300d+149
  // and 300d+150: the random initial phase is discarded. This documents that finding.
  test::TempDir dir;
  auto m = source_only_model(dir);
  HarmonicSource source(*m, 300);
  const std::vector<float> f0 = {0.0f, 120.0f, 180.5f, 240.0f, 5.0f, 210.0f};
  PhaseOverride p1(0.1f), p2(0.9f);
  Tensor a, b;
  source.forward(f0.data(), 6, p1, a);
  source.forward(f0.data(), 6, p2, b);
  ASSERT_EQ(a.numel(), 6 * 300);
  for (int64_t i = 0; i < a.numel(); ++i) ASSERT_EQ(a[i], b[i]) << i;
}

TEST(VocoderSource, UnvoicedFramesAreNoiseOnly) {
  // f0 <= 10 Hz is unvoiced: the excitation is tanh(l_linear(noise * 0.1/3)), independent of the sines.
  test::TempDir dir;
  auto m = source_only_model(dir);
  HarmonicSource source(*m, 300);
  const std::vector<float> f0 = {10.0f, 0.0f};
  TestNoise noise;
  Tensor e;
  source.forward(f0.data(), 2, noise, e);
  std::vector<float> z(600 * 9);
  TestNoise().sine_noise(0, 600 * 9, z.data());
  const float w[9] = {0.3f, -0.2f, 0.1f, 0.05f, -0.4f, 0.25f, 0.0f, 0.15f, -0.1f};
  for (int t = 0; t < 600; ++t) {
    float acc = 0;
    for (int h = 0; h < 9; ++h) acc += w[h] * ((0.1f / 3.0f) * z[t * 9 + h]);
    EXPECT_NEAR(e[t], std::tanh(acc + 0.02f), 1e-6) << t;
  }
}

TEST(VocoderSource, RejectsEmptyInput) {
  test::TempDir dir;
  auto m = source_only_model(dir);
  HarmonicSource source(*m, 300);
  TestNoise noise;
  Tensor e;
  EXPECT_THROW(source.forward(nullptr, 0, noise, e), Error);
}

}  // namespace
