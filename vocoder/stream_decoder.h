// The whole decoder (decoder.h) run chunk by chunk: aligned frames in, audio out, with every layer keeping
// its context between chunks (stream_ops.h, stream_blocks.h, stream_generator.h) and instance-norm
// statistics from a NormPolicy (stream_norm.h).
//
//   push(asr [512, m], f0 [2m], n [2m], last)  ->  the audio samples that these frames complete
//
// Given the offline run's statistics (SuppliedStats), the concatenated output equals Decoder::forward for
// any chunking (tests/test_stream_vocoder.cpp). Right context (look-ahead) per stage, i.e. how far past
// the last emitted sample the input must reach, is in docs/streaming.md; lookahead_samples() measures it
// on the live graph.
#pragma once
#include <memory>
#include <vector>

#include "vocoder/decoder.h"
#include "vocoder/stream_blocks.h"
#include "vocoder/stream_generator.h"

namespace kokoro {

class StreamDecoder {
 public:
  explicit StreamDecoder(const Decoder& decoder);
  StreamDecoder(const StreamDecoder&) = delete;
  StreamDecoder& operator=(const StreamDecoder&) = delete;

  // Every AdaIN layer of the graph, in order (what a NormPolicy is bound to).
  const std::vector<NormLayer>& norm_layers() const { return layers_; }

  // What push receives: aligned frames (the whole decoder streams), or the decoder's output computed
  // offline for the whole segment (Decoder::features: exact decoder statistics; only the generator streams).
  enum class Input { aligned_frames, decoder_features };

  // Starts a segment: style = ref_s (the decoder takes its first style_dim values), the noise for the
  // harmonic source, the statistics policy (bound to the layers that will run and told the segment's frame
  // count).
  void begin(const float* style, NoiseSource& noise, NormPolicy& policy, int64_t segment_frames,
             Input input = Input::aligned_frames);
  // The next m asr frames (m may be 0 with last) with their 2m F0 and energy values; writes the newly final
  // samples to `audio` (resized). last: the segment ends here; flushes everything.
  void push(const Tensor& asr, const float* f0, const float* n, bool last, Tensor& audio);
  // How many frames past the audio it is to complete a push of decoder features must reach, with the F0 curve
  // kFeaturesSourceLeadFrames ahead: the generator's look-ahead (2285 samples, docs/streaming.md), rounded up
  // to whole frames. Pushing m + this many frames from a segment's start completes at least m frames of audio.
  static constexpr int64_t kFeaturesLookaheadFrames = 4;
  static constexpr int64_t kFeaturesSourceLeadFrames = 2;

  // Input::decoder_features: the next 2m columns of Decoder::features, and the next n_f0 values of the F0
  // curve (one per column). The F0 curve may run ahead of the columns: the harmonic source path (SineGen,
  // STFT, noise convs, noise_res) then works ahead and leaves the critical path, which cuts the generator's
  // look-ahead from ~3425 to ~2285 samples (docs/streaming.md). At the end both totals must be equal.
  void push_features(const Tensor& x, const float* f0, int64_t n_f0, bool last, Tensor& audio);

  int64_t frames_pushed() const { return frames_pushed_; }
  int64_t samples_emitted() const { return samples_emitted_; }
  int64_t samples_per_frame() const { return dec_.samples_per_frame(); }

 private:
  void finish_push(const float* f0, int64_t n_f0, const Tensor& x, bool last, Tensor& audio);

  const Decoder& dec_;
  std::vector<NormLayer> layers_;
  StreamConv1d f0_conv_, n_conv_;
  std::unique_ptr<StreamAdainResBlk1d> encode_;
  std::vector<std::unique_ptr<StreamAdainResBlk1d>> decode_;
  std::unique_ptr<StreamGenerator> generator_;
  // Encode input queues [asr; F0; N] and, per decode block, [x; asr_res; F0; N].
  ColumnQueue enc_asr_, enc_f0_, enc_n_;
  std::vector<ColumnQueue> dec_x_, dec_res_, dec_f0_, dec_n_;
  size_t generator_first_layer_ = 0;  // layers_[i] for i >= this belong to the generator
  int64_t frames_pushed_ = 0, samples_emitted_ = 0, f0_pushed_ = 0;
  bool active_ = false;
  Input input_ = Input::aligned_frames;
  Tensor f0_row_, n_row_, F0_, N_, asr_res_, a_, b_, c_, d_, in_, x_, next_;
  // Input::aligned_frames: F0 values pushed but not yet sent to the generator (it gets them
  // kFeaturesSourceLeadFrames ahead of the decoder half's output columns).
  std::vector<float> f0_pending_, f0_out_;
  int64_t f0_sent_ = 0, feature_columns_ = 0;
};

}  // namespace kokoro
