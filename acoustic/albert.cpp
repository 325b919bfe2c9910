#include "acoustic/albert.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "core/bf16_gemm.h"
#include "core/error.h"
#include "core/kernels.h"
#include "core/linear_int8.h"
#include "core/parallel.h"
#include "core/precision.h"

namespace kokoro {

namespace {

// transformers' "gelu_new": the tanh approximation used by ALBERT. Eigen's vectorised tanh (a rational
// approximation within a few ulp of libm's) instead of a scalar std::tanh per element: over the 12 layers'
// [T, 2048] activations the scalar loop took more time than all of ALBERT's matrix products.
// Rows in parallel (it ran on one core while the other waited): with rows a multiple of 16 floats every
// range starts on the 64-byte aligned storage's packet boundary, so each value takes the same vectorised path
// as in one pass over the whole tensor (Eigen does the few values before an aligned packet by scalar code).
void gelu_new(Tensor& x) {
  auto gelu = [](float* p, int64_t n) {
    constexpr float kSqrt2OverPi = 0.7978845608028654f;
    Eigen::Map<Eigen::ArrayXf> v(p, n);
    v = 0.5f * v * (1.0f + (kSqrt2OverPi * (v + 0.044715f * v.cube())).tanh());
  };
  const int64_t rows = x.dim(0), cols = x.dim(1);
  if (cols % 16 != 0) return gelu(x.data(), x.numel());
  parallel_ranges(rows, 1, elementwise_parts(x.numel()),
                  [&](int64_t r0, int64_t r1) { gelu(x.data() + r0 * cols, (r1 - r0) * cols); });
}

constexpr float kLayerNormEps = 1e-12f;  // AlbertConfig.layer_norm_eps

// softmax(row[0, n) * scale) as exp(row * scale - max) in place and the factor 1 / sum that normalises it,
// in two passes over packets (max; exp and sum); the caller's pass that converts the row to bf16 multiplies
// by the factor (scaled_to_bf16). The Eigen array expression this replaced (scale, max, exp, sum, divide)
// made six passes and spent ~7 % of ALBERT's time on 363 tokens; the normalisation in a pass of its own
// before the conversion, another ~2 %. `row` is packet-aligned and has `padded` >= n floats (a multiple of
// the packet size): the columns past n are set to -inf first, so that their exp is 0 and they neither win
// the max nor add to the sum. exp is Eigen's vectorised one (the polynomial the array expression used).
float softmax_row_unnormalised(float* row, int64_t n, int64_t padded, float scale) {
  using Packet = Eigen::internal::packet_traits<float>::type;
  constexpr int64_t P = sizeof(Packet) / sizeof(float);
  namespace ei = Eigen::internal;
  std::fill(row + n, row + padded, -std::numeric_limits<float>::infinity());
  const int64_t end = (n + P - 1) / P * P;  // <= padded: padded is a multiple of P and >= n
  Packet top = ei::pset1<Packet>(-std::numeric_limits<float>::infinity());
  for (int64_t i = 0; i < end; i += P) top = ei::pmax(top, ei::pload<Packet>(row + i));
  // row * scale - max(row * scale) as (row - max(row)) * scale would be only for scale a power of two (ALBERT's
  // 1/8): scaled first, as softmax(x * scale) reads.
  const Packet s = ei::pset1<Packet>(scale), m = ei::pset1<Packet>(ei::predux_max(top) * scale);
  Packet sum = ei::pset1<Packet>(0.0f);
  for (int64_t i = 0; i < end; i += P) {
    const Packet e = ei::pexp(ei::psub(ei::pmul(ei::pload<Packet>(row + i), s), m));
    ei::pstore(row + i, e);
    sum = ei::padd(sum, e);
  }
  return 1.0f / ei::predux(sum);
}

// One head's attention in bf16 (bf16-all: core/precision.h), the two products on gemm_bf16: at 275 tokens the
// fp32 products took a fifth of ALBERT's time. ctx[:, head] = softmax(Q K^T * scale) V, the softmax in fp32.
// gemm_bf16 wants N a multiple of 16 and K even: K's rows are padded with zeros (their scores are not read),
// and P's columns to an even count with zeros (they meet V's zero pad row). P's rows are the scores' padded
// rows (Tn, a multiple of 16: converted by whole packets), of which the second product reads Tk columns.
void attention_head_bf16(const Tensor& q, const Tensor& k, const Tensor& v, int64_t head, int64_t hd, float scale,
                         Tensor& ctx) {
  const int64_t T = q.dim(0), H = q.dim(1), Tn = (T + 15) / 16 * 16, Tk = (T + 1) / 2 * 2;
  thread_local std::vector<bf16_t> qb, kp, vp, pb;
  // 64-byte aligned, and rows of Tn (a multiple of 16) floats: every row of scores starts on a cache line.
  // Eigen's sum() over a Map peels scalars up to the first aligned packet, so its summation order (hence
  // the softmax's last bits) followed the row's address: with malloc's 16-byte alignment the audio differed
  // from process to process.
  thread_local std::vector<float, Eigen::aligned_allocator<float>> kpad, scores;
  qb.resize(static_cast<size_t>(T * hd));
  kpad.resize(static_cast<size_t>(Tn * hd));
  std::fill(kpad.begin() + T * hd, kpad.end(), 0.0f);
  for (int64_t t = 0; t < T; ++t) {
    to_bf16(q.data() + t * H + head * hd, qb.data() + t * hd, hd);
    std::copy_n(k.data() + t * H + head * hd, hd, kpad.data() + t * hd);
  }
  kp.resize(static_cast<size_t>(packed_b_bf16_size(hd, Tn)));
  pack_bt_bf16(kpad.data(), hd, hd, Tn, kp.data());
  vp.resize(static_cast<size_t>(packed_b_bf16_size(T, hd)));
  pack_b_bf16(v.data() + head * hd, H, T, hd, vp.data());
  // Rows of queries in blocks, each through both products while its scores are in the core's L2 (the whole
  // head's, 0.5 MB at 363 tokens, went out to L3 between the passes over them). Every output value is the
  // same sequence of multiply-adds whatever the blocks: the same bits.
  constexpr int64_t kRows = 48;
  scores.resize(static_cast<size_t>(std::min(T, kRows) * Tn));
  pb.resize(scores.size());  // every value written below (zeroing all of it was ~2 % of ALBERT)
  for (int64_t r0 = 0; r0 < T; r0 += kRows) {
    const int64_t rows = std::min(kRows, T - r0);
    gemm_bf16(qb.data() + r0 * hd, hd, rows, hd, kp.data(), Tn, scores.data(), Tn);
    for (int64_t r = 0; r < rows; ++r) {
      float* row = scores.data() + r * Tn;
      scaled_to_bf16(row, softmax_row_unnormalised(row, T, Tn, scale), pb.data() + r * Tn, Tn);  // 0 past T
    }
    gemm_bf16(pb.data(), Tn, rows, Tk, vp.data(), hd, ctx.data() + r0 * H + head * hd, H);
  }
}

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
  std::unique_lock<std::mutex> kept(kept_->mutex, std::try_to_lock);
  Workspace own;
  Workspace& ws = kept.owns_lock() ? kept_->w : own;
  Tensor& e = ws.e;
  e.resize({T, emb_});  // every value written below
  for (int64_t t = 0; t < T; ++t) {
    if (ids[t] < 0 || ids[t] >= vocab_) throw Error("token id " + std::to_string(ids[t]) + " out of range");
    for (int64_t c = 0; c < emb_; ++c)
      e[t * emb_ + c] = word_.data[ids[t] * emb_ + c] + pos_.data[t * emb_ + c] + type_.data[c];
  }
  layer_norm_rows(e, emb_ln_w_.data, emb_ln_b_.data, kLayerNormEps);
  Tensor& x = ws.x;
  linear_rows(e, map_w_, &map_b_, x);
  // int8 (core/precision.h): the encoder layers' products in 8 bits, twice bf16's rate on AVX512-VNNI. The
  // embedding mapping (0.2 % of the multiply-adds) and the attention's own products (~7 % at 277 tokens) stay
  // in bf16.
  const bool int8 = kernel_precision() == Precision::int8 && hidden_ % 16 == 0 && ffn_w_.dim(0) % 16 == 0;
  auto linear = [int8](const Tensor& in, const TensorView& w, const TensorView* b, Tensor& y) {
    if (int8) return linear_rows_int8(in, w, b, y);
    linear_rows(in, w, b, y);
  };
  Int8Rows& xq = ws.xq;  // Q, K and V read one input: quantised once

  const int64_t hd = hidden_ / heads_;
  const float scale = 1.0f / std::sqrt(static_cast<float>(hd));
  Tensor &q = ws.q, &k = ws.k, &v = ws.v, &ctx = ws.ctx, &attn = ws.attn, &f = ws.f, &f2 = ws.f2;
  ctx.resize({T, hidden_});  // every column written by its head
  for (int64_t layer = 0; layer < layers_; ++layer) {
    if (int8) {
      quantize_for_linear_int8(x, xq);
      linear_rows_int8(x, xq, q_w_, &q_b_, q);
      linear_rows_int8(x, xq, k_w_, &k_b_, k);
      linear_rows_int8(x, xq, v_w_, &v_b_, v);
    } else {
      linear_rows(x, q_w_, &q_b_, q);
      linear_rows(x, k_w_, &k_b_, k);
      linear_rows(x, v_w_, &v_b_, v);
    }
    // Heads are independent: one task each (each writes its own columns of ctx).
    const bool bf16 = kernel_precision() != Precision::fp32 && hd % 16 == 0;
    parallel_for(heads_, [&](int64_t head) {
      if (bf16) return attention_head_bf16(q, k, v, head, hd, scale, ctx);
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
    linear(ctx, o_w_, &o_b_, attn);
    attn.matrix() += x.matrix();
    layer_norm_rows(attn, attn_ln_w_.data, attn_ln_b_.data, kLayerNormEps);
    linear(attn, ffn_w_, &ffn_b_, f);
    gelu_new(f);
    linear(f, ffn_out_w_, &ffn_out_b_, f2);
    f2.matrix() += attn.matrix();
    layer_norm_rows(f2, full_ln_w_.data, full_ln_b_.data, kLayerNormEps);
    std::swap(x, f2);
  }
  out = std::move(x);  // the workspace's x is allocated again next call (the caller keeps this one)
}

}  // namespace kokoro
