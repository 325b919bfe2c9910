// Everything before the vocoder: token ids + style + speed -> per-token durations and the frame-aligned
// features the decoder consumes (asr, F0, N). Computed over the true sequence length, no padding, exactly as
// KModel.forward_with_tokens does up to the decoder call.
#pragma once
#include <memory>
#include <vector>

#include "acoustic/albert.h"
#include "acoustic/prosody.h"
#include "acoustic/text_encoder.h"
#include "core/model_file.h"
#include "core/trace.h"

namespace kokoro {

// The output of the acoustic stage for one segment: what the vocoder needs, aligned to frames.
struct AlignedFeatures {
  Tensor asr;                       // [hidden, F] text features repeated by duration
  Tensor f0;                        // [2F] F0 curve (Hz)
  Tensor n;                         // [2F] energy curve
  std::vector<int64_t> durations;   // [T] frames per token (>= 1), including the two boundary tokens
  int64_t frames() const { return asr.rank() == 2 ? asr.dim(1) : 0; }
};

class AcousticModel {
 public:
  explicit AcousticModel(std::shared_ptr<const ModelFile> model);
  // ids include the boundary 0 tokens; style is the 256-float voice row (ref_s).
  void forward(const std::vector<int64_t>& ids, const float* style, float speed, AlignedFeatures& out,
               const Trace* trace = nullptr) const;
  // forward in two steps (the same arithmetic): everything but the F0 and energy curves (out.f0 and out.n left
  // empty) and the shared BiLSTM's output [hidden, F] they come from; then the curves. Slice mode's early start
  // (engine/stream_engine_early.cpp) runs the curves' first frames in between.
  // text_prefix (optional): the text encoder's columns computed while the sentence's text streamed in
  // (extend_text_prefix), completed here to the sentence; the same result as without.
  void forward_text(const std::vector<int64_t>& ids, const float* style, float speed, AlignedFeatures& out,
                    Tensor& shared, const Trace* trace = nullptr, TextEncoderPrefix* text_prefix = nullptr) const;
  // Text that streams in: what the text encoder can compute of a sentence from the start of its tokens
  // (with the opening boundary token, without the closing one) before the rest arrives (TextEncoder::extend).
  void extend_text_prefix(const std::vector<int64_t>& ids, TextEncoderPrefix& prefix) const;
  void forward_curves(const Tensor& shared, const float* style, AlignedFeatures& out, const Trace* trace = nullptr) const;
  int64_t max_tokens() const { return bert_.max_positions(); }
  int64_t style_dim() const { return style_dim_; }  // each half of the 256-float voice row
  const ProsodyPredictor& predictor() const { return predictor_; }

 private:
  std::shared_ptr<const ModelFile> model_;
  Albert bert_;
  TensorView bert_enc_w_, bert_enc_b_;
  ProsodyPredictor predictor_;
  TextEncoder text_encoder_;
  int64_t hidden_, style_dim_;
};

// Repeats column t of x [C, T] durations[t] times: x @ alignment without the dense alignment matrix.
void repeat_columns(const Tensor& x, const std::vector<int64_t>& durations, Tensor& out);

}  // namespace kokoro
