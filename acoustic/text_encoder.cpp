#include "acoustic/text_encoder.h"

#include <algorithm>

#include "core/error.h"
#include "core/lstm.h"
#include "core/precision.h"
#include "core/winograd.h"

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

namespace {

// The tokens two lists share from their start.
int64_t common_start(const std::vector<int64_t>& a, const std::vector<int64_t>& b) {
  const auto m = std::mismatch(a.begin(), a.begin() + static_cast<int64_t>(std::min(a.size(), b.size())), b.begin());
  return m.first - a.begin();
}

}  // namespace

bool TextEncoder::computed_in_tiles(int64_t T) const {
  // "Same" padding: as many output columns as tokens. The tiles of a kernel split into groups are F(m, m).
  // Only the bf16 form: its products (core/bf16_gemm.h) give each row the same sums however many rows there
  // are; fp32's (oneDNN) do not (measured: other bits from 130 tokens on).
  const WinogradTransform* tr = conv1d_winograd_for(channels_, channels_, kernel_, T, 1);
  return tr && (kernel_ <= tr->r || tr->r == tr->m) && kernel_precision() != Precision::fp32 && channels_ % 16 == 0;
}

// Tile b of a layer (outputs [b m, b m + m)) reads the inputs [b m - P, b m - P + R): R = alpha + (groups - 1) m,
// P the "same" padding (core/winograd.cpp, winograd_conv).
int64_t TextEncoder::determined_columns(int64_t known) const {
  const WinogradTransform& tr = *winograd_for_kernel(kernel_);
  const int64_t groups = (kernel_ + tr.r - 1) / tr.r, P = (kernel_ - 1) / 2, R = tr.alpha + (groups - 1) * tr.m;
  return known + P - R < 0 ? 0 : ((known + P - R) / tr.m + 1) * tr.m;
}

void TextEncoder::layer_columns(const Layer& l, const float* in, int64_t in_first, int64_t known, int64_t T,
                                int64_t t0, int64_t t1, float* out) const {
  const WinogradTransform& tr = *winograd_for_kernel(kernel_);
  const int64_t C = channels_, groups = (kernel_ + tr.r - 1) / tr.r, P = (kernel_ - 1) / 2;
  const int64_t R = tr.alpha + (groups - 1) * tr.m, tiles = (t1 - t0 + tr.m - 1) / tr.m;
  // The window every tile reads, as the whole computation sees it: zero before the first token and from T on.
  const int64_t width = (tiles - 1) * tr.m + R, first = t0 - P, end = T < 0 ? known : std::min(known, T);
  if (t0 % tr.m != 0 || t1 <= t0 || std::max<int64_t>(first, 0) < in_first || (T < 0 ? first + width > known : known < T))
    throw Error("text encoder: columns [" + std::to_string(t0) + ", " + std::to_string(t1) + ") read unknown tokens (internal)");
  Tensor x({C, width}), y;  // zero-filled
  for (int64_t j = std::max<int64_t>(0, -first); j < width && first + j < end; ++j)
    for (int64_t c = 0; c < C; ++c) x[c * width + j] = in[(first + j - in_first) * C + c];
  // No padding: the window holds the zeros the whole computation pads with.
  conv1d_winograd(x, l.w, &l.b, 0, 1, tr, y);
  layer_norm_channels(y, l.gamma.data, l.beta.data, 1e-5f);
  leaky_relu(y, 0.2f);
  const int64_t n = t1 - t0, Y = y.dim(1);
  for (int64_t t = 0; t < n; ++t)
    for (int64_t c = 0; c < C; ++c) out[t * C + c] = y[c * Y + t];
}

void TextEncoder::complete(const std::vector<int64_t>& ids, int64_t T, TextEncoderPrefix& p) const {
  const int64_t n = static_cast<int64_t>(ids.size()), C = channels_, P = (kernel_ - 1) / 2;
  if (p.layers.size() != cnn_.size() || p.valid.size() != cnn_.size()) {
    p.clear();
    p.layers.resize(cnn_.size());
    p.valid.assign(cnn_.size(), 0);
  }
  // Per layer: the columns kept (they read only tokens that are the same) and the columns now determined.
  std::vector<int64_t> keep(cnn_.size()), now(cnn_.size());
  int64_t same = common_start(p.ids, ids), known = n;
  for (size_t l = 0; l < cnn_.size(); ++l) {
    keep[l] = std::min({p.valid[l], determined_columns(same), static_cast<int64_t>(p.layers[l].size()) / C});
    now[l] = T < 0 ? std::max(keep[l], determined_columns(known)) : T;
    same = keep[l];
    known = now[l];
  }
  // The first layer reads the embedding from the first column it recomputes, on.
  const int64_t from = std::max<int64_t>(0, keep[0] - P);
  std::vector<float> embedded(static_cast<size_t>((n - from) * C));
  for (int64_t t = from; t < n; ++t) {
    if (ids[t] < 0 || ids[t] >= vocab_) throw Error("token id " + std::to_string(ids[t]) + " out of range");
    std::copy_n(embedding_.data + ids[t] * C, C, embedded.data() + (t - from) * C);
  }
  const float* in = embedded.data();
  int64_t in_first = from, in_known = n;
  for (size_t l = 0; l < cnn_.size(); ++l) {
    std::vector<float>& out = p.layers[l];
    out.resize(static_cast<size_t>(now[l] * C));
    if (now[l] > keep[l]) layer_columns(cnn_[l], in, in_first, in_known, T, keep[l], now[l], out.data() + keep[l] * C);
    p.valid[l] = now[l];
    in = out.data();
    in_first = 0;
    in_known = now[l];
  }
  p.ids = ids;
}

void TextEncoder::extend(const std::vector<int64_t>& ids, TextEncoderPrefix& p) const {
  if (computed_in_tiles(std::max<int64_t>(static_cast<int64_t>(ids.size()), 1))) complete(ids, -1, p);
}

void TextEncoder::forward(const std::vector<int64_t>& ids, Tensor& t_en, TextEncoderPrefix* prefix) const {
  const int64_t T = static_cast<int64_t>(ids.size()), C = channels_;
  Tensor rows({T, C}), out;
  // Without columns computed ahead the whole computation is the faster of the two (no windows to copy).
  if (prefix && !prefix->valid.empty() && prefix->valid.front() > 0 && T > 0 && computed_in_tiles(T)) {
    complete(ids, T, *prefix);
    std::copy_n(prefix->layers.back().data(), T * C, rows.data());
  } else {
    Tensor x({C, T}), y;
    for (int64_t t = 0; t < T; ++t) {
      if (ids[t] < 0 || ids[t] >= vocab_) throw Error("token id " + std::to_string(ids[t]) + " out of range");
      for (int64_t c = 0; c < C; ++c) x[c * T + t] = embedding_.data[ids[t] * C + c];
    }
    for (const Layer& l : cnn_) {
      conv1d(x, l.w, &l.b, 1, static_cast<int>((kernel_ - 1) / 2), 1, y);
      layer_norm_channels(y, l.gamma.data, l.beta.data, 1e-5f);
      leaky_relu(y, 0.2f);
      std::swap(x, y);
    }
    rows.matrix() = x.matrix().transpose();
  }
  bilstm(rows, fwd_, bwd_, out);
  t_en.resize({C, T});
  t_en.matrix() = out.matrix().transpose();
}

}  // namespace kokoro
