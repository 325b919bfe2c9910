#include "vocoder/stream_generator.h"

#include <climits>
#include <cmath>

#include "core/error.h"
#include "core/kernels.h"

namespace kokoro {

StreamGenerator::StreamGenerator(const Generator& g, int64_t cpf, std::vector<NormLayer>& reg)
    : g_(g), source_(g.source_), stft_(g.stft_), istft_(g.stft_) {
  // Registration order follows the offline forward: per stage noise_res, then the resblocks.
  int64_t rate = cpf;
  for (size_t i = 0; i < g.stages_.size(); ++i) {
    const Generator::Stage& gs = g.stages_[i];
    rate *= gs.ups_stride;
    Stage s;
    const std::string n = std::to_string(i);
    s.noise_conv = std::make_unique<StreamConv1d>(gs.noise_conv_w, &gs.noise_conv_b, gs.noise_stride, gs.noise_padding, 1,
                                                  "noise_convs." + n);
    s.noise_res = std::make_unique<StreamSnakeResBlock>(*gs.noise_res, rate, reg);
    s.ups = std::make_unique<StreamConvTranspose1d>(gs.ups_w, &gs.ups_b, gs.ups_stride, gs.ups_padding, 0, false, "ups." + n);
    for (const auto& rb : gs.resblocks) s.resblocks.push_back(std::make_unique<StreamSnakeResBlock>(*rb, rate, reg));
    s.res_q.resize(gs.resblocks.size());
    s.reflect_pad = i + 1 == g.stages_.size();
    stages_.push_back(std::move(s));
  }
  post_ = std::make_unique<StreamConv1d>(g.post_w_, &g.post_b_, 1, 3, 1, "conv_post");
}

void StreamGenerator::begin(const float* style, NoiseSource& noise, NormPolicy& policy) {
  source_.begin(noise);
  stft_.begin();
  istft_.begin();
  for (size_t i = 0; i < stages_.size(); ++i) {
    Stage& s = stages_[i];
    const int64_t ch = g_.stages_[i].ups_b.dim(0);
    s.noise_conv->begin();
    s.noise_res->begin(style, policy);
    s.ups->begin();
    for (auto& rb : s.resblocks) rb->begin(style, policy);
    s.source_q.clear(ch);
    s.up_q.clear(ch);
    for (ColumnQueue& q : s.res_q) q.clear(ch);
    s.held.resize({ch, 0});
    s.pad_done = false;
  }
  post_->begin();
}

// nn.ReflectionPad1d((1, 0)) on a stream: column 1 goes in front of column 0.
void StreamGenerator::reflect_pad_left1(Stage& s, Tensor& up, bool last) {
  if (s.pad_done) return;
  append_columns(s.held, up, scratch_);
  if (s.held.dim(1) < 2) {
    if (last) throw Error("generator: reflection pad needs at least 2 samples, got " + std::to_string(s.held.dim(1)));
    up.resize({s.held.dim(0), 0});
    return;
  }
  Tensor first;
  copy_columns(s.held, 1, 1, first);
  append_columns(first, s.held, scratch_);
  std::swap(up, first);
  s.held.resize({up.dim(0), 0});
  s.pad_done = true;
}

void StreamGenerator::push(const float* f0, int64_t n_f0, const Tensor& x, bool last, Tensor& audio) {
  // Harmonic source and its STFT features.
  source_.push(f0, n_f0, last, excitation_);
  stft_.push(excitation_.data(), excitation_.numel(), last, har_);

  x_ = x;
  for (size_t i = 0; i < stages_.size(); ++i) {
    Stage& s = stages_[i];
    s.noise_conv->push(har_, last, xs_);
    s.noise_res->push(xs_, last, xr_);
    leaky_relu(x_, 0.1f);
    s.ups->push(x_, last, up_);
    if (s.reflect_pad) reflect_pad_left1(s, up_, last);
    // The two branches meet on the columns both have; each queue keeps only its branch's lead.
    const int64_t m = std::min(s.source_q.size() + xr_.dim(1), s.up_q.size() + up_.dim(1));
    s.up_q.take(up_, m, sum_);
    s.source_q.take(xr_, m, src_cols_);
    sum_.matrix() += src_cols_.matrix();
    if (res_.size() < s.resblocks.size()) res_.resize(s.resblocks.size());
    int64_t m2 = INT64_MAX;
    for (size_t j = 0; j < s.resblocks.size(); ++j) {
      s.resblocks[j]->push(sum_, last, res_[j]);
      m2 = std::min(m2, s.res_q[j].size() + res_[j].dim(1));
    }
    // xs = r0; xs += r1; xs += r2; x = xs / num_kernels (a true division, as in the reference)
    s.res_q[0].take(res_[0], m2, out_);
    for (size_t j = 1; j < s.res_q.size(); ++j) {
      s.res_q[j].take(res_[j], m2, part_);
      out_.matrix() += part_.matrix();
    }
    out_.matrix().array() /= static_cast<float>(s.resblocks.size());
    std::swap(x_, out_);
    if (last && (s.source_q.size() || s.up_q.size()))
      throw Error("generator stage " + std::to_string(i) + ": upsampled and source branches differ in length (" +
                  std::to_string(s.up_q.end()) + " vs " + std::to_string(s.source_q.end()) + " columns)");
  }
  leaky_relu(x_, 0.01f);
  post_->push(x_, last, post_out_);
  // exp / sin of the two halves of conv_post, then the inverse STFT.
  const int64_t K = g_.stft_.bins(), n = post_out_.dim(1);
  spec_.resize({K, n});
  phase_.resize({K, n});
  const float* p = post_out_.data();
  for (int64_t i = 0; i < K * n; ++i) {
    spec_.data()[i] = std::exp(p[i]);
    phase_.data()[i] = std::sin(p[K * n + i]);
  }
  istft_.push(spec_, phase_, last, audio);
}

}  // namespace kokoro
