#include "vocoder/stft.h"

#include <fftw3.h>

#include <array>
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
  analyze(x, 0, length, length, 0, frames, magnitude.data(), phase.data(), frames);
}

void Stft::analyze(const float* buf, int64_t buf_first, int64_t buf_len, int64_t length, int64_t f_begin,
                   int64_t f_end, float* magnitude, float* phase, int64_t ld) const {
  const int64_t pad = n_fft_ / 2, K = bins();
  std::vector<float> frame(n_fft_);
  std::vector<fftwf_complex> spec(K);
  for (int64_t f = f_begin; f < f_end; ++f) {
    for (int j = 0; j < n_fft_; ++j) {
      int64_t s = f * hop_ + j - pad;  // index into x with reflection at both ends (no edge repeat)
      if (s < 0) s = -s;
      if (length >= 0 && s >= length) s = 2 * (length - 1) - s;
      if (s < buf_first || s >= buf_first + buf_len)
        throw Error("stft: frame " + std::to_string(f) + " needs sample " + std::to_string(s) + ", not buffered");
      frame[j] = buf[s - buf_first] * window_[j];
    }
    fftwf_execute_dft_r2c(plans_->r2c, frame.data(), spec.data());
    const int64_t col = f - f_begin;
    for (int64_t k = 0; k < K; ++k) {
      const float re = spec[k][0];
      // The DC and Nyquist bins of a real signal are real. torch's imaginary part there is +0, so their
      // phase is 0 or +pi, never -pi: force +0 rather than trust the FFT's sign of zero.
      const float im = (k == 0 || k == K - 1) ? 0.0f : spec[k][1];
      magnitude[k * ld + col] = std::sqrt(re * re + im * im);
      phase[k * ld + col] = std::atan2(im, re);
    }
  }
}

void Stft::synthesize_frame(const float* magnitude, const float* phase, int64_t stride, float* out) const {
  const int64_t K = bins();
  std::array<fftwf_complex, 64> small;  // n_fft <= 126 without allocating (Kokoro: 20)
  std::vector<fftwf_complex> large(K > 64 ? K : 0);
  fftwf_complex* spec = K > 64 ? large.data() : small.data();
  for (int64_t k = 0; k < K; ++k) {
    const float m = magnitude[k * stride], p = phase[k * stride];
    spec[k][0] = m * std::cos(p);
    spec[k][1] = m * std::sin(p);
  }
  fftwf_execute_dft_c2r(plans_->c2r, spec, out);
  const float inv_n = 1.0f / static_cast<float>(n_fft_);  // irfft "backward" normalisation
  for (int j = 0; j < n_fft_; ++j) out[j] = out[j] * inv_n * window_[j];
}

void Stft::inverse(const Tensor& magnitude, const Tensor& phase, Tensor& y) const {
  const int64_t K = bins();
  if (magnitude.rank() != 2 || magnitude.dim(0) != K || magnitude.shape() != phase.shape())
    throw Error("istft: magnitude " + shape_to_string(magnitude.shape()) + " and phase " +
                shape_to_string(phase.shape()) + " must both be [" + std::to_string(K) + ", frames]");
  const int64_t frames = magnitude.dim(1);
  if (frames < 1) throw Error("istft: no frames");
  if (hop_ * (frames - 1) < 1) throw Error("istft: " + std::to_string(frames) + " frames give no samples");
  IstftStream stream(*this);
  stream.begin();
  stream.push(magnitude, phase, true, y);
}

void StftStream::begin() {
  buf_.clear();
  buf_first_ = received_ = next_frame_ = 0;
}

void StftStream::push(const float* x, int64_t n, bool last, Tensor& out) {
  const int64_t pad = stft_.n_fft() / 2, hop = stft_.hop(), K = stft_.bins();
  buf_.insert(buf_.end(), x, x + n);
  received_ += n;
  if (last && received_ <= pad)
    throw Error("stft: signal of " + std::to_string(received_) + " samples is too short for reflect padding of " +
                std::to_string(pad));
  // Frame f needs samples up to f*hop + n_fft-1-pad; with the end known, every frame up to length/hop.
  int64_t end = last ? received_ / hop + 1 : 0;
  if (!last) {
    const int64_t reach = stft_.n_fft() - 1 - pad;
    end = received_ - 1 - reach >= 0 ? (received_ - 1 - reach) / hop + 1 : 0;
  }
  end = std::max(end, next_frame_);
  const int64_t m = end - next_frame_;
  out.resize({2 * K, m});
  if (m > 0)  // magnitude rows, then phase rows, straight into out
    stft_.analyze(buf_.data(), buf_first_, static_cast<int64_t>(buf_.size()), last ? received_ : -1, next_frame_, end,
                  out.data(), out.data() + K * m, m);
  next_frame_ = end;
  // Keep what later frames can read: from their first sample, minus pad more for the end reflection.
  const int64_t keep_from = std::max<int64_t>(0, next_frame_ * hop - 2 * pad);
  if (keep_from > buf_first_) {
    buf_.erase(buf_.begin(), buf_.begin() + (keep_from - buf_first_));
    buf_first_ = keep_from;
  }
}

void IstftStream::begin() {
  sum_.clear();
  envelope_.clear();
  base_ = frames_ = emitted_ = 0;
  ended_ = false;
}

void IstftStream::push(const Tensor& magnitude, const Tensor& phase, bool last, Tensor& y) {
  const int64_t K = stft_.bins(), n_fft = stft_.n_fft(), hop = stft_.hop(), pad = n_fft / 2;
  if (ended_) throw Error("istft: push after the end of the segment (call begin first)");
  if (magnitude.rank() != 2 || magnitude.dim(0) != K || magnitude.shape() != phase.shape())
    throw Error("istft: magnitude " + shape_to_string(magnitude.shape()) + " and phase " +
                shape_to_string(phase.shape()) + " must both be [" + std::to_string(K) + ", frames]");
  const int64_t n = magnitude.dim(1);
  frame_.resize(n_fft);
  // Padded position p of the overlap-add lives at sum_[p - base_].
  const int64_t need = (frames_ + n - 1) * hop + n_fft - base_;
  if (n > 0 && need > static_cast<int64_t>(sum_.size())) {
    sum_.resize(need, 0.0f);
    envelope_.resize(need, 0.0f);
  }
  const std::vector<float>& window = stft_.window();
  for (int64_t i = 0; i < n; ++i) {
    stft_.synthesize_frame(magnitude.data() + i, phase.data() + i, n, frame_.data());
    float* o = sum_.data() + (frames_ + i) * hop - base_;
    float* e = envelope_.data() + (frames_ + i) * hop - base_;
    for (int j = 0; j < n_fft; ++j) {
      o[j] += frame_[j];
      e[j] += window[j] * window[j];
    }
  }
  frames_ += n;
  if (last && frames_ < 1) throw Error("istft: no frames");
  // Output sample t sits at padded position t + pad; it is final once no later frame can overlap it, i.e.
  // below frames_ * hop; at the end, the output stops at hop * (frames - 1) (torch.istft, length None).
  const int64_t end = last ? hop * (frames_ - 1) : std::max<int64_t>(0, frames_ * hop - pad);
  const int64_t count = std::max<int64_t>(0, end - emitted_);
  y.resize({count});
  for (int64_t t = emitted_; t < emitted_ + count; ++t) {
    const int64_t p = t + pad - base_;
    const float env = envelope_[p];
    if (std::abs(env) < 1e-11f) throw Error("istft: window overlap-add is zero (NOLA violated)");
    y.data()[t - emitted_] = sum_[p] / env;
  }
  emitted_ += count;
  // Drop the positions already emitted, but none a later frame will still add to (from frames_ * hop on).
  const int64_t drop = std::min(emitted_ + pad, frames_ * hop) - base_;
  if (drop > 0 && !last) {
    sum_.erase(sum_.begin(), sum_.begin() + std::min<int64_t>(drop, sum_.size()));
    envelope_.erase(envelope_.begin(), envelope_.begin() + std::min<int64_t>(drop, envelope_.size()));
    base_ += drop;
  }
  if (last) ended_ = true;
}

}  // namespace kokoro
