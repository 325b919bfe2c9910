#include "acoustic/albert.h"

#include <cmath>

#include "core/error.h"
#include "core/kernels.h"
#include "core/parallel.h"

namespace kokoro {

namespace {

// transformers' "gelu_new": the tanh approximation used by ALBERT. Eigen's vectorised tanh (a rational
// approximation within a few ulp of libm's) instead of a scalar std::tanh per element: over the 12 layers'
// [T, 2048] activations the scalar loop took more time than all of ALBERT's matrix products.
void gelu_new(Tensor& x) {
  constexpr float kSqrt2OverPi = 0.7978845608028654f;
  Eigen::Map<Eigen::ArrayXf> v(x.data(), x.numel());
  v = 0.5f * v * (1.0f + (kSqrt2OverPi * (v + 0.044715f * v.cube())).tanh());
}

constexpr float kLayerNormEps = 1e-12f;  // AlbertConfig.layer_norm_eps

}  // namespace

Albert::Albert(std::shared_ptr<const ModelFile> model) : model_(std::move(model)) {
  const auto& c = model_->config();
  const auto& pl = c.at("plbert");
  hidden_ = pl.at("hidden_size");
  heads_ = pl.at("num_attention_heads");
  layers_ = pl.at("num_hidden_layers");
  max_pos_ = pl.at("max_position_embeddings");
  emb_ = pl.value("embedding_size", 128);
  vocab_ = c.at("n_token");
  const int64_t inter = pl.at("intermediate_size");
  const ModelFile& m = *model_;
  word_ = m.get("bert.embeddings.word_embeddings.weight", {vocab_, emb_});
  pos_ = m.get("bert.embeddings.position_embeddings.weight", {max_pos_, emb_});
  type_ = m.get("bert.embeddings.token_type_embeddings.weight", {2, emb_});
  emb_ln_w_ = m.get("bert.embeddings.LayerNorm.weight", {emb_});
  emb_ln_b_ = m.get("bert.embeddings.LayerNorm.bias", {emb_});
  map_w_ = m.get("bert.encoder.embedding_hidden_mapping_in.weight", {hidden_, emb_});
  map_b_ = m.get("bert.encoder.embedding_hidden_mapping_in.bias", {hidden_});
  const std::string l = "bert.encoder.albert_layer_groups.0.albert_layers.0.";
  q_w_ = m.get(l + "attention.query.weight", {hidden_, hidden_});
  q_b_ = m.get(l + "attention.query.bias", {hidden_});
  k_w_ = m.get(l + "attention.key.weight", {hidden_, hidden_});
  k_b_ = m.get(l + "attention.key.bias", {hidden_});
  v_w_ = m.get(l + "attention.value.weight", {hidden_, hidden_});
  v_b_ = m.get(l + "attention.value.bias", {hidden_});
  o_w_ = m.get(l + "attention.dense.weight", {hidden_, hidden_});
  o_b_ = m.get(l + "attention.dense.bias", {hidden_});
  attn_ln_w_ = m.get(l + "attention.LayerNorm.weight", {hidden_});
  attn_ln_b_ = m.get(l + "attention.LayerNorm.bias", {hidden_});
  ffn_w_ = m.get(l + "ffn.weight", {inter, hidden_});
  ffn_b_ = m.get(l + "ffn.bias", {inter});
  ffn_out_w_ = m.get(l + "ffn_output.weight", {hidden_, inter});
  ffn_out_b_ = m.get(l + "ffn_output.bias", {hidden_});
  full_ln_w_ = m.get(l + "full_layer_layer_norm.weight", {hidden_});
  full_ln_b_ = m.get(l + "full_layer_layer_norm.bias", {hidden_});
  if (hidden_ % heads_ != 0) throw Error("ALBERT hidden size is not a multiple of the head count");
}

void Albert::forward(const std::vector<int64_t>& ids, Tensor& out) const {
  const int64_t T = static_cast<int64_t>(ids.size());
  if (T == 0 || T > max_pos_)
    throw Error("ALBERT input of " + std::to_string(T) + " tokens (1.." + std::to_string(max_pos_) + ")");
  Tensor e({T, emb_});
  for (int64_t t = 0; t < T; ++t) {
    if (ids[t] < 0 || ids[t] >= vocab_) throw Error("token id " + std::to_string(ids[t]) + " out of range");
    for (int64_t c = 0; c < emb_; ++c)
      e[t * emb_ + c] = word_.data[ids[t] * emb_ + c] + pos_.data[t * emb_ + c] + type_.data[c];
  }
  layer_norm_rows(e, emb_ln_w_.data, emb_ln_b_.data, kLayerNormEps);
  Tensor x;
  linear_rows(e, map_w_, &map_b_, x);

  const int64_t hd = hidden_ / heads_;
  const float scale = 1.0f / std::sqrt(static_cast<float>(hd));
  Tensor q, k, v, ctx({T, hidden_}), attn, h, f, f2;
  for (int64_t layer = 0; layer < layers_; ++layer) {
    linear_rows(x, q_w_, &q_b_, q);
    linear_rows(x, k_w_, &k_b_, k);
    linear_rows(x, v_w_, &v_b_, v);
    // Heads are independent: one task each (each writes its own columns of ctx).
    parallel_for(heads_, [&](int64_t head) {
      const auto Q = q.matrix().middleCols(head * hd, hd);
      const auto K = k.matrix().middleCols(head * hd, hd);
      const auto V = v.matrix().middleCols(head * hd, hd);
      RowMatrix scores = (Q * K.transpose()) * scale;
      for (int64_t r = 0; r < T; ++r) {
        auto row = scores.row(r).array();
        row = (row - row.maxCoeff()).exp();
        row /= row.sum();
      }
      ctx.matrix().middleCols(head * hd, hd).noalias() = scores * V;
    });
    linear_rows(ctx, o_w_, &o_b_, attn);
    attn.matrix() += x.matrix();
    layer_norm_rows(attn, attn_ln_w_.data, attn_ln_b_.data, kLayerNormEps);
    linear_rows(attn, ffn_w_, &ffn_b_, f);
    gelu_new(f);
    linear_rows(f, ffn_out_w_, &ffn_out_b_, f2);
    f2.matrix() += attn.matrix();
    layer_norm_rows(f2, full_ln_w_.data, full_ln_b_.data, kLayerNormEps);
    std::swap(x, f2);
  }
  out = std::move(x);
}

}  // namespace kokoro
