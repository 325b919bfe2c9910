#include "vocoder/stft.h"

#include <fftw3.h>

#include <cmath>
#include <complex>
#include <mutex>
#include <numbers>
#include <vector>

#include "core/error.h"

namespace kokoro {

namespace {
// FFTW's planner is not thread-safe (execution is); every plan is made under this lock.
std::mutex& fftw_planner_mutex() {
  static std::mutex m;
  return m;
}
}  // namespace

std::vector<float> hann_window_periodic(int n) {
  // torch: arange(n + 1) * float(2 pi / n), cos, * -0.5, + 0.5, keep the first n; each step in float32.
  // The cosine is evaluated in double and rounded, which matches torch's float cos bit for bit here.
  const float step = static_cast<float>(2.0 * std::numbers::pi / n);
  std::vector<float> w(n);
  for (int i = 0; i < n; ++i) {
    const float arg = static_cast<float>(i) * step;
    w[i] = static_cast<float>(std::cos(static_cast<double>(arg))) * -0.5f + 0.5f;
  }
  return w;
}

struct Stft::Plans {
  fftwf_plan r2c = nullptr, c2r = nullptr;
};

Stft::Stft(int n_fft, int hop) : n_fft_(n_fft), hop_(hop), window_(hann_window_periodic(n_fft)), plans_(new Plans) {
  if (n_fft < 2 || n_fft % 2 || hop < 1 || hop > n_fft)
    throw Error("stft: unsupported n_fft " + std::to_string(n_fft) + " / hop " + std::to_string(hop));
  std::vector<float> re(n_fft);
  std::vector<fftwf_complex> spec(bins());
  std::lock_guard<std::mutex> lock(fftw_planner_mutex());
  // FFTW_UNALIGNED: the plans are executed later on other (stack/vector) buffers with fftwf_execute_dft_*.
  const unsigned flags = FFTW_ESTIMATE | FFTW_UNALIGNED;
  plans_->r2c = fftwf_plan_dft_r2c_1d(n_fft, re.data(), spec.data(), flags);
  plans_->c2r = fftwf_plan_dft_c2r_1d(n_fft, spec.data(), re.data(), flags | FFTW_DESTROY_INPUT);
  if (!plans_->r2c || !plans_->c2r) throw Error("stft: FFTW could not plan a transform of size " + std::to_string(n_fft));
}

Stft::~Stft() {
  std::lock_guard<std::mutex> lock(fftw_planner_mutex());
  if (plans_->r2c) fftwf_destroy_plan(plans_->r2c);
  if (plans_->c2r) fftwf_destroy_plan(plans_->c2r);
}

void Stft::forward(const float* x, int64_t length, Tensor& magnitude, Tensor& phase) const {
  const int64_t pad = n_fft_ / 2;
  if (length <= pad)
    throw Error("stft: signal of " + std::to_string(length) + " samples is too short for reflect padding of " +
                std::to_string(pad));
  const int64_t frames = length / hop_ + 1, K = bins();
  magnitude.resize({K, frames});
  phase.resize({K, frames});
  std::vector<float> frame(n_fft_);
  std::vector<fftwf_complex> spec(K);
  for (int64_t f = 0; f < frames; ++f) {
    for (int j = 0; j < n_fft_; ++j) {
      int64_t s = f * hop_ + j - pad;  // index into x with reflection at both ends (no edge repeat)
      if (s < 0) s = -s;
      if (s >= length) s = 2 * (length - 1) - s;
      frame[j] = x[s] * window_[j];
    }
    fftwf_execute_dft_r2c(plans_->r2c, frame.data(), spec.data());
    for (int64_t k = 0; k < K; ++k) {
      const float re = spec[k][0];
      // The DC and Nyquist bins of a real signal are real. torch's imaginary part there is +0, so their
      // phase is 0 or +pi, never -pi: force +0 rather than trust the FFT's sign of zero.
      const float im = (k == 0 || k == K - 1) ? 0.0f : spec[k][1];
      magnitude.data()[k * frames + f] = std::sqrt(re * re + im * im);
      phase.data()[k * frames + f] = std::atan2(im, re);
    }
  }
}

void Stft::inverse(const Tensor& magnitude, const Tensor& phase, Tensor& y) const {
  const int64_t K = bins();
  if (magnitude.rank() != 2 || magnitude.dim(0) != K || magnitude.shape() != phase.shape())
    throw Error("istft: magnitude " + shape_to_string(magnitude.shape()) + " and phase " +
                shape_to_string(phase.shape()) + " must both be [" + std::to_string(K) + ", frames]");
  const int64_t frames = magnitude.dim(1), pad = n_fft_ / 2;
  if (frames < 1) throw Error("istft: no frames");
  const int64_t full = n_fft_ + hop_ * (frames - 1), out_len = full - 2 * pad;
  if (out_len < 1) throw Error("istft: " + std::to_string(frames) + " frames give no samples");
  std::vector<float> sum(full, 0.0f), envelope(full, 0.0f), frame(n_fft_);
  std::vector<fftwf_complex> spec(K);
  const float inv_n = 1.0f / static_cast<float>(n_fft_);  // irfft "backward" normalisation
  for (int64_t f = 0; f < frames; ++f) {
    for (int64_t k = 0; k < K; ++k) {
      const float m = magnitude.data()[k * frames + f], p = phase.data()[k * frames + f];
      spec[k][0] = m * std::cos(p);
      spec[k][1] = m * std::sin(p);
    }
    fftwf_execute_dft_c2r(plans_->c2r, spec.data(), frame.data());
    float* o = sum.data() + f * hop_;
    float* e = envelope.data() + f * hop_;
    for (int j = 0; j < n_fft_; ++j) {
      o[j] += frame[j] * inv_n * window_[j];
      e[j] += window_[j] * window_[j];
    }
  }
  y.resize({out_len});
  for (int64_t t = 0; t < out_len; ++t) {
    const float env = envelope[pad + t];
    if (std::abs(env) < 1e-11f) throw Error("istft: window overlap-add is zero (NOLA violated)");
    y.data()[t] = sum[pad + t] / env;
  }
}

}  // namespace kokoro
