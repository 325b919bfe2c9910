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
  // en [hidden + style, F] -> F0 [2F], N [2F]: shared_features then curves_from_shared.
  void f0_n(const Tensor& en, const float* style, Tensor& f0, Tensor& n) const;
  // The two halves of f0_n. en -> the shared BiLSTM's output [hidden, F] (over the whole segment: its backward
  // direction needs the last frame), then the F0 and N branches on it. Split so that slice mode's early start
  // can run the branches' first frames alone (acoustic/stream_prosody.h) before the whole branches.
  void shared_features(const Tensor& en, Tensor& shared) const;
  // The same from d [T, hidden + style] (encode's output, per token) and the durations: en is d repeated by
  // them, and the LSTM's input projections are computed per token (bilstm's repeats), not per frame.
  void shared_features(const Tensor& d, const std::vector<int64_t>& durations, Tensor& shared) const;
  void curves_from_shared(const Tensor& shared, const float* style, Tensor& f0, Tensor& n) const;

  // The branches' parts, for acoustic/stream_prosody.h: 3 blocks and a 1x1 projection [1, hidden/2, 1] each.
  const std::vector<AdainResBlk1d>& f0_blocks() const { return f0_blocks_; }
  const std::vector<AdainResBlk1d>& n_blocks() const { return n_blocks_; }
  const TensorView& f0_proj_weight() const { return f0_proj_w_; }
  const TensorView& f0_proj_bias() const { return f0_proj_b_; }
  const TensorView& n_proj_weight() const { return n_proj_w_; }
  const TensorView& n_proj_bias() const { return n_proj_b_; }

 private:
  // The shared BiLSTM over rows [F, hidden + style] (or rows repeated: bilstm's repeats) -> shared [hidden, F].
  void shared_lstm(const Tensor& rows, const std::vector<int64_t>* repeats, Tensor& shared) const;

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
