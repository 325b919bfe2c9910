#include "vocoder/source.h"

#include <algorithm>
#include <cmath>
#include <numbers>
#include <vector>

#include "core/error.h"
#include "core/parallel.h"

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
  if (frames < 1) throw Error("harmonic source: no F0 frames");
  SineGenStream stream(*this);
  stream.begin(noise);
  stream.push(f0, frames, true, excitation);
}

SineGenStream::SineGenStream(const HarmonicSource& source) : src_(source) {
  if (src_.upsample_ < 2) throw Error("harmonic source: upsample factor must be >= 2");
}

void SineGenStream::begin(NoiseSource& noise) {
  constexpr int H = HarmonicSource::kHarmonics;
  noise_ = &noise;
  f0_.clear();
  rad_.clear();
  phase_.clear();
  cum_.assign(H, 0.0);  // torch.cumsum on CPU accumulates float32 in double
  rand_ini_.assign(H, 0.0f);
  noise.sine_phases(rand_ini_.data());
  rand_ini_[0] = 0.0f;
  next_sample_ = 0;
  ended_ = false;
}

void SineGenStream::push(const float* f0, int64_t frames, bool last, Tensor& out) {
  constexpr int H = HarmonicSource::kHarmonics;
  if (ended_) throw Error("harmonic source: push after the end of the segment (call begin first)");
  if (frames < 0 || (frames > 0 && !f0)) throw Error("harmonic source: bad F0 chunk");
  const int64_t up = src_.upsample_;
  const int64_t m0 = static_cast<int64_t>(f0_.size());
  f0_.insert(f0_.end(), f0, f0 + frames);
  const int64_t M = static_cast<int64_t>(f0_.size());
  if (last && M < 1) throw Error("harmonic source: no F0 frames");
  const int64_t L = M * up;  // samples of the frames received so far

  // rad_values at the audio rate are constant over each frame (nearest upsampling), except sample 0, which
  // also carries the random initial phase. Only the per-frame values and that one sample are needed.
  rad_.resize(M * H);
  for (int64_t m = m0; m < M; ++m)
    for (int h = 0; h < H; ++h) rad_[m * H + h] = mod1(f0_[m] * static_cast<float>(h + 1) / HarmonicSource::kSampleRate);
  auto rad_at = [&](int64_t t, int h) {
    return t == 0 ? rad_[h] + rand_ini_[h] : rad_[(t / up) * H + h];
  };

  // Down to the frame rate (scale_factor 1/300: kernel scale float(1 / (1/300)) = 300), then cumulative
  // phase. Frame m reads samples 300m+149 and 300m+150, both inside frame m, so it is final on arrival.
  if (last && static_cast<int64_t>(static_cast<double>(L) * (1.0 / up)) != M)  // F.interpolate's floor(L / up)
    throw Error("harmonic source: upsample factor " + std::to_string(up) + " loses a frame in the reference's rounding");
  const float down_scale = static_cast<float>(1.0 / (1.0 / up));
  const float two = 2.0f, pi = static_cast<float>(std::numbers::pi), upf = static_cast<float>(up);
  phase_.resize(M * H);
  for (int64_t m = m0; m < M; ++m) {
    const LinearTap tap = linear_interp_tap(down_scale, m, L);
    for (int h = 0; h < H; ++h) {
      cum_[h] += interp(rad_at(tap.i0, h), tap.w0, rad_at(tap.i1, h), tap.w1);
      // (cumsum * 2 * pi), then * upsample_scale, each rounded to float as in the reference.
      phase_[m * H + h] = static_cast<float>(cum_[h]) * two * pi * upf;
    }
  }

  // Back to the audio rate (scale_factor 300: kernel scale float(1/300)). A sample interpolating frames i0
  // and i0 + 1 waits for frame i0 + 1 unless the segment has ended (then the last frame is repeated).
  const float up_scale = static_cast<float>(1.0 / up);
  int64_t end = next_sample_;
  if (last) {
    end = L;
  } else {
    while (end < L && linear_interp_tap(up_scale, end, M).i0 + 1 < M) ++end;
  }
  out.resize({end - next_sample_});
  const float sine_amp = 0.1f, noise_std = 0.003f, unvoiced_amp = sine_amp / 3.0f;
  const float* w = src_.linear_w_.data;
  const float b = src_.linear_b_.data[0];
  // Noise is drawn per block of samples by absolute index (any chunking gives the same values), so blocks are
  // independent: they run in parallel (9 sines and 9 normals per sample, ~5 % of the vocoder's work).
  constexpr int64_t kBlock = 4096;
  const int64_t first = next_sample_, blocks = (end - first + kBlock - 1) / kBlock;
  parallel_for(blocks, [&](int64_t block) {
    const int64_t start = first + block * kBlock, n = std::min(kBlock, end - start);
    thread_local std::vector<float> task_normals;
    std::vector<float>& normals = blocks == 1 ? normals_ : task_normals;  // streaming: one block, kept
    if (normals.size() < static_cast<size_t>(kBlock * H)) normals.resize(kBlock * H);
    noise_->sine_noise(start * H, n * H, normals.data());
    float* dst = out.data() + (start - first);
    for (int64_t t = start; t < start + n; ++t) {
      const LinearTap tap = linear_interp_tap(up_scale, t, M);
      const bool voiced = f0_[t / up] > 10.0f;  // voiced_threshod=10 in the Generator
      const float amp = voiced ? noise_std : unvoiced_amp;
      const float* z = normals.data() + (t - start) * H;
      float acc = 0.0f;
      for (int h = 0; h < H; ++h) {
        const float ph = interp(phase_[tap.i0 * H + h], tap.w0, phase_[tap.i1 * H + h], tap.w1);
        const float sine = std::sin(ph) * sine_amp;
        acc += w[h] * ((voiced ? sine : 0.0f) + amp * z[h]);  // sine_waves * uv + noise_amp * noise
      }
      *dst++ = std::tanh(acc + b);
    }
  });
  next_sample_ = end;
  if (last) ended_ = true;
}

}  // namespace kokoro
