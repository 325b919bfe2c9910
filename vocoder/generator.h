// The iSTFTNet Generator of the reference (istftnet.py): harmonic source -> STFT features `har`; per upsample
// stage i: x = ups_i(leaky_relu(x, 0.1)) (+ reflection pad (1, 0) on the last stage)
//          + noise_res_i(noise_convs_i(har)), then the mean of the stage's three SnakeResBlocks;
// finally conv_post(leaky_relu(x, 0.01)) -> exp(first n_fft/2+1 rows) as magnitude, sin(rest) as phase -> iSTFT.
// Hyper-parameters come from the model's config ("istftnet").
#pragma once
#include <functional>
#include <memory>
#include <vector>

#include "core/model_file.h"
#include "core/trace.h"
#include "vocoder/noise.h"
#include "vocoder/snake_resblock.h"
#include "vocoder/source.h"
#include "vocoder/stft.h"
#include "vocoder/work_progress.h"

namespace kokoro {

struct GeneratorConfig {
  std::vector<int> resblock_kernel_sizes, upsample_rates, upsample_kernel_sizes;
  std::vector<std::vector<int>> resblock_dilation_sizes;
  int upsample_initial_channel = 0, n_fft = 0, hop = 0, style_dim = 0;
  // Reads config["istftnet"] and config["style_dim"]; throws naming the missing key.
  static GeneratorConfig from_model(const ModelFile& model);
};

class StreamGenerator;

class Generator {
 public:
  explicit Generator(const ModelFile& model);
  // x [upsample_initial_channel, T] (the decoder's output), f0 [T] (F0 curve, one value per x column),
  // -> audio [T * prod(upsample_rates) * hop]. `progress` hears of each stage's pieces (its source branch,
  // then each resblock) and of the end, weighted by their multiply-adds (vocoder/work_progress.h).
  // after_stage, when given, runs after each upsample stage (its index): the offline path gives the stage's
  // weight pages back there on long segments (engine/synthesizer.h).
  using StageDone = std::function<void(size_t stage)>;
  void forward(const Tensor& x, const float* f0, const float* style, NoiseSource& noise, Tensor& audio,
               const Trace* trace = nullptr, const WorkProgress* progress = nullptr,
               const StageDone& after_stage = {}) const;
  // forward() after the harmonic source: har [n_fft + 2, T * up / hop + 1] as harmonic_features makes it.
  void forward_from_har(const Tensor& x, const Tensor& har, const float* style, Tensor& audio,
                        const Trace* trace = nullptr, const WorkProgress* progress = nullptr,
                        const StageDone& after_stage = {}) const;
  // Harmonic-feature columns per x column (prod(upsample_rates)), audio samples per x column (that * hop).
  int64_t har_columns_per_frame() const;
  int64_t samples_per_frame() const { return har_columns_per_frame() * cfg_.hop; }
  const GeneratorConfig& config() const { return cfg_; }
  // Multiply-adds per input column of the convolutions (the generator's work, from the weights' shapes).
  double macs_per_column() const { return macs_per_column_; }

  // The steps of forward, public so that golden tests can run each on the reference's own inputs.
  // har [n_fft + 2, T * up / hop + 1]: STFT magnitude rows then phase rows of the harmonic source.
  void harmonic_features(const float* f0, int64_t frames, NoiseSource& noise, Tensor& har) const;
  // Upsample stage i: x (previous stage's output, before its leaky ReLU) -> out. Traces gen_ups_i.
  void stage(size_t i, const Tensor& x, const Tensor& har, const float* style, Tensor& out,
             const Trace* trace = nullptr) const;
  size_t num_stages() const { return stages_.size(); }
  // conv_post(leaky_relu(x, 0.01)) -> [n_fft + 2, n]
  void post(const Tensor& x, Tensor& conv_post) const;
  // exp / sin of the two halves of conv_post, then the iSTFT -> audio [hop * (n - 1)]
  void spectrum_to_audio(const Tensor& conv_post, Tensor& audio) const;

 private:
  // stage() on x itself, which it consumes (leaves empty).
  void run_stage(size_t i, Tensor& x, const Tensor& har, const float* style, Tensor& out,
                 const Trace* trace, const WorkProgress* progress = nullptr) const;
  // The fraction of forward_from_har's work done after piece `piece` of stage `i` (0: the source branch and
  // the upsampling, 1 + j: resblock j), to progress.
  void report_piece(const WorkProgress* progress, size_t i, size_t piece) const;
  friend class StreamGenerator;  // runs the same weights chunk by chunk (vocoder/stream_generator.h)
  struct Stage {
    TensorView ups_w, ups_b;
    int ups_stride, ups_padding;
    TensorView noise_conv_w, noise_conv_b;
    int noise_stride, noise_padding;
    std::unique_ptr<SnakeResBlock> noise_res;
    std::vector<std::unique_ptr<SnakeResBlock>> resblocks;
  };
  GeneratorConfig cfg_;
  HarmonicSource source_;
  Stft stft_;
  std::vector<Stage> stages_;
  TensorView post_w_, post_b_;
  std::vector<std::vector<double>> done_after_;  // [stage][piece]: the fraction done, see report_piece
  double macs_per_column_ = 0;
};

}  // namespace kokoro
