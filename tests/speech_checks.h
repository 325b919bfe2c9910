// Measures the audio tests apply to speech that reached a device or a plugin's output: how much of its energy
// lies in the speech band, its non-silent samples, its correlation with the engine's own output. Only FFTW
// and the standard library, so that any test binary can use them.
#pragma once
#include <fftw3.h>

#include <cmath>
#include <cstddef>
#include <vector>

namespace kokoro::test {

// Fraction of the signal's energy between lo_hz and hi_hz (Hann-windowed 4096-point frames).
inline double band_energy_fraction(const std::vector<float>& x, double rate, double lo_hz, double hi_hz) {
  constexpr int kN = 4096;
  std::vector<float> frame(kN);
  std::vector<fftwf_complex> spec(kN / 2 + 1);
  fftwf_plan plan = fftwf_plan_dft_r2c_1d(kN, frame.data(), spec.data(), FFTW_ESTIMATE);
  double in_band = 0, total = 0;
  for (std::size_t start = 0; start + kN <= x.size(); start += kN / 2) {
    for (int i = 0; i < kN; ++i) frame[i] = x[start + i] * static_cast<float>(0.5 - 0.5 * std::cos(2 * M_PI * i / kN));
    fftwf_execute(plan);
    for (int k = 1; k <= kN / 2; ++k) {
      const double p = double(spec[k][0]) * spec[k][0] + double(spec[k][1]) * spec[k][1];
      const double f = k * rate / kN;
      total += p;
      if (f >= lo_hz && f <= hi_hz) in_band += p;
    }
  }
  fftwf_destroy_plan(plan);
  return total > 0 ? in_band / total : 0.0;
}

// The samples that are not exactly zero: device sinks play exact zeros when they have nothing (between
// utterances and during an underrun), while the vocoder's output is never exactly zero for long.
inline std::vector<float> nonzero_samples(const float* x, std::size_t n) {
  std::vector<float> v;
  for (std::size_t i = 0; i < n; ++i)
    if (x[i] != 0.0f) v.push_back(x[i]);
  return v;
}

// Normalised correlation of two equally long stretches (1: identical up to scale).
inline double correlation(const float* a, const float* b, std::size_t n) {
  double ab = 0, aa = 0, bb = 0;
  for (std::size_t i = 0; i < n; ++i) {
    ab += double(a[i]) * b[i];
    aa += double(a[i]) * a[i];
    bb += double(b[i]) * b[i];
  }
  return aa > 0 && bb > 0 ? ab / std::sqrt(aa * bb) : 0.0;
}

}  // namespace kokoro::test
