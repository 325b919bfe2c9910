#include "vocoder/stream_decoder.h"

#include <algorithm>

#include "core/error.h"
#include "core/kernels.h"

namespace kokoro {

StreamDecoder::StreamDecoder(const Decoder& d)
    : dec_(d),
      f0_conv_(d.f0_conv_w_, &d.f0_conv_b_, 2, 1, 1, "F0_conv"),
      n_conv_(d.n_conv_w_, &d.n_conv_b_, 2, 1, 1, "N_conv") {
  encode_ = std::make_unique<StreamAdainResBlk1d>(*d.encode_, 1, layers_);
  for (const auto& blk : d.decode_) decode_.push_back(std::make_unique<StreamAdainResBlk1d>(*blk, 1, layers_));
  generator_first_layer_ = layers_.size();
  int64_t gen_cpf = 1;
  for (const auto& blk : d.decode_)
    if (blk->upsample()) gen_cpf *= 2;
  generator_ = std::make_unique<StreamGenerator>(*d.generator_, gen_cpf, layers_);
  dec_x_.resize(decode_.size());
  dec_res_.resize(decode_.size());
  dec_f0_.resize(decode_.size());
  dec_n_.resize(decode_.size());
}

void StreamDecoder::begin(const float* style, NoiseSource& noise, NormPolicy& policy, int64_t segment_frames,
                          Input input) {
  if (!style) throw Error("stream decoder: no style vector");
  input_ = input;
  if (input == Input::aligned_frames) {
    policy.bind(layers_);
  } else {
    policy.bind(std::vector<NormLayer>(layers_.begin() + generator_first_layer_, layers_.end()));
  }
  policy.begin_segment(segment_frames);
  generator_->begin(style, noise, policy);
  if (input == Input::decoder_features) {  // the decoder half ran whole: its blocks are not used (nor begun)
    frames_pushed_ = samples_emitted_ = f0_pushed_ = 0;
    active_ = true;
    return;
  }
  f0_conv_.begin();
  n_conv_.begin();
  encode_->begin(style, policy);
  for (auto& b : decode_) b->begin(style, policy);
  f0_pending_.clear();
  f0_sent_ = feature_columns_ = 0;
  enc_asr_.clear(dec_.asr_dim_);
  enc_f0_.clear(1);
  enc_n_.clear(1);
  for (size_t i = 0; i < decode_.size(); ++i) {
    dec_x_[i].clear(i == 0 ? dec_.encode_->dim_out() : dec_.decode_[i - 1]->dim_out());
    dec_res_[i].clear(dec_.asr_res_w_.dim(0));
    dec_f0_[i].clear(1);
    dec_n_[i].clear(1);
  }
  frames_pushed_ = samples_emitted_ = f0_pushed_ = 0;
  active_ = true;
}

void StreamDecoder::push(const Tensor& asr, const float* f0, const float* n, bool last, Tensor& audio) {
  if (!active_) throw Error("stream decoder: push outside a segment (call begin first)");
  if (input_ != Input::aligned_frames) throw Error("stream decoder: begun for decoder features, not frames");
  if (asr.rank() != 2 || asr.dim(0) != dec_.asr_dim_)
    throw Error("stream decoder: asr must be [" + std::to_string(dec_.asr_dim_) + ", m], got " + shape_to_string(asr.shape()));
  const int64_t m = asr.dim(1);
  if (m > 0 && (!f0 || !n)) throw Error("stream decoder: missing F0 or N values");
  if (last && frames_pushed_ + m < 1) throw Error("stream decoder: empty segment");
  frames_pushed_ += m;

  // F0 = F0_conv(F0_curve), N = N_conv(N): stride-2 convs over the 2 values per frame.
  f0_row_ = m ? Tensor::from(f0, {1, 2 * m}) : Tensor({1, 0});
  n_row_ = m ? Tensor::from(n, {1, 2 * m}) : Tensor({1, 0});
  f0_conv_.push(f0_row_, last, F0_);
  n_conv_.push(n_row_, last, N_);
  if (m > 0) {
    dec_.asr_residual(asr, asr_res_);
  } else {
    asr_res_.resize({64, 0});
  }

  // Each block's inputs meet on the columns all of them have (ColumnQueue::take queues only a branch's lead).
  // x = encode([asr; F0; N]).
  const int64_t me = std::min({enc_asr_.size() + m, enc_f0_.size() + F0_.dim(1), enc_n_.size() + N_.dim(1)});
  enc_asr_.take(asr, me, a_);
  enc_f0_.take(F0_, me, b_);
  enc_n_.take(N_, me, c_);
  stack_rows({&a_, &b_, &c_}, in_);
  encode_->push(in_, last, x_);

  // x = decode_i([x; asr_res; F0; N]).
  for (size_t i = 0; i < decode_.size(); ++i) {
    const int64_t md = std::min({dec_x_[i].size() + x_.dim(1), dec_res_[i].size() + asr_res_.dim(1),
                                 dec_f0_[i].size() + F0_.dim(1), dec_n_[i].size() + N_.dim(1)});
    dec_x_[i].take(x_, md, a_);
    dec_res_[i].take(asr_res_, md, b_);
    dec_f0_[i].take(F0_, md, c_);
    dec_n_[i].take(N_, md, d_);
    stack_rows({&a_, &b_, &c_, &d_}, in_);
    decode_[i]->push(in_, last, next_);
    std::swap(x_, next_);
  }

  // The F0 curve goes to the harmonic source kFeaturesSourceLeadFrames ahead of the features, not as far as
  // the frames pushed: the decoder half's look-ahead would otherwise make the source compute ~10 frames past
  // what the generator can use (first audio: docs/streaming.md, "The early start").
  if (m > 0) f0_pending_.insert(f0_pending_.end(), f0, f0 + 2 * m);
  feature_columns_ += x_.dim(1);
  const int64_t allowed = last ? f0_sent_ + static_cast<int64_t>(f0_pending_.size())
                               : feature_columns_ + 2 * kFeaturesSourceLeadFrames;
  const int64_t send = std::clamp<int64_t>(allowed - f0_sent_, 0, static_cast<int64_t>(f0_pending_.size()));
  f0_out_.assign(f0_pending_.begin(), f0_pending_.begin() + send);
  f0_pending_.erase(f0_pending_.begin(), f0_pending_.begin() + send);
  f0_sent_ += send;
  finish_push(f0_out_.data(), send, x_, last, audio);
}

void StreamDecoder::push_features(const Tensor& x, const float* f0, int64_t n_f0, bool last, Tensor& audio) {
  if (!active_) throw Error("stream decoder: push outside a segment (call begin first)");
  if (input_ != Input::decoder_features) throw Error("stream decoder: begun for aligned frames, not features");
  const int64_t cols = x.rank() == 2 ? x.dim(1) : -1;
  if (cols < 0 || cols % 2 || n_f0 < 0 || (n_f0 > 0 && !f0))
    throw Error("stream decoder: features must be [C, 2m] (got " + shape_to_string(x.shape()) + ") with F0 values");
  if (last && frames_pushed_ + cols / 2 < 1) throw Error("stream decoder: empty segment");
  if (last && f0_pushed_ + n_f0 != 2 * (frames_pushed_ + cols / 2))
    throw Error("stream decoder: " + std::to_string(f0_pushed_ + n_f0) + " F0 values for " +
                std::to_string(2 * (frames_pushed_ + cols / 2)) + " feature columns");
  frames_pushed_ += cols / 2;
  f0_pushed_ += n_f0;
  finish_push(f0, n_f0, x, last, audio);
}

void StreamDecoder::finish_push(const float* f0, int64_t n_f0, const Tensor& x, bool last, Tensor& audio) {
  generator_->push(f0, n_f0, x, last, audio);
  samples_emitted_ += audio.numel();
  if (last) {
    active_ = false;
    if (samples_emitted_ != frames_pushed_ * dec_.samples_per_frame())
      throw Error("stream decoder: emitted " + std::to_string(samples_emitted_) + " samples for " +
                  std::to_string(frames_pushed_) + " frames (internal)");
  }
}

}  // namespace kokoro
