#include "acoustic/prosody.h"

#include <cfenv>
#include <cmath>

#include "acoustic/text_encoder.h"
#include "core/error.h"

namespace kokoro {

namespace {

// [x | style] for every row: x [T, C] -> [T, C + S]
void append_style(const Tensor& x, const float* style, int64_t S, Tensor& out) {
  const int64_t T = x.dim(0), C = x.dim(1);
  out.resize({T, C + S});
  auto O = out.matrix();
  O.leftCols(C) = x.matrix();
  O.rightCols(S).rowwise() = ConstVectorMap(style, S).transpose();
}

float sigmoid(float v) { return 1.0f / (1.0f + std::exp(-v)); }

}  // namespace

ProsodyPredictor::ProsodyPredictor(std::shared_ptr<const ModelFile> model) : model_(std::move(model)) {
  const auto& c = model_->config();
  hidden_ = c.at("hidden_dim");
  style_ = c.at("style_dim");
  max_dur_ = c.at("max_dur");
  const int64_t n_layer = c.at("n_layer"), in = hidden_ + style_, h = hidden_ / 2;
  const ModelFile& m = *model_;
  for (int64_t i = 0; i < n_layer; ++i) {
    const std::string lstm = "predictor.text_encoder.lstms." + std::to_string(2 * i);
    const std::string norm = "predictor.text_encoder.lstms." + std::to_string(2 * i + 1);
    encoder_.push_back({lstm_weights(m, lstm, in, h, false), lstm_weights(m, lstm, in, h, true),
                        m.get(norm + ".fc.weight", {2 * hidden_, style_}), m.get(norm + ".fc.bias", {2 * hidden_})});
  }
  lstm_fwd_ = lstm_weights(m, "predictor.lstm", in, h, false);
  lstm_bwd_ = lstm_weights(m, "predictor.lstm", in, h, true);
  shared_fwd_ = lstm_weights(m, "predictor.shared", in, h, false);
  shared_bwd_ = lstm_weights(m, "predictor.shared", in, h, true);
  dur_w_ = m.get("predictor.duration_proj.linear_layer.weight", {max_dur_, hidden_});
  dur_b_ = m.get("predictor.duration_proj.linear_layer.bias", {max_dur_});
  for (auto [name, blocks] : {std::pair{"F0", &f0_blocks_}, std::pair{"N", &n_blocks_}}) {
    const std::string p = std::string("predictor.") + name;
    blocks->emplace_back(m, p + ".0", hidden_, hidden_, style_, false);
    blocks->emplace_back(m, p + ".1", hidden_, hidden_ / 2, style_, true);
    blocks->emplace_back(m, p + ".2", hidden_ / 2, hidden_ / 2, style_, false);
  }
  f0_proj_w_ = m.get("predictor.F0_proj.weight", {1, hidden_ / 2, 1});
  f0_proj_b_ = m.get("predictor.F0_proj.bias", {1});
  n_proj_w_ = m.get("predictor.N_proj.weight", {1, hidden_ / 2, 1});
  n_proj_b_ = m.get("predictor.N_proj.bias", {1});
}

void ProsodyPredictor::encode(const Tensor& d_en, const float* style, Tensor& d) const {
  Tensor rows({d_en.dim(1), d_en.dim(0)}), x, y;
  rows.matrix() = d_en.matrix().transpose();
  append_style(rows, style, style_, x);
  for (const EncoderLayer& l : encoder_) {
    bilstm(x, l.fwd, l.bwd, y);
    // AdaLayerNorm: LayerNorm over channels without affine, then (1 + gamma(s)) * x + beta(s).
    const Eigen::VectorXf h = l.fc_w.matrix() * ConstVectorMap(style, style_) + l.fc_b.vector();
    layer_norm_rows(y, nullptr, nullptr, 1e-5f);
    auto Y = y.matrix();
    Y.array().rowwise() *= (1.0f + h.head(hidden_).array()).transpose();
    Y.rowwise() += h.tail(hidden_).transpose();
    append_style(y, style, style_, x);
  }
  d = std::move(x);
}

void ProsodyPredictor::durations(const Tensor& d, float speed, Tensor& dur_sum, std::vector<int64_t>& dur,
                                 const Trace* t) const {
  if (!(speed > 0) || !std::isfinite(speed)) throw Error("speed must be a positive number");
  Tensor x, logits;
  bilstm(d, lstm_fwd_, lstm_bwd_, x);
  trace(t, "lstm_x", x);
  linear_rows(x, dur_w_, &dur_b_, logits);
  const int64_t T = d.dim(0);
  dur_sum.resize({T});
  dur.resize(T);
  // torch.round rounds half to even; nearbyint does too under the default rounding mode.
  for (int64_t i = 0; i < T; ++i) {
    float s = 0;
    for (int64_t j = 0; j < max_dur_; ++j) s += sigmoid(logits[i * max_dur_ + j]);
    dur_sum[i] = s / speed;
    dur[i] = std::max<int64_t>(1, static_cast<int64_t>(std::nearbyint(dur_sum[i])));
  }
}

void ProsodyPredictor::f0_n(const Tensor& en, const float* style, Tensor& f0, Tensor& n) const {
  Tensor shared;
  shared_features(en, shared);
  curves_from_shared(shared, style, f0, n);
}

void ProsodyPredictor::shared_features(const Tensor& en, Tensor& shared) const {
  Tensor rows({en.dim(1), en.dim(0)});
  rows.matrix() = en.matrix().transpose();
  shared_lstm(rows, nullptr, shared);
}

void ProsodyPredictor::shared_features(const Tensor& d, const std::vector<int64_t>& durations, Tensor& shared) const {
  shared_lstm(d, &durations, shared);
}

void ProsodyPredictor::shared_lstm(const Tensor& rows, const std::vector<int64_t>* repeats, Tensor& shared) const {
  Tensor x;
  bilstm(rows, shared_fwd_, shared_bwd_, x, repeats);
  shared.resize({x.dim(1), x.dim(0)});
  shared.matrix() = x.matrix().transpose();
}

void ProsodyPredictor::curves_from_shared(const Tensor& shared, const float* style, Tensor& f0, Tensor& n) const {
  auto branch = [&](const std::vector<AdainResBlk1d>& blocks, const TensorView& w, const TensorView& b, Tensor& out) {
    Tensor a = shared, c;
    for (const auto& blk : blocks) {
      blk.forward(a, style, c);
      std::swap(a, c);
    }
    conv1d(a, w, &b, 1, 0, 1, out);
    out.reshape({out.numel()});
  };
  branch(f0_blocks_, f0_proj_w_, f0_proj_b_, f0);
  branch(n_blocks_, n_proj_w_, n_proj_b_, n);
}

}  // namespace kokoro
