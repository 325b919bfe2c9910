// The Kokoro decoder (istftnet.py Decoder.forward(asr, F0_curve, N, s)): aligned text features plus F0 and
// energy curves -> 24 kHz audio.
//   F0 = F0_conv(F0_curve), N = N_conv(N)              stride-2 convs: 2F -> F
//   x = encode([asr; F0; N])                           AdainResBlk1d 514 -> 1024
//   asr_res = asr_res(asr)                             1x1 conv 512 -> 64
//   x = decode_i([x; asr_res; F0; N]) for i = 0..3     the last one upsamples F -> 2F, 1090 -> 512
//   audio = Generator(x, s, F0_curve)                  2F frames * 300 samples = F * 600 samples
// Every length is the true one (batch 1, no padding), so instance norms see exactly the utterance.
#pragma once
#include <memory>
#include <vector>

#include "core/model_file.h"
#include "core/trace.h"
#include "vocoder/adain_resblk.h"
#include "vocoder/generator.h"
#include "vocoder/noise.h"

namespace kokoro {

class StreamDecoder;

class Decoder {
 public:
  explicit Decoder(std::shared_ptr<const ModelFile> model);

  // asr [512, F], f0 [2F] and n [2F] (rank 1, or [1, 2F]), style = ref_s[:128] (style_dim floats)
  // -> audio [F * 600]. Trace names: dec_F0, dec_N, dec_asr_res, dec_encode, dec_decode_0..3, then the
  // generator's (gen_har, gen_ups_i, gen_stage_i, gen_conv_post) and audio.
  void forward(const Tensor& asr, const Tensor& f0, const Tensor& n, const float* style, NoiseSource& noise,
               Tensor& audio, const Trace* trace = nullptr) const;
  // The decoder half of forward, up to the generator's input: x [upsample_initial_channel, 2F].
  void features(const Tensor& asr, const Tensor& f0, const Tensor& n, const float* style, Tensor& x,
                const Trace* trace = nullptr) const;

  // The steps of forward, public so that golden tests can run each on the reference's own inputs.
  // F0 = F0_conv(f0 [1, 2F]) and N = N_conv(n [1, 2F]), each [1, F].
  void condition(const Tensor& f0_row, const Tensor& n_row, Tensor& F0, Tensor& N) const;
  void asr_residual(const Tensor& asr, Tensor& asr_res) const;  // [512, F] -> [64, F]
  const AdainResBlk1d& encode() const { return *encode_; }
  size_t num_decode() const { return decode_.size(); }
  const AdainResBlk1d& decode(size_t i) const { return *decode_.at(i); }
  const Generator& generator() const { return *generator_; }
  // Multiply-adds per asr column of features() (the decoder half) and of the whole forward.
  double features_macs_per_frame() const;
  double macs_per_frame() const { return features_macs_per_frame() + 2 * generator_->macs_per_column(); }

  int64_t style_dim() const { return style_dim_; }
  int64_t samples_per_frame() const { return samples_per_frame_; }  // audio samples per asr column

 private:
  friend class StreamDecoder;  // runs the same weights chunk by chunk (vocoder/stream_decoder.h)
  std::shared_ptr<const ModelFile> model_;
  int64_t asr_dim_ = 512, style_dim_ = 0, samples_per_frame_ = 0;
  TensorView f0_conv_w_, f0_conv_b_, n_conv_w_, n_conv_b_, asr_res_w_, asr_res_b_;
  std::unique_ptr<AdainResBlk1d> encode_;
  std::vector<std::unique_ptr<AdainResBlk1d>> decode_;
  std::unique_ptr<Generator> generator_;
};

}  // namespace kokoro
