#include "vocoder/decoder.h"

#include <numeric>

#include "core/error.h"
#include "core/kernels.h"

namespace kokoro {

namespace {

// Rows of several [C_i, T] tensors stacked into [sum C_i, T] (torch.cat along channels).
void concat_channels(std::initializer_list<const Tensor*> parts, Tensor& out) {
  int64_t C = 0;
  const int64_t T = (*parts.begin())->dim(1);
  for (const Tensor* p : parts) C += p->dim(0);
  out.resize({C, T});
  float* dst = out.data();
  for (const Tensor* p : parts) dst = std::copy(p->data(), p->data() + p->numel(), dst);
}

// A curve of 2F values given as [2F] or [1, 2F], as a [1, 2F] tensor.
Tensor as_row(const Tensor& curve, int64_t expected, const char* name) {
  const bool ok = (curve.rank() == 1 || (curve.rank() == 2 && curve.dim(0) == 1)) && curve.numel() == expected;
  if (!ok)
    throw Error(std::string("decoder: ") + name + " must have " + std::to_string(expected) +
                " values (2 per asr frame), got " + shape_to_string(curve.shape()));
  return Tensor::from(curve.data(), {1, expected});
}

}  // namespace

Decoder::Decoder(std::shared_ptr<const ModelFile> model) : model_(std::move(model)) {
  if (!model_) throw Error("decoder: no model file");
  const ModelFile& m = *model_;
  generator_ = std::make_unique<Generator>(m);
  const GeneratorConfig& g = generator_->config();
  style_dim_ = g.style_dim;
  // Two generator frames per asr frame (decode.3 upsamples x2), each expanded to prod(rates) * hop samples.
  samples_per_frame_ = 2LL * std::accumulate(g.upsample_rates.begin(), g.upsample_rates.end(), 1, std::multiplies<int>()) * g.hop;

  const std::string p = "decoder.";
  f0_conv_w_ = m.get(p + "F0_conv.weight", {1, 1, 3});
  f0_conv_b_ = m.get(p + "F0_conv.bias", {1});
  n_conv_w_ = m.get(p + "N_conv.weight", {1, 1, 3});
  n_conv_b_ = m.get(p + "N_conv.bias", {1});
  asr_res_w_ = m.get(p + "asr_res.0.weight", {64, asr_dim_, 1});
  asr_res_b_ = m.get(p + "asr_res.0.bias", {64});
  const int64_t hidden = 1024, cat = hidden + 2 + 64;
  encode_ = std::make_unique<AdainResBlk1d>(m, p + "encode", asr_dim_ + 2, hidden, style_dim_, false);
  for (int i = 0; i < 4; ++i) {
    const bool last = i == 3;
    decode_.push_back(std::make_unique<AdainResBlk1d>(m, p + "decode." + std::to_string(i), cat,
                                                      last ? g.upsample_initial_channel : hidden, style_dim_, last));
  }
}

void Decoder::condition(const Tensor& f0_row, const Tensor& n_row, Tensor& F0, Tensor& N) const {
  conv1d(f0_row, f0_conv_w_, &f0_conv_b_, 2, 1, 1, F0);
  conv1d(n_row, n_conv_w_, &n_conv_b_, 2, 1, 1, N);
}

void Decoder::asr_residual(const Tensor& asr, Tensor& asr_res) const {
  linear_columns(asr, asr_res_w_, &asr_res_b_, asr_res);
}

void Decoder::forward(const Tensor& asr, const Tensor& f0_curve, const Tensor& n_curve, const float* style,
                      NoiseSource& noise, Tensor& audio, const Trace* trace) const {
  Tensor x;
  features(asr, f0_curve, n_curve, style, x, trace);
  generator_->forward(x, f0_curve.data(), style, noise, audio, trace);
  kokoro::trace(trace, "audio", audio);
}

void Decoder::features(const Tensor& asr, const Tensor& f0_curve, const Tensor& n_curve, const float* style,
                       Tensor& x, const Trace* trace) const {
  if (asr.rank() != 2 || asr.dim(0) != asr_dim_ || asr.dim(1) < 1)
    throw Error("decoder: asr must be [" + std::to_string(asr_dim_) + ", F] with F >= 1, got " +
                shape_to_string(asr.shape()));
  if (!style) throw Error("decoder: no style vector");
  const int64_t F = asr.dim(1);
  const Tensor f0_row = as_row(f0_curve, 2 * F, "F0 curve"), n_row = as_row(n_curve, 2 * F, "N curve");

  Tensor F0, N;
  condition(f0_row, n_row, F0, N);
  kokoro::trace(trace, "dec_F0", F0);
  kokoro::trace(trace, "dec_N", N);

  Tensor in, asr_res, next;
  concat_channels({&asr, &F0, &N}, in);
  encode_->forward(in, style, x);
  asr_residual(asr, asr_res);
  kokoro::trace(trace, "dec_asr_res", asr_res);
  kokoro::trace(trace, "dec_encode", x);

  // The reference concatenates the residual features before every block up to and including the first
  // upsampling one, which is the last block here.
  for (size_t i = 0; i < decode_.size(); ++i) {
    concat_channels({&x, &asr_res, &F0, &N}, in);
    decode_[i]->forward(in, style, next);
    std::swap(x, next);
    kokoro::trace(trace, "dec_decode_" + std::to_string(i), x);
  }
}

double Decoder::features_macs_per_frame() const {
  double macs = static_cast<double>(encode_->macs_per_column() + asr_res_w_.numel());
  for (const auto& d : decode_) macs += static_cast<double>(d->macs_per_column());
  return macs;
}

}  // namespace kokoro
