#include "vocoder/source.h"

#include <algorithm>
#include <cmath>
#include <numbers>
#include <vector>

#include "core/error.h"

namespace kokoro {

LinearTap linear_interp_tap(float scale, int64_t dst, int64_t in_size) {
  // torch 1.13 compute_source_index_and_lambda: the source index in double (acc_type of float on CPU) from
  // the float scale, truncated; lambdas stored as float.
  double src = static_cast<double>(scale) * (static_cast<double>(dst) + 0.5) - 0.5;
  if (src < 0) src = 0;
  LinearTap tap;
  tap.i0 = static_cast<int64_t>(src);
  tap.i1 = tap.i0 + (tap.i0 < in_size - 1 ? 1 : 0);
  tap.w1 = static_cast<float>(src - static_cast<double>(tap.i0));
  tap.w0 = 1.0f - tap.w1;
  return tap;
}

namespace {

// torch's interpolation step `t0 * w0 + t1 * w1`, which its AVX2 build contracts into one fused multiply-add.
inline float interp(float t0, float w0, float t1, float w1) { return std::fma(t0, w0, t1 * w1); }

// Python's `x % 1.0` on float32 (torch.remainder): fmod, shifted into [0, 1) for negative values.
inline float mod1(float x) {
  float m = std::fmod(x, 1.0f);
  if (m != 0 && m < 0) m += 1.0f;
  return m;
}

}  // namespace

HarmonicSource::HarmonicSource(const ModelFile& model, int upsample)
    : upsample_(upsample),
      linear_w_(model.get("decoder.generator.m_source.l_linear.weight", {1, kHarmonics})),
      linear_b_(model.get("decoder.generator.m_source.l_linear.bias", {1})) {}

void HarmonicSource::forward(const float* f0, int64_t frames, NoiseSource& noise, Tensor& excitation) const {
  constexpr int H = kHarmonics;
  if (frames < 1) throw Error("harmonic source: no F0 frames");
  if (upsample_ < 2) throw Error("harmonic source: upsample factor must be >= 2");
  const int64_t L = frames * upsample_;

  // rad_values at the audio rate are constant over each frame (nearest upsampling), except sample 0, which
  // also carries the random initial phase. Only the per-frame values and that one sample are stored.
  std::vector<float> rad(frames * H), rad_sample0(H), rand_ini(H);
  for (int64_t m = 0; m < frames; ++m)
    for (int h = 0; h < H; ++h) rad[m * H + h] = mod1(f0[m] * static_cast<float>(h + 1) / kSampleRate);
  noise.sine_phases(rand_ini.data());
  rand_ini[0] = 0.0f;
  for (int h = 0; h < H; ++h) rad_sample0[h] = rad[h] + rand_ini[h];
  auto rad_at = [&](int64_t t, int h) { return t == 0 ? rad_sample0[h] : rad[(t / upsample_) * H + h]; };

  // Down to the frame rate (scale_factor 1/300: kernel scale float(1 / (1/300)) = 300), then cumulative phase.
  const int64_t M = static_cast<int64_t>(static_cast<double>(L) * (1.0 / upsample_));
  if (M != frames)  // F.interpolate's floor(L * (1/upsample)); equal to frames for Kokoro's 300
    throw Error("harmonic source: upsample factor " + std::to_string(upsample_) + " loses a frame in the reference's rounding");
  const float down_scale = static_cast<float>(1.0 / (1.0 / upsample_));
  std::vector<float> phase(M * H);
  std::vector<double> cum(H, 0.0);  // torch.cumsum on CPU accumulates float32 in double
  const float two = 2.0f, pi = static_cast<float>(std::numbers::pi), up = static_cast<float>(upsample_);
  for (int64_t m = 0; m < M; ++m) {
    const LinearTap tap = linear_interp_tap(down_scale, m, L);
    for (int h = 0; h < H; ++h) {
      cum[h] += interp(rad_at(tap.i0, h), tap.w0, rad_at(tap.i1, h), tap.w1);
      // (cumsum * 2 * pi), then * upsample_scale, each rounded to float as in the reference.
      phase[m * H + h] = static_cast<float>(cum[h]) * two * pi * up;
    }
  }

  // Back to the audio rate (scale_factor 300: kernel scale float(1/300)), sines, voicing and noise, merge.
  const float up_scale = static_cast<float>(1.0 / upsample_);
  const float sine_amp = 0.1f, noise_std = 0.003f, unvoiced_amp = sine_amp / 3.0f;
  excitation.resize({L});
  float* out = excitation.data();
  const float* w = linear_w_.data;
  const float b = linear_b_.data[0];
  constexpr int64_t kBlock = 4096;  // noise is drawn per block of samples so memory stays O(block)
  std::vector<float> normals(kBlock * H);
  for (int64_t start = 0; start < L; start += kBlock) {
    const int64_t n = std::min(kBlock, L - start);
    noise.sine_noise(start * H, n * H, normals.data());
    for (int64_t t = start; t < start + n; ++t) {
      const LinearTap tap = linear_interp_tap(up_scale, t, M);
      const bool voiced = f0[t / upsample_] > 10.0f;  // voiced_threshod=10 in the Generator
      const float amp = voiced ? noise_std : unvoiced_amp;
      const float* z = normals.data() + (t - start) * H;
      float acc = 0.0f;
      for (int h = 0; h < H; ++h) {
        const float ph = interp(phase[tap.i0 * H + h], tap.w0, phase[tap.i1 * H + h], tap.w1);
        const float sine = std::sin(ph) * sine_amp;
        acc += w[h] * ((voiced ? sine : 0.0f) + amp * z[h]);  // sine_waves * uv + noise_amp * noise
      }
      out[t] = std::tanh(acc + b);
    }
  }
}

}  // namespace kokoro
