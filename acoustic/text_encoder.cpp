#include "acoustic/text_encoder.h"

#include "core/error.h"

namespace kokoro {

LstmWeights lstm_weights(const ModelFile& m, const std::string& p, int64_t in, int64_t hidden, bool reverse) {
  const std::string s = reverse ? "_l0_reverse" : "_l0";
  return LstmWeights{m.get(p + ".weight_ih" + s, {4 * hidden, in}), m.get(p + ".weight_hh" + s, {4 * hidden, hidden}),
                     m.get(p + ".bias_ih" + s, {4 * hidden}), m.get(p + ".bias_hh" + s, {4 * hidden})};
}

TextEncoder::TextEncoder(std::shared_ptr<const ModelFile> model) : model_(std::move(model)) {
  const auto& c = model_->config();
  channels_ = c.at("hidden_dim");
  kernel_ = c.at("text_encoder_kernel_size");
  vocab_ = c.at("n_token");
  const int64_t depth = c.at("n_layer");
  const ModelFile& m = *model_;
  embedding_ = m.get("text_encoder.embedding.weight", {vocab_, channels_});
  for (int64_t i = 0; i < depth; ++i) {
    const std::string p = "text_encoder.cnn." + std::to_string(i);
    cnn_.push_back({m.get(p + ".0.weight", {channels_, channels_, kernel_}), m.get(p + ".0.bias", {channels_}),
                    m.get(p + ".1.gamma", {channels_}), m.get(p + ".1.beta", {channels_})});
  }
  fwd_ = lstm_weights(m, "text_encoder.lstm", channels_, channels_ / 2, false);
  bwd_ = lstm_weights(m, "text_encoder.lstm", channels_, channels_ / 2, true);
}

void TextEncoder::forward(const std::vector<int64_t>& ids, Tensor& t_en) const {
  const int64_t T = static_cast<int64_t>(ids.size());
  Tensor x({channels_, T}), y;
  for (int64_t t = 0; t < T; ++t) {
    if (ids[t] < 0 || ids[t] >= vocab_) throw Error("token id " + std::to_string(ids[t]) + " out of range");
    for (int64_t c = 0; c < channels_; ++c) x[c * T + t] = embedding_.data[ids[t] * channels_ + c];
  }
  for (const Layer& l : cnn_) {
    conv1d(x, l.w, &l.b, 1, static_cast<int>((kernel_ - 1) / 2), 1, y);
    layer_norm_channels(y, l.gamma.data, l.beta.data, 1e-5f);
    leaky_relu(y, 0.2f);
    std::swap(x, y);
  }
  Tensor rows({T, channels_}), out;
  rows.matrix() = x.matrix().transpose();
  bilstm(rows, fwd_, bwd_, out);
  t_en.resize({channels_, T});
  t_en.matrix() = out.matrix().transpose();
}

}  // namespace kokoro
