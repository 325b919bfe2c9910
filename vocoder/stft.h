// torch.stft / torch.istft as the generator uses them (TorchSTFT in istftnet.py): Hann window (periodic),
// win_length == n_fft, center=True. FFTW does the per-frame transforms.
//
// forward: reflect-pad n_fft/2 on both sides, frames every hop, window, real FFT -> n_fft/2+1 bins;
//          magnitude |X| and phase atan2(Im, Re). x [L] -> magnitude, phase [n_fft/2+1, L/hop + 1].
// inverse: X = magnitude * exp(i phase); per frame inverse real FFT (1/n_fft), window, overlap-add, divide
//          by the overlap-added squared window, drop n_fft/2 samples at both ends (torch.istft, length None).
//          [n_fft/2+1, n] -> [hop * (n - 1)].
//
// Streaming (StftStream, IstftStream): the same per-frame code on a signal that arrives in chunks. A
// forward frame f reads samples 5f-10 .. 5f+9 (n_fft 20, hop 5), so it waits for 9 samples past its centre
// (0.375 ms), and the end reflection waits for the end of the segment. An inverse output sample is final once
// every frame overlapping it has been added (the overlap-add tail of n_fft - hop samples is the state).
#pragma once
#include <memory>
#include <vector>

#include "core/tensor.h"

namespace kokoro {

class Stft {
 public:
  Stft(int n_fft, int hop);
  ~Stft();
  Stft(const Stft&) = delete;
  Stft& operator=(const Stft&) = delete;

  int n_fft() const { return n_fft_; }
  int hop() const { return hop_; }
  int bins() const { return n_fft_ / 2 + 1; }
  const std::vector<float>& window() const { return window_; }

  void forward(const float* x, int64_t length, Tensor& magnitude, Tensor& phase) const;
  void inverse(const Tensor& magnitude, const Tensor& phase, Tensor& y) const;

  // Frames [f_begin, f_end) of the STFT of a signal of `length` samples whose samples
  // [buf_first, buf_first + buf_len) are in buf; length < 0 means the end is not known yet (no frame may
  // then reach past the buffer). Frame f goes to column f - f_begin of magnitude/phase (row stride ld).
  void analyze(const float* buf, int64_t buf_first, int64_t buf_len, int64_t length, int64_t f_begin, int64_t f_end,
               float* magnitude, float* phase, int64_t ld) const;
  // One inverse frame: the windowed, 1/n_fft-scaled inverse real FFT of magnitude * exp(i phase) (bins read
  // with stride `stride`), i.e. what torch.istft overlap-adds for that frame. out has n_fft values.
  void synthesize_frame(const float* magnitude, const float* phase, int64_t stride, float* out) const;

 private:
  struct Plans;
  int n_fft_, hop_;
  std::vector<float> window_;
  std::unique_ptr<Plans> plans_;
};

// Streaming forward STFT: samples in, frames out (har-style [magnitude rows; phase rows]).
class StftStream {
 public:
  explicit StftStream(const Stft& stft) : stft_(stft) {}
  void begin();
  // Appends n samples and writes the frames that are now final as columns of out [2 * bins, frames].
  void push(const float* x, int64_t n, bool last, Tensor& out);

 private:
  const Stft& stft_;
  std::vector<float> buf_;    // samples [buf_first_, buf_first_ + buf_.size())
  int64_t buf_first_ = 0, received_ = 0, next_frame_ = 0;
};

// Streaming inverse STFT: frames [bins * 2 rows: magnitude then phase] in, samples out.
class IstftStream {
 public:
  explicit IstftStream(const Stft& stft) : stft_(stft) {}
  void begin();
  // Adds the frames of magnitude/phase [bins, n] (columns) and writes the samples that are now final.
  void push(const Tensor& magnitude, const Tensor& phase, bool last, Tensor& out);

 private:
  const Stft& stft_;
  std::vector<float> sum_, envelope_;  // overlap-add state for padded positions [base_, base_ + size)
  std::vector<float> frame_;
  int64_t base_ = 0, frames_ = 0, emitted_ = 0;
  bool ended_ = true;
};

// torch.hann_window(n, periodic=True) in float32, rounded as torch computes it.
std::vector<float> hann_window_periodic(int n);

}  // namespace kokoro
