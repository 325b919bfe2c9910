#include "bench/stream_metrics.h"

#include <fftw3.h>

#include <algorithm>
#include <cmath>
#include <complex>
#include <mutex>
#include <numbers>
#include <numeric>

namespace kokoro::bench {

namespace {

constexpr int kFft = 1024, kHop = 256, kBins = kFft / 2 + 1, kSampleRate = 24000;
constexpr int kMelBands = 80, kCepstra = 24;

// |rfft| of every frame (numpy.hanning window, frames that fit entirely).
std::vector<std::vector<double>> magnitudes(const std::vector<float>& x, size_t n) {
  static std::mutex planner;
  std::vector<double> window(kFft);
  std::vector<float> in(kFft);
  for (int i = 0; i < kFft; ++i) window[i] = 0.5 - 0.5 * std::cos(2.0 * std::numbers::pi * i / (kFft - 1));
  std::vector<fftwf_complex> out(kBins);
  fftwf_plan plan;
  {
    std::lock_guard<std::mutex> lock(planner);  // FFTW's planner is not thread-safe
    plan = fftwf_plan_dft_r2c_1d(kFft, in.data(), out.data(), FFTW_ESTIMATE);
  }
  std::vector<std::vector<double>> frames;
  for (size_t start = 0; start + kFft <= n; start += kHop) {
    for (int i = 0; i < kFft; ++i) in[i] = static_cast<float>(x[start + i] * window[i]);
    fftwf_execute(plan);
    std::vector<double> m(kBins);
    for (int k = 0; k < kBins; ++k) m[k] = std::hypot(double(out[k][0]), double(out[k][1]));
    frames.push_back(std::move(m));
  }
  {
    std::lock_guard<std::mutex> lock(planner);
    fftwf_destroy_plan(plan);
  }
  return frames;
}

double hz_to_mel(double f) { return 2595.0 * std::log10(1.0 + f / 700.0); }
double mel_to_hz(double m) { return 700.0 * (std::pow(10.0, m / 2595.0) - 1.0); }

// Triangular mel filterbank [bands][bins] over 0..Nyquist.
const std::vector<std::vector<double>>& mel_filters() {
  static const std::vector<std::vector<double>> filters = [] {
    std::vector<std::vector<double>> f(kMelBands, std::vector<double>(kBins, 0.0));
    const double top = hz_to_mel(kSampleRate / 2.0);
    std::vector<double> edges(kMelBands + 2);
    for (int i = 0; i < kMelBands + 2; ++i) edges[i] = mel_to_hz(top * i / (kMelBands + 1));
    for (int b = 0; b < kMelBands; ++b)
      for (int k = 0; k < kBins; ++k) {
        const double hz = static_cast<double>(k) * kSampleRate / kFft;
        const double lo = edges[b], mid = edges[b + 1], hi = edges[b + 2];
        if (hz > lo && hz < hi) f[b][k] = hz <= mid ? (hz - lo) / (mid - lo) : (hi - hz) / (hi - mid);
      }
    return f;
  }();
  return filters;
}

std::vector<double> mel_cepstrum(const std::vector<double>& mag) {
  const auto& filters = mel_filters();
  std::vector<double> logmel(kMelBands);
  for (int b = 0; b < kMelBands; ++b) {
    double e = 0;
    for (int k = 0; k < kBins; ++k) e += filters[b][k] * mag[k] * mag[k];
    logmel[b] = std::log(std::max(e, 1e-10));
  }
  std::vector<double> c(kCepstra + 1);
  for (int d = 0; d <= kCepstra; ++d) {
    double s = 0;
    for (int b = 0; b < kMelBands; ++b) s += logmel[b] * std::cos(std::numbers::pi * d * (b + 0.5) / kMelBands);
    c[d] = s * std::sqrt((d == 0 ? 1.0 : 2.0) / kMelBands);
  }
  return c;
}

}  // namespace

double log_spectral_distance_db(const std::vector<float>& a, const std::vector<float>& b) {
  const size_t n = std::min(a.size(), b.size());
  const auto fa = magnitudes(a, n), fb = magnitudes(b, n);
  if (fa.empty()) return 0;
  double total = 0;
  for (size_t f = 0; f < fa.size(); ++f) {
    double s = 0;
    for (int k = 0; k < kBins; ++k) {
      const double d = 20 * std::log10(fa[f][k] + 1e-5) - 20 * std::log10(fb[f][k] + 1e-5);
      s += d * d;
    }
    total += std::sqrt(s / kBins);
  }
  return total / fa.size();
}

double mel_cepstral_distortion_db(const std::vector<float>& a, const std::vector<float>& b) {
  const size_t n = std::min(a.size(), b.size());
  const auto fa = magnitudes(a, n), fb = magnitudes(b, n);
  if (fa.empty()) return 0;
  const double k = 10.0 / std::log(10.0);
  double total = 0;
  for (size_t f = 0; f < fa.size(); ++f) {
    const auto ca = mel_cepstrum(fa[f]), cb = mel_cepstrum(fb[f]);
    double s = 0;
    for (int d = 1; d <= kCepstra; ++d) s += (ca[d] - cb[d]) * (ca[d] - cb[d]);
    total += k * std::sqrt(2 * s);
  }
  return total / fa.size();
}

std::vector<double> energy_steps_db(const std::vector<float>& x, const std::vector<int64_t>& positions) {
  constexpr int64_t W = 120;
  const double floor_rms = 1e-3;  // -60 dBFS
  std::vector<double> steps;
  for (int64_t p : positions) {
    if (p < W || p + W > static_cast<int64_t>(x.size())) continue;
    double before = 0, after = 0;
    for (int64_t i = p - W; i < p; ++i) before += double(x[i]) * x[i];
    for (int64_t i = p; i < p + W; ++i) after += double(x[i]) * x[i];
    const double rb = std::max(std::sqrt(before / W), floor_rms), ra = std::max(std::sqrt(after / W), floor_rms);
    steps.push_back(std::fabs(20 * std::log10(ra / rb)));
  }
  return steps;
}

double percentile(std::vector<double> v, double p) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  const double pos = p / 100.0 * (v.size() - 1);
  const size_t i = static_cast<size_t>(pos);
  const double frac = pos - i;
  return i + 1 < v.size() ? v[i] * (1 - frac) + v[i + 1] * frac : v[i];
}

double mean(const std::vector<double>& v) {
  return v.empty() ? 0 : std::accumulate(v.begin(), v.end(), 0.0) / v.size();
}

}  // namespace kokoro::bench
