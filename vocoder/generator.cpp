#include "vocoder/generator.h"

#include <cmath>
#include <numeric>

#include "core/bf16_parking.h"
#include "core/error.h"
#include "core/kernels.h"
#include "core/parallel.h"
#include "core/precision.h"

namespace kokoro {

namespace {

std::vector<int> int_list(const nlohmann::json& j, const char* key, const std::string& where) {
  if (!j.contains(key) || !j[key].is_array()) throw Error(where + ": config has no list \"" + key + "\"");
  return j[key].get<std::vector<int>>();
}

int int_value(const nlohmann::json& j, const char* key, const std::string& where) {
  if (!j.contains(key) || !j[key].is_number_integer()) throw Error(where + ": config has no integer \"" + key + "\"");
  return j[key].get<int>();
}

// nn.ReflectionPad1d((1, 0)): one column in front, mirroring column 1.
void reflection_pad_left1(const Tensor& x, Tensor& y) {
  const int64_t C = x.dim(0), T = x.dim(1);
  if (T < 2) throw Error("generator: reflection pad needs at least 2 samples, got " + std::to_string(T));
  y.resize({C, T + 1});
  parallel_ranges(C, 8, elementwise_parts(C * T), [&](int64_t c0, int64_t c1) {
    for (int64_t c = c0; c < c1; ++c) {
      const float* src = x.data() + c * T;
      float* dst = y.data() + c * (T + 1);
      dst[0] = src[1];
      std::copy(src, src + T, dst + 1);
    }
  });
}

}  // namespace

GeneratorConfig GeneratorConfig::from_model(const ModelFile& model) {
  const std::string where = model.path();
  const nlohmann::json& config = model.config();
  if (!config.contains("istftnet")) throw Error(where + ": config has no \"istftnet\" section");
  const nlohmann::json& j = config["istftnet"];
  GeneratorConfig c;
  c.resblock_kernel_sizes = int_list(j, "resblock_kernel_sizes", where);
  c.upsample_rates = int_list(j, "upsample_rates", where);
  c.upsample_kernel_sizes = int_list(j, "upsample_kernel_sizes", where);
  if (!j.contains("resblock_dilation_sizes")) throw Error(where + ": config has no \"resblock_dilation_sizes\"");
  c.resblock_dilation_sizes = j["resblock_dilation_sizes"].get<std::vector<std::vector<int>>>();
  c.upsample_initial_channel = int_value(j, "upsample_initial_channel", where);
  c.n_fft = int_value(j, "gen_istft_n_fft", where);
  c.hop = int_value(j, "gen_istft_hop_size", where);
  c.style_dim = int_value(config, "style_dim", where);
  if (c.upsample_rates.empty() || c.upsample_rates.size() != c.upsample_kernel_sizes.size() ||
      c.resblock_kernel_sizes.size() != c.resblock_dilation_sizes.size() || c.resblock_kernel_sizes.empty())
    throw Error(where + ": inconsistent istftnet config");
  return c;
}

Generator::Generator(const ModelFile& model)
    : cfg_(GeneratorConfig::from_model(model)),
      source_(model, std::accumulate(cfg_.upsample_rates.begin(), cfg_.upsample_rates.end(), 1, std::multiplies<int>()) *
                         cfg_.hop),
      stft_(cfg_.n_fft, cfg_.hop) {
  const std::string p = "decoder.generator.";
  const int64_t feat = cfg_.n_fft + 2;  // har: magnitude and phase, n_fft/2+1 rows each
  const size_t stages = cfg_.upsample_rates.size(), kernels = cfg_.resblock_kernel_sizes.size();
  for (size_t i = 0; i < stages; ++i) {
    const int u = cfg_.upsample_rates[i], k = cfg_.upsample_kernel_sizes[i];
    const int64_t ch_in = cfg_.upsample_initial_channel >> i, ch = cfg_.upsample_initial_channel >> (i + 1);
    const std::string n = std::to_string(i);
    Stage s;
    s.ups_w = model.get(p + "ups." + n + ".weight", {ch_in, ch, k});
    s.ups_b = model.get(p + "ups." + n + ".bias", {ch});
    s.ups_stride = u;
    s.ups_padding = (k - u) / 2;
    const bool last = i + 1 == stages;
    if (!last) {
      const int stride_f0 = std::accumulate(cfg_.upsample_rates.begin() + i + 1, cfg_.upsample_rates.end(), 1,
                                            std::multiplies<int>());
      s.noise_conv_w = model.get(p + "noise_convs." + n + ".weight", {ch, feat, 2 * stride_f0});
      s.noise_stride = stride_f0;
      s.noise_padding = (stride_f0 + 1) / 2;
    } else {
      s.noise_conv_w = model.get(p + "noise_convs." + n + ".weight", {ch, feat, 1});
      s.noise_stride = 1;
      s.noise_padding = 0;
    }
    s.noise_conv_b = model.get(p + "noise_convs." + n + ".bias", {ch});
    s.noise_res = std::make_unique<SnakeResBlock>(model, p + "noise_res." + n, ch, last ? 11 : 7,
                                                  std::vector<int>{1, 3, 5}, cfg_.style_dim);
    for (size_t j = 0; j < kernels; ++j)
      s.resblocks.push_back(std::make_unique<SnakeResBlock>(model, p + "resblocks." + std::to_string(i * kernels + j),
                                                            ch, cfg_.resblock_kernel_sizes[j],
                                                            cfg_.resblock_dilation_sizes[j], cfg_.style_dim));
    stages_.push_back(std::move(s));
  }
  const int64_t ch_last = cfg_.upsample_initial_channel >> stages;
  post_w_ = model.get(p + "conv_post.weight", {feat, ch_last, 7});
  post_b_ = model.get(p + "conv_post.bias", {feat});

  // The work of each piece per input column: a conv's multiply-adds per output column are its weight's size;
  // stage i's output has prod(rates[0..i]) columns per input column (its transposed conv reads the input's).
  double in_columns = 1, total = 0;
  std::vector<std::vector<double>> work;
  for (const Stage& s : stages_) {
    const double columns = in_columns * s.ups_stride;
    std::vector<double> pieces{static_cast<double>(s.ups_w.numel()) * in_columns +
                               static_cast<double>(s.noise_conv_w.numel() + s.noise_res->macs_per_column()) * columns};
    for (const auto& r : s.resblocks) pieces.push_back(static_cast<double>(r->macs_per_column()) * columns);
    for (const double w : pieces) total += w;
    work.push_back(std::move(pieces));
    in_columns = columns;
  }
  total += static_cast<double>(post_w_.numel()) * in_columns;
  macs_per_column_ = total;
  double done = 0;
  for (const std::vector<double>& pieces : work) {
    done_after_.emplace_back();
    for (const double w : pieces) done_after_.back().push_back((done += w) / total);
  }
}

void Generator::report_piece(const WorkProgress* progress, size_t i, size_t piece) const {
  if (progress) progress->done(done_after_.at(i).at(piece));
}

void Generator::harmonic_features(const float* f0, int64_t frames, NoiseSource& noise, Tensor& har) const {
  Tensor excitation, mag, phase;
  source_.forward(f0, frames, noise, excitation);
  stft_.forward(excitation.data(), excitation.numel(), mag, phase);
  har.resize({2 * mag.dim(0), mag.dim(1)});
  std::copy(mag.data(), mag.data() + mag.numel(), har.data());
  std::copy(phase.data(), phase.data() + phase.numel(), har.data() + mag.numel());
}

void Generator::stage(size_t i, const Tensor& x_in, const Tensor& har, const float* style, Tensor& out,
                      const Trace* trace) const {
  Tensor x = x_in;
  run_stage(i, x, har, style, out, trace);
}

void Generator::run_stage(size_t i, Tensor& x, const Tensor& har, const float* style, Tensor& out,
                          const Trace* trace, const WorkProgress* progress) const {
  const Stage& s = stages_.at(i);
  const std::string n = std::to_string(i);
  // Every intermediate is freed as soon as it is used: at the last stage each one holds 128 channels at
  // 4800 columns per second of audio (61 MB for a 25 s segment), and keeping them all to the end of the
  // stage tripled the peak memory of long segments. The input x is consumed too (freed after the upsampling).
  Tensor x_res, up, part;
  leaky_relu(x, 0.1f);
  conv1d(har, s.noise_conv_w, &s.noise_conv_b, s.noise_stride, s.noise_padding, 1, x_res);
  s.noise_res->forward_in_place(x_res, style);  // noise_convs' output is not needed afterwards
  conv_transpose1d(x, s.ups_w, &s.ups_b, s.ups_stride, s.ups_padding, 0, up);
  x = Tensor();
  kokoro::trace(trace, "gen_ups_" + n, up);
  if (i + 1 == stages_.size()) {
    Tensor padded;
    reflection_pad_left1(up, padded);
    std::swap(up, padded);
  }
  if (up.shape() != x_res.shape())
    throw Error("generator stage " + n + ": upsampled " + shape_to_string(up.shape()) + " vs source branch " +
                shape_to_string(x_res.shape()));
  add_in_place(up, x_res);
  x_res = Tensor();
  report_piece(progress, i, 0);
  // xs = r0; xs += r1; xs += r2; x = xs / num_kernels (a true division, as in the reference, done with the
  // last addition; with one block the division by 1 is nothing). Each block runs in place on its own copy
  // of `up`; the last one on `up` itself, which is not needed afterwards. While a middle block runs, the sum
  // so far and `up` only wait: with bf16 kernels they wait in bf16 (core/bf16_parking.h), which takes the
  // last stage of a long segment, the process's peak, from four full-length tensors to three.
  const size_t blocks = s.resblocks.size();
  const bool park = kernel_precision() != Precision::fp32;
  copy_tensor(up, out);
  s.resblocks[0]->forward_in_place(out, style);
  report_piece(progress, i, 1);
  for (size_t j = 1; j + 1 < blocks; ++j) {
    if (park) {
      Bf16ParkedTensor sum_so_far, waiting_up;
      sum_so_far.park(out);
      copy_tensor(up, part);
      waiting_up.park(up);
      s.resblocks[j]->forward_in_place(part, style);
      sum_so_far.add_to(part);  // the same sums as out += part: an addition commutes
      out = std::move(part);
      waiting_up.restore(up);
    } else {
      copy_tensor(up, part);
      s.resblocks[j]->forward_in_place(part, style);
      add_in_place(out, part);
      part = Tensor();
    }
    report_piece(progress, i, j + 1);
  }
  if (blocks > 1) {
    s.resblocks[blocks - 1]->forward_in_place(up, style);
    add_in_place(out, up, static_cast<float>(blocks));
    report_piece(progress, i, blocks);
  }
}

void Generator::post(const Tensor& x_in, Tensor& conv_post) const {
  Tensor x;
  copy_tensor(x_in, x);
  leaky_relu(x, 0.01f);
  conv1d(x, post_w_, &post_b_, 1, 3, 1, conv_post);
}

void Generator::spectrum_to_audio(const Tensor& conv_post, Tensor& audio) const {
  const int64_t K = stft_.bins();
  if (conv_post.rank() != 2 || conv_post.dim(0) != 2 * K)
    throw Error("generator: conv_post output must be [" + std::to_string(2 * K) + ", n], got " +
                shape_to_string(conv_post.shape()));
  const int64_t n = conv_post.dim(1);
  Tensor spec({K, n}), phase({K, n});
  const float* p = conv_post.data();
  parallel_ranges(K * n, 4096, elementwise_parts(2 * K * n), [&](int64_t i0, int64_t i1) {
    for (int64_t i = i0; i < i1; ++i) {
      spec.data()[i] = std::exp(p[i]);
      phase.data()[i] = std::sin(p[K * n + i]);
    }
  });
  stft_.inverse(spec, phase, audio);
}

int64_t Generator::har_columns_per_frame() const {
  return std::accumulate(cfg_.upsample_rates.begin(), cfg_.upsample_rates.end(), int64_t{1}, std::multiplies<int64_t>());
}

void Generator::forward(const Tensor& x_in, const float* f0, const float* style, NoiseSource& noise, Tensor& audio,
                        const Trace* trace, const WorkProgress* progress, const StageDone& after_stage) const {
  if (x_in.rank() != 2 || x_in.dim(0) != cfg_.upsample_initial_channel)
    throw Error("generator: expected input [" + std::to_string(cfg_.upsample_initial_channel) + ", T], got " +
                shape_to_string(x_in.shape()));
  Tensor har;
  harmonic_features(f0, x_in.dim(1), noise, har);
  kokoro::trace(trace, "gen_har", har);
  forward_from_har(x_in, har, style, audio, trace, progress, after_stage);
}

void Generator::forward_from_har(const Tensor& x_in, const Tensor& har, const float* style, Tensor& audio,
                                 const Trace* trace, const WorkProgress* progress, const StageDone& after_stage) const {
  if (x_in.rank() != 2 || x_in.dim(0) != cfg_.upsample_initial_channel)
    throw Error("generator: expected input [" + std::to_string(cfg_.upsample_initial_channel) + ", T], got " +
                shape_to_string(x_in.shape()));
  if (har.rank() != 2 || har.dim(0) != cfg_.n_fft + 2 || har.dim(1) != x_in.dim(1) * har_columns_per_frame() + 1)
    throw Error("generator: harmonic features " + shape_to_string(har.shape()) + " do not match input " +
                shape_to_string(x_in.shape()));
  // Each stage consumes its input (the previous stage's output is freed once upsampled).
  Tensor x = x_in, next, post_out;
  for (size_t i = 0; i < stages_.size(); ++i) {
    run_stage(i, x, har, style, next, trace, progress);
    std::swap(x, next);
    kokoro::trace(trace, "gen_stage_" + std::to_string(i), x);
    if (after_stage) after_stage(i);
  }
  post(x, post_out);
  kokoro::trace(trace, "gen_conv_post", post_out);
  spectrum_to_audio(post_out, audio);
  report_progress(progress, 1.0);
}

}  // namespace kokoro
