// The acoustic text encoder: embedding -> n_layer x (conv k5 -> LayerNorm over channels -> LeakyReLU 0.2)
// -> BiLSTM over the true length. Output t_en [hidden, T].
//
// Text that streams in: the convolutions are local (an output column reads the columns around it) and the
// layer norm is per column, so the columns of a sentence whose text has partly arrived can be computed before
// its end (TextEncoderPrefix, extend). forward() then computes only the columns that read past what was
// known, with the same arithmetic on the same inputs: the same bytes as without the prefix (the Winograd
// form's tiles stay where the whole computation puts them). The BiLSTM runs over the whole sentence at its end.
#pragma once
#include <memory>
#include <vector>

#include "core/kernels.h"
#include "core/model_file.h"

namespace kokoro {

// What extend() computed of a sentence's convolutions from the tokens known so far. Any tokens may be
// given: only the columns that read tokens equal to the final ones are kept.
struct TextEncoderPrefix {
  std::vector<int64_t> ids;                // the tokens the columns were computed from
  std::vector<std::vector<float>> layers;  // per convolution layer: its output columns [0, valid), [t][C]
  std::vector<int64_t> valid;
  void clear() { *this = TextEncoderPrefix{}; }
};

class TextEncoder {
 public:
  explicit TextEncoder(std::shared_ptr<const ModelFile> model);
  // prefix (optional): the columns computed while the sentence's text streamed in (see above); when it has
  // any, it is completed to the whole sentence here (its columns are those of `ids` afterwards).
  void forward(const std::vector<int64_t>& ids, Tensor& t_en, TextEncoderPrefix* prefix = nullptr) const;
  // Computes in `prefix` the convolution columns that `ids` (the start of a sentence still arriving, without
  // its end token) determine; the columns already there for an unchanged start are kept. Nothing when the
  // convolutions take a form whose columns depend on the sentence's length (short sentences, fp32).
  void extend(const std::vector<int64_t>& ids, TextEncoderPrefix& prefix) const;

 private:
  struct Layer {
    TensorView w, b, gamma, beta;
  };
  // Whether the convolutions over T tokens take the Winograd form: the one computed in pieces.
  bool computed_in_tiles(int64_t T) const;
  // Output columns of a layer that inputs [0, known) determine (whole tiles reading no further).
  int64_t determined_columns(int64_t known) const;
  // Output columns [t0, t1) of layer l (convolution, layer norm, LeakyReLU) into out ([t][C], from t0) from its
  // input `in` ([t][C], its first row being row in_first), whose rows up to `known` are given and which is
  // zero from row T on (T: the sentence's length, or -1 while it is unknown). t0 is a multiple of the tile.
  void layer_columns(const Layer& l, const float* in, int64_t in_first, int64_t known, int64_t T, int64_t t0,
                     int64_t t1, float* out) const;
  // The columns of `prefix` that ids determine (T = -1: the sentence goes on) or, T = ids.size(), all of them.
  void complete(const std::vector<int64_t>& ids, int64_t T, TextEncoderPrefix& prefix) const;

  std::shared_ptr<const ModelFile> model_;
  int64_t channels_, kernel_, vocab_;
  TensorView embedding_;
  std::vector<Layer> cnn_;
  LstmWeights fwd_, bwd_;
};

LstmWeights lstm_weights(const ModelFile& m, const std::string& prefix, int64_t in, int64_t hidden, bool reverse);

}  // namespace kokoro
