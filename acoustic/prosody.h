// The prosody predictor: durations per token, then F0 and energy (N) curves per frame.
//   DurationEncoder: n_layer x (BiLSTM over [x | style] -> AdaLayerNorm(style)), style re-appended each time
//   durations: BiLSTM -> Linear(hidden, max_dur) -> sigmoid -> sum / speed -> round (half to even, as
//              torch.round) -> clamp >= 1
//   F0/N: shared BiLSTM over the frame-aligned features, then 3 AdainResBlk1d (the 2nd upsamples x2) and a
//         1x1 projection each -> [2F]
#pragma once
#include <memory>
#include <vector>

#include "vocoder/adain_resblk.h"  // the block is shared with the decoder
#include "core/kernels.h"
#include "core/model_file.h"
#include "core/trace.h"

namespace kokoro {

class ProsodyPredictor {
 public:
  explicit ProsodyPredictor(std::shared_ptr<const ModelFile> model);

  // d_en [hidden, T] (bert_encoder output), style = ref_s[128:] -> d [T, hidden + style]
  void encode(const Tensor& d_en, const float* style, Tensor& d) const;
  // d [T, hidden + style] -> unrounded dur_sum [T] and integer durations [T] (>= 1)
  void durations(const Tensor& d, float speed, Tensor& dur_sum, std::vector<int64_t>& dur, const Trace* trace) const;
  // en [hidden + style, F] -> F0 [2F], N [2F]
  void f0_n(const Tensor& en, const float* style, Tensor& f0, Tensor& n) const;

 private:
  std::shared_ptr<const ModelFile> model_;
  int64_t hidden_, style_, max_dur_;
  struct EncoderLayer {
    LstmWeights fwd, bwd;
    TensorView fc_w, fc_b;
  };
  std::vector<EncoderLayer> encoder_;
  LstmWeights lstm_fwd_, lstm_bwd_, shared_fwd_, shared_bwd_;
  TensorView dur_w_, dur_b_;
  std::vector<AdainResBlk1d> f0_blocks_, n_blocks_;
  TensorView f0_proj_w_, f0_proj_b_, n_proj_w_, n_proj_b_;
};

}  // namespace kokoro
