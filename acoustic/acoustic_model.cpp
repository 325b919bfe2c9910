#include "acoustic/acoustic_model.h"

#include <numeric>

#include "core/error.h"
#include "core/parallel.h"
#include "core/precision.h"

namespace kokoro {

void repeat_columns(const Tensor& x, const std::vector<int64_t>& durations, Tensor& out) {
  const int64_t C = x.dim(0), T = x.dim(1);
  if (static_cast<int64_t>(durations.size()) != T) throw Error("repeat_columns: durations do not match the input");
  const int64_t F = std::accumulate(durations.begin(), durations.end(), int64_t{0});
  out.resize({C, F});
  for (int64_t c = 0; c < C; ++c) {
    const float* xr = x.data() + c * T;
    float* o = out.data() + c * F;
    for (int64_t t = 0; t < T; ++t) o = std::fill_n(o, durations[t], xr[t]);
  }
}

AcousticModel::AcousticModel(std::shared_ptr<const ModelFile> model)
    : model_(model), bert_(model), predictor_(model), text_encoder_(model) {
  hidden_ = model_->config().at("hidden_dim");
  style_dim_ = model_->config().at("style_dim");
  const int64_t bert_hidden = model_->config().at("plbert").at("hidden_size");
  bert_enc_w_ = model_->get("bert_encoder.weight", {hidden_, bert_hidden});
  bert_enc_b_ = model_->get("bert_encoder.bias", {hidden_});
}

namespace {

// bf16 (core/precision.h) reaches the acoustic model only when asked for everywhere (bf16-all, int8); int8 is
// seen by ALBERT and the LSTMs (core/lstm.h), the other kernels treat it as bf16.
Precision acoustic_kernel_precision() {
  const Precision p = precision();
  return p == Precision::int8 ? Precision::int8 : p == Precision::bf16_all ? Precision::bf16 : Precision::fp32;
}

}  // namespace

void AcousticModel::forward(const std::vector<int64_t>& ids, const float* style, float speed, AlignedFeatures& out,
                            const Trace* t) const {
  Tensor shared;
  forward_text(ids, style, speed, out, shared, t);
  forward_curves(shared, style, out, t);
}

void AcousticModel::extend_text_prefix(const std::vector<int64_t>& ids, TextEncoderPrefix& prefix) const {
  const ScopedKernelPrecision kernels(acoustic_kernel_precision());  // forward_text's: the same forms
  text_encoder_.extend(ids, prefix);
}

void AcousticModel::forward_text(const std::vector<int64_t>& ids, const float* style, float speed, AlignedFeatures& out,
                                 Tensor& shared, const Trace* t, TextEncoderPrefix* text_prefix) const {
  if (ids.empty()) throw Error("no tokens to synthesize");
  if (static_cast<int64_t>(ids.size()) > max_tokens())
    throw Error(std::to_string(ids.size()) + " tokens exceed the model's context of " + std::to_string(max_tokens()) +
                " (510 phonemes + 2 boundary tokens); split the text");
  const float* prosody_style = style + style_dim_;  // ref_s[:, 128:]
  const ScopedKernelPrecision kernels(acoustic_kernel_precision());
  const DenseJobs dense;  // one forward pass of many short jobs on the way to first audio
  Tensor bert_dur, d_en, d, dur_sum, en, t_en;
  bert_.forward(ids, bert_dur);
  trace(t, "bert_dur", bert_dur);
  {
    Tensor rows;
    linear_rows(bert_dur, bert_enc_w_, &bert_enc_b_, rows);
    d_en.resize({hidden_, rows.dim(0)});
    d_en.matrix() = rows.matrix().transpose();
  }
  trace(t, "d_en", d_en);
  predictor_.encode(d_en, prosody_style, d);
  trace(t, "d", d);
  predictor_.durations(d, speed, dur_sum, out.durations, t);
  trace(t, "dur_sum", dur_sum);
  if (t && *t) {
    Tensor pd({static_cast<int64_t>(out.durations.size())});
    for (size_t i = 0; i < out.durations.size(); ++i) pd[i] = static_cast<float>(out.durations[i]);
    trace(t, "pred_dur", pd);
  }
  if (t && *t) {  // en = d repeated by the durations, computed here only to be traced (shared_features repeats)
    Tensor d_cols({d.dim(1), d.dim(0)});
    d_cols.matrix() = d.matrix().transpose();
    repeat_columns(d_cols, out.durations, en);
    trace(t, "en", en);
  }
  predictor_.shared_features(d, out.durations, shared);
  text_encoder_.forward(ids, t_en, text_prefix);
  trace(t, "t_en", t_en);
  repeat_columns(t_en, out.durations, out.asr);
  trace(t, "asr", out.asr);
  out.f0 = Tensor();
  out.n = Tensor();
}

void AcousticModel::forward_curves(const Tensor& shared, const float* style, AlignedFeatures& out, const Trace* t) const {
  const ScopedKernelPrecision kernels(acoustic_kernel_precision());
  const DenseJobs dense;
  predictor_.curves_from_shared(shared, style + style_dim_, out.f0, out.n);
  trace(t, "F0_pred", out.f0);
  trace(t, "N_pred", out.n);
}

}  // namespace kokoro
