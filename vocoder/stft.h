// torch.stft / torch.istft as the generator uses them (TorchSTFT in istftnet.py): Hann window (periodic),
// win_length == n_fft, center=True. FFTW does the per-frame transforms.
//
// forward: reflect-pad n_fft/2 on both sides, frames every hop, window, real FFT -> n_fft/2+1 bins;
//          magnitude |X| and phase atan2(Im, Re). x [L] -> magnitude, phase [n_fft/2+1, L/hop + 1].
// inverse: X = magnitude * exp(i phase); per frame inverse real FFT (1/n_fft), window, overlap-add, divide
//          by the overlap-added squared window, drop n_fft/2 samples at both ends (torch.istft, length None).
//          [n_fft/2+1, n] -> [hop * (n - 1)].
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

 private:
  struct Plans;
  int n_fft_, hop_;
  std::vector<float> window_;
  std::unique_ptr<Plans> plans_;
};

// torch.hann_window(n, periodic=True) in float32, rounded as torch computes it.
std::vector<float> hann_window_periodic(int n);

}  // namespace kokoro
