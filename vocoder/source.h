// The harmonic source of the generator: SineGen (9 harmonics of F0, voiced/unvoiced noise) followed by
// SourceModuleHnNSF's merge tanh(l_linear(.)) into one excitation signal, at the audio rate.
//
// Reference semantics kept exactly (istftnet.py, flag_for_pulse False):
//  - f0 frames are upsampled x300 (= upsample below) by nearest repetition; fn = f0 * h for h = 1..9;
//    rad = (fn / 24000) % 1 (Python modulo, non-negative); rand_ini (column 0 zeroed) is added to sample 0.
//  - rad is downsampled by F.interpolate(scale 1/300, linear, align_corners=False), cumsum'd (torch on CPU
//    accumulates float in double), times 2*pi, times 300, and upsampled back by F.interpolate(scale 300,
//    linear). Because the downsample reads samples 300d+149 and 300d+150, sample 0 is never read: the random
//    initial phase has no effect on the output. It is still drawn and added, as in the reference.
//  - sines = sin(phase) * 0.1; uv = f0 > 10; noise = (uv ? 0.003 : 0.1/3) * normal;
//    sine_waves = sines * uv + noise;  excitation = tanh(l_linear(sine_waves)).
// SourceModuleHnNSF's second noise draw (noise_source) is unused by the Generator and is not computed.
//
// Streaming: SineGenStream keeps the state between chunks of F0 frames (the cumulative phase in double, the
// per-frame phases and F0 values of the segment, the next sample to emit). A sample in the second half of
// frame m interpolates the phases of frames m and m+1, so it is emitted once frame m+1 has arrived (or the
// segment has ended): the source looks ahead by half a frame (150 samples, 6.25 ms). The offline forward()
// runs the same state over the whole segment in one push.
#pragma once
#include <vector>

#include "core/model_file.h"
#include "vocoder/noise.h"

namespace kokoro {

class SineGenStream;

class HarmonicSource {
 public:
  static constexpr int kHarmonics = 9;
  static constexpr float kSampleRate = 24000.0f;  // hard-coded in the reference's Generator too

  // upsample: audio samples per F0 value, prod(upsample_rates) * istft hop (300 for Kokoro).
  HarmonicSource(const ModelFile& model, int upsample);
  // f0 [M] frame values (the decoder's F0_curve) -> excitation [M * upsample].
  void forward(const float* f0, int64_t frames, NoiseSource& noise, Tensor& excitation) const;
  int upsample() const { return upsample_; }

 private:
  friend class SineGenStream;
  int upsample_;
  TensorView linear_w_, linear_b_;
};

// One step of torch's linear interpolation (upsample_linear1d, align_corners=False, explicit scale): the
// two source indices and weights for output index `dst`, given the kernel's float `scale`
// (= 1 / scale_factor) and the input length.
struct LinearTap {
  int64_t i0, i1;
  float w0, w1;
};
LinearTap linear_interp_tap(float scale, int64_t dst, int64_t in_size);

// The harmonic source over a segment given in chunks of F0 frames (see the header comment).
class SineGenStream {
 public:
  explicit SineGenStream(const HarmonicSource& source);
  // Starts a segment: draws the initial phases (as the reference does) and clears the state.
  void begin(NoiseSource& noise);
  // Appends `frames` F0 values (frames may be 0 when last) and writes every excitation sample that is now
  // final into `out` (resized). last: the segment ends with these frames; everything left is emitted.
  void push(const float* f0, int64_t frames, bool last, Tensor& out);
  int64_t frames_received() const { return static_cast<int64_t>(f0_.size()); }
  int64_t samples_emitted() const { return next_sample_; }

 private:
  const HarmonicSource& src_;
  NoiseSource* noise_ = nullptr;
  std::vector<float> f0_, rad_, phase_, rand_ini_, normals_;  // per frame (rad_, phase_: x9 harmonics)
  std::vector<double> cum_;
  int64_t next_sample_ = 0;
  bool ended_ = true;
};

}  // namespace kokoro
