#include "vocoder/stream_blocks.h"

#include <cmath>

#include "core/error.h"
#include "core/kernels.h"

namespace kokoro {

StreamAdaIN::StreamAdaIN(const AdaIN1d& layer, int64_t columns_per_frame, std::vector<NormLayer>& registry)
    : layer_(layer), info_{static_cast<int>(registry.size()), layer.name(), layer.channels(), columns_per_frame} {
  registry.push_back(info_);
}

void StreamAdaIN::begin(const float* style, NormPolicy& policy) {
  policy_ = &policy;
  affine_ = layer_.affine(style);
  first_ = 0;
}

void StreamAdaIN::apply(Tensor& x, bool last) {
  const int64_t n = x.dim(1);
  if (n == 0) return;
  policy_->statistics(info_, x, first_, last, stats_);
  layer_.normalize(x, 0, n, stats_, affine_);
  first_ += n;
}

StreamAdainResBlk1d::StreamAdainResBlk1d(const AdainResBlk1d& b, int64_t cpf, std::vector<NormLayer>& reg)
    : b_(b),
      norm1_(b.norm1_, cpf, reg),
      norm2_(b.norm2_, b.upsample_ ? 2 * cpf : cpf, reg),
      conv1_(b.conv1_w_, &b.conv1_b_, 1, 1, 1, "conv1"),
      conv2_(b.conv2_w_, &b.conv2_b_, 1, 1, 1, "conv2") {
  if (b.upsample_) pool_.emplace(b.pool_w_, &b.pool_b_, 2, 1, 1, true, "pool");
}

void StreamAdainResBlk1d::begin(const float* style, NormPolicy& policy) {
  norm1_.begin(style, policy);
  norm2_.begin(style, policy);
  if (pool_) pool_->begin();
  conv1_.begin();
  conv2_.begin();
  shortcut_.clear(b_.dim_out_ == b_.dim_in_ ? b_.dim_in_ : b_.dim_out_);
  emitted_ = 0;
}

void StreamAdainResBlk1d::push(const Tensor& x, bool last, Tensor& out) {
  if (x.rank() != 2 || x.dim(0) != b_.dim_in_)
    throw Error("stream AdainResBlk1d: expected [" + std::to_string(b_.dim_in_) + ", n], got " + shape_to_string(x.shape()));
  // Residual branch, as AdainResBlk1d::forward.
  h_ = x;
  norm1_.apply(h_, last);
  leaky_relu(h_, 0.2f);
  if (pool_) {
    pool_->push(h_, last, pooled_);
    std::swap(h_, pooled_);
  }
  conv1_.push(h_, last, c1_);
  norm2_.apply(c1_, last);
  leaky_relu(c1_, 0.2f);
  conv2_.push(c1_, last, out);

  // Shortcut at the input rate (a 1x1 conv commutes with nearest upsampling).
  if (x.dim(1) > 0) {
    if (b_.conv1x1_w_) {
      linear_columns(x, *b_.conv1x1_w_, nullptr, sc_);
      shortcut_.push(sc_);
    } else {
      shortcut_.push(x);
    }
  }
  const int64_t m = out.dim(1), C = b_.dim_out_;
  const float inv_sqrt2 = 1.0f / std::sqrt(2.0f);  // torch.rsqrt(torch.tensor(2)) in float32
  const Tensor& sc = shortcut_.data();
  const int64_t n_sc = shortcut_.size(), first = shortcut_.first();
  float* o = out.data();
  for (int64_t j = 0; j < m; ++j) {
    const int64_t u = emitted_ + j;
    const int64_t src = (b_.upsample_ ? u / 2 : u) - first;
    if (src < 0 || src >= n_sc) throw Error("stream AdainResBlk1d: shortcut column missing (internal)");
    for (int64_t c = 0; c < C; ++c) o[c * m + j] = (o[c * m + j] + sc.data()[c * n_sc + src]) * inv_sqrt2;
  }
  emitted_ += m;
  shortcut_.drop_before(b_.upsample_ ? emitted_ / 2 : emitted_);
}

StreamSnakeResBlock::StreamSnakeResBlock(const SnakeResBlock& b, int64_t cpf, std::vector<NormLayer>& reg) : b_(b) {
  const int64_t k = b.kernel_size_;
  for (const SnakeResBlock::Unit& u : b.units_) {
    // Registration order: adain1 then adain2 of each unit, as the offline forward runs them.
    auto unit = std::unique_ptr<Unit>(new Unit{
        StreamAdaIN(u.adain1, cpf, reg), StreamAdaIN(u.adain2, cpf, reg),
        StreamConv1d(u.conv1_w, &u.conv1_b, 1, static_cast<int>((k * u.dilation - u.dilation) / 2), u.dilation, "convs1"),
        StreamConv1d(u.conv2_w, &u.conv2_b, 1, static_cast<int>((k - 1) / 2), 1, "convs2"), ColumnQueue{}});
    units_.push_back(std::move(unit));
  }
}

void StreamSnakeResBlock::begin(const float* style, NormPolicy& policy) {
  for (auto& u : units_) {
    u->adain1.begin(style, policy);
    u->adain2.begin(style, policy);
    u->conv1.begin();
    u->conv2.begin();
    u->skip.clear(b_.channels_);
  }
}

void StreamSnakeResBlock::push(const Tensor& x, bool last, Tensor& out) {
  if (x.rank() != 2 || x.dim(0) != b_.channels_)
    throw Error("stream SnakeResBlock: expected [" + std::to_string(b_.channels_) + ", n], got " + shape_to_string(x.shape()));
  // Working columns of this push, shared by every block on the thread (stream_ops.h, "Memory"): a block
  // keeps only its convolutions' context and its skip connections' lead.
  thread_local Tensor cur, t, c, skip_cols;
  cur = x;
  for (size_t i = 0; i < units_.size(); ++i) {
    Unit& u = *units_[i];
    const SnakeResBlock::Unit& w = b_.units_[i];
    t = cur;
    u.adain1.apply(t, last);
    snake(t, w.alpha1.data);
    u.conv1.push(t, last, c);
    u.adain2.apply(c, last);
    snake(c, w.alpha2.data);
    u.conv2.push(c, last, t);
    // x = x + xt, on the columns the branch has completed.
    u.skip.take(cur, t.dim(1), skip_cols);
    skip_cols.matrix() += t.matrix();
    std::swap(cur, skip_cols);
  }
  std::swap(out, cur);
}

}  // namespace kokoro
