// The acoustic text encoder: embedding -> n_layer x (conv k5 -> LayerNorm over channels -> LeakyReLU 0.2)
// -> BiLSTM over the true length. Output t_en [hidden, T].
#pragma once
#include <memory>
#include <vector>

#include "core/kernels.h"
#include "core/model_file.h"

namespace kokoro {

class TextEncoder {
 public:
  explicit TextEncoder(std::shared_ptr<const ModelFile> model);
  void forward(const std::vector<int64_t>& ids, Tensor& t_en) const;

 private:
  std::shared_ptr<const ModelFile> model_;
  int64_t channels_, kernel_, vocab_;
  TensorView embedding_;
  struct Layer {
    TensorView w, b, gamma, beta;
  };
  std::vector<Layer> cnn_;
  LstmWeights fwd_, bwd_;
};

LstmWeights lstm_weights(const ModelFile& m, const std::string& prefix, int64_t in, int64_t hidden, bool reverse);

}  // namespace kokoro
