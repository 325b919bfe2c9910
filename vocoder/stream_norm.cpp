#include "vocoder/stream_norm.h"

#include <algorithm>
#include <cmath>

#include "core/assets.h"
#include "core/error.h"
#include "core/install_paths.h"
#include "core/model_file.h"

namespace kokoro {

std::string norm_priors_path(const std::string& voice_name) {
  std::string dir = build_tree().models;
  if (dir.empty()) {
    const std::vector<std::string> installed = installed_data_dirs();
    dir = installed.empty() ? configured_data_dir() : installed.front();
  }
  return dir + "/norm-priors-" + voice_name + ".kokoro";
}

namespace {

float inv_std_of(double var) { return static_cast<float>(1.0 / std::sqrt(std::max(var, 0.0) + kInstanceNormEps)); }

}  // namespace

InstanceStats to_instance_stats(const MomentStats& m) {
  InstanceStats s;
  s.mean = m.mean;
  s.inv_std.resize(m.var.size());
  for (size_t c = 0; c < m.var.size(); ++c) s.inv_std[c] = inv_std_of(m.var[c]);
  return s;
}

MomentStats to_moments(const InstanceStats& s) {
  MomentStats m;
  m.mean = s.mean;
  m.var.resize(s.inv_std.size());
  for (size_t c = 0; c < s.inv_std.size(); ++c) {
    const double inv = s.inv_std[c];
    m.var[c] = static_cast<float>(std::max(0.0, 1.0 / (inv * inv) - kInstanceNormEps));
  }
  return m;
}

void NormPriors::add_segment(const std::map<std::string, InstanceStats>& stats, int64_t segment_frames) {
  if (segment_frames < 1) throw Error("norm priors: segment without frames");
  for (const auto& [name, s] : stats) {
    const MomentStats m = to_moments(s);
    auto& sm = sum_mean_[name];
    auto& sv = sum_var_[name];
    if (sm.empty()) {
      sm.assign(m.mean.size(), 0.0);
      sv.assign(m.var.size(), 0.0);
    }
    if (sm.size() != m.mean.size()) throw Error("norm priors: layer " + name + " changed its channel count");
    for (size_t c = 0; c < sm.size(); ++c) {
      sm[c] += static_cast<double>(m.mean[c]) * segment_frames;
      sv[c] += static_cast<double>(m.var[c]) * segment_frames;
    }
  }
  ++segments;
  frames += segment_frames;
}

void NormPriors::finish() {
  if (frames < 1) throw Error("norm priors: no calibration segments");
  for (const auto& [name, sm] : sum_mean_) {
    MomentStats& m = layers[name];
    const auto& sv = sum_var_.at(name);
    m.mean.resize(sm.size());
    m.var.resize(sv.size());
    for (size_t c = 0; c < sm.size(); ++c) {
      m.mean[c] = static_cast<float>(sm[c] / frames);
      m.var[c] = static_cast<float>(sv[c] / frames);
    }
  }
  sum_mean_.clear();
  sum_var_.clear();
}

void NormPriors::save(const std::string& path) const {
  ModelWriter w({{"kind", "kokoro-norm-priors"}, {"voice", voice}, {"segments", segments}, {"frames", frames}});
  w.set_source("kokoro-stream-eval --calibrate");
  for (const auto& [name, m] : layers) {
    const int64_t C = static_cast<int64_t>(m.mean.size());
    w.add(name + ".mean", {C}, m.mean.data());
    w.add(name + ".var", {C}, m.var.data());
  }
  w.write(path);
}

NormPriors NormPriors::load(const std::string& path) {
  const auto file = ModelFile::open(path);
  const nlohmann::json& cfg = file->config();
  if (cfg.value("kind", "") != "kokoro-norm-priors") throw Error(path + ": not a norm-priors file");
  NormPriors p;
  p.voice = cfg.value("voice", "");
  p.segments = cfg.value("segments", int64_t{0});
  p.frames = cfg.value("frames", int64_t{0});
  for (const TensorInfo& t : file->tensors()) {
    const std::string suffix = ".mean";
    if (t.name.size() <= suffix.size() || t.name.compare(t.name.size() - suffix.size(), suffix.size(), suffix) != 0)
      continue;
    const std::string layer = t.name.substr(0, t.name.size() - suffix.size());
    const TensorView mean = file->get(layer + ".mean"), var = file->get(layer + ".var", mean.shape);
    MomentStats m;
    m.mean.assign(mean.data, mean.data + mean.numel());
    m.var.assign(var.data, var.data + var.numel());
    p.layers[layer] = std::move(m);
  }
  if (p.layers.empty()) throw Error(path + ": no layers in the norm-priors file");
  return p;
}

void ChunkStats::statistics(const NormLayer& layer, const Tensor& x, int64_t, bool, InstanceStats& out) {
  const int64_t C = x.dim(0), n = x.dim(1);
  out.mean.resize(C);
  out.inv_std.resize(C);
  for (int64_t c = 0; c < C; ++c) {
    const float* r = x.data() + c * n;
    double s = 0, ss = 0;
    for (int64_t t = 0; t < n; ++t) s += r[t];
    const double mean = n ? s / n : 0.0;
    for (int64_t t = 0; t < n; ++t) ss += (r[t] - mean) * (r[t] - mean);
    out.mean[c] = static_cast<float>(mean);
    out.inv_std[c] = inv_std_of(n ? ss / n : 0.0);
  }
}

SuppliedStats SuppliedStats::from_priors(const NormPriors& priors) {
  std::map<std::string, InstanceStats> s;
  for (const auto& [name, m] : priors.layers) s[name] = to_instance_stats(m);
  return SuppliedStats(std::move(s));
}

void SuppliedStats::bind(const std::vector<NormLayer>& layers) {
  for (const NormLayer& l : layers) {
    auto it = stats_.find(l.name);
    if (it == stats_.end()) throw Error("norm statistics: none supplied for layer " + l.name);
    if (static_cast<int64_t>(it->second.mean.size()) != l.channels)
      throw Error("norm statistics: layer " + l.name + " has " + std::to_string(l.channels) + " channels, statistics " +
                  std::to_string(it->second.mean.size()));
  }
  NormPolicy::bind(layers);
}

void SuppliedStats::statistics(const NormLayer& layer, const Tensor&, int64_t, bool, InstanceStats& out) {
  out = stats_.at(layer.name);
}

SplitStats::SplitStats(std::unique_ptr<NormPolicy> d, std::unique_ptr<NormPolicy> g)
    : decoder_(std::move(d)), generator_(std::move(g)) {
  if (!decoder_ || !generator_) throw Error("split statistics: both parts are needed");
}

void SplitStats::bind(const std::vector<NormLayer>& layers) {
  NormPolicy::bind(layers);
  std::vector<NormLayer> dec, gen;
  int max_index = -1;
  for (const NormLayer& l : layers) max_index = std::max(max_index, l.index);
  local_.assign(max_index + 1, NormLayer{});
  in_generator_.assign(max_index + 1, false);
  for (const NormLayer& l : layers) {
    const bool g = l.name.rfind("decoder.generator.", 0) == 0;
    std::vector<NormLayer>& part = g ? gen : dec;
    NormLayer local = l;
    local.index = static_cast<int>(part.size());  // each part sees its layers numbered from 0
    part.push_back(local);
    local_[l.index] = local;
    in_generator_[l.index] = g;
  }
  if (!dec.empty()) decoder_->bind(dec);
  if (!gen.empty()) generator_->bind(gen);
}

void SplitStats::begin_segment(int64_t frames) {
  decoder_->begin_segment(frames);
  generator_->begin_segment(frames);
}

void SplitStats::statistics(const NormLayer& layer, const Tensor& x, int64_t first, bool last, InstanceStats& out) {
  const size_t i = static_cast<size_t>(layer.index);
  (in_generator_.at(i) ? generator_ : decoder_)->statistics(local_.at(i), x, first, last, out);
}

RunningStats::RunningStats(std::shared_ptr<const NormPriors> priors, double prior_weight_frames)
    : priors_(std::move(priors)), prior_weight_(prior_weight_frames) {
  if (prior_weight_ < 0) throw Error("running statistics: negative prior weight");
  if (!priors_) prior_weight_ = 0;
}

void RunningStats::bind(const std::vector<NormLayer>& layers) {
  NormPolicy::bind(layers);
  int max_index = -1;
  for (const NormLayer& l : layers) max_index = std::max(max_index, l.index);
  acc_.assign(max_index + 1, Acc{});
  for (const NormLayer& l : layers) {
    Acc& a = acc_.at(l.index);
    if (priors_) {
      auto it = priors_->layers.find(l.name);
      if (it == priors_->layers.end()) throw Error("norm priors: no prior for layer " + l.name);
      if (static_cast<int64_t>(it->second.mean.size()) != l.channels)
        throw Error("norm priors: layer " + l.name + " channel count differs");
      a.prior = &it->second;
    }
  }
}

void RunningStats::begin_segment(int64_t) {
  for (Acc& a : acc_) {
    a.sum.assign(a.sum.size(), 0.0);
    a.sum_sq.assign(a.sum_sq.size(), 0.0);
    a.count = 0;
  }
}

void RunningStats::statistics(const NormLayer& layer, const Tensor& x, int64_t, bool, InstanceStats& out) {
  Acc& a = acc_.at(layer.index);
  const int64_t C = x.dim(0), n = x.dim(1);
  if (a.sum.empty()) {
    a.sum.assign(C, 0.0);
    a.sum_sq.assign(C, 0.0);
  }
  for (int64_t c = 0; c < C; ++c) {
    const float* r = x.data() + c * n;
    double s = 0, ss = 0;
    for (int64_t t = 0; t < n; ++t) {
      s += r[t];
      ss += static_cast<double>(r[t]) * r[t];
    }
    a.sum[c] += s;
    a.sum_sq[c] += ss;
  }
  a.count += n;
  const double w = a.prior ? prior_weight_ * static_cast<double>(layer.columns_per_frame) : 0.0;
  const double total = w + static_cast<double>(a.count);
  out.mean.resize(C);
  out.inv_std.resize(C);
  for (int64_t c = 0; c < C; ++c) {
    double mean = 0, m2 = 0;
    if (total > 0) {
      const double mu0 = a.prior ? a.prior->mean[c] : 0.0, var0 = a.prior ? a.prior->var[c] : 0.0;
      mean = (w * mu0 + a.sum[c]) / total;
      m2 = (w * (var0 + mu0 * mu0) + a.sum_sq[c]) / total;
    }
    out.mean[c] = static_cast<float>(mean);
    out.inv_std[c] = inv_std_of(m2 - mean * mean);
  }
}

PredictedStats::PredictedStats(std::map<std::string, MomentStats> predicted, bool pooled)
    : predicted_(std::move(predicted)), pooled_(pooled) {}

void PredictedStats::bind(const std::vector<NormLayer>& layers) {
  NormPolicy::bind(layers);
  int max_index = -1;
  for (const NormLayer& l : layers) max_index = std::max(max_index, l.index);
  acc_.assign(max_index + 1, Acc{});
  for (const NormLayer& l : layers) {
    auto it = predicted_.find(l.name);
    if (it == predicted_.end() || static_cast<int64_t>(it->second.mean.size()) != l.channels)
      throw Error("statistics predictor: no prediction for layer " + l.name + " with " + std::to_string(l.channels) +
                  " channels");
    acc_.at(l.index).predicted = &it->second;
  }
}

void PredictedStats::begin_segment(int64_t frames) {
  frames_ = frames;
  for (Acc& a : acc_) {
    a.sum.assign(a.sum.size(), 0.0);
    a.sum_sq.assign(a.sum_sq.size(), 0.0);
    a.count = 0;
  }
}

void PredictedStats::statistics(const NormLayer& layer, const Tensor& x, int64_t, bool, InstanceStats& out) {
  Acc& a = acc_.at(layer.index);
  const MomentStats& p = *a.predicted;
  const int64_t C = x.dim(0), n = x.dim(1);
  out.mean.resize(C);
  out.inv_std.resize(C);
  if (!pooled_) {
    for (int64_t c = 0; c < C; ++c) {
      out.mean[c] = p.mean[c];
      out.inv_std[c] = inv_std_of(p.var[c]);
    }
    return;
  }
  if (a.sum.empty()) {
    a.sum.assign(C, 0.0);
    a.sum_sq.assign(C, 0.0);
  }
  for (int64_t c = 0; c < C; ++c) {
    const float* r = x.data() + c * n;
    double s = 0, ss = 0;
    for (int64_t t = 0; t < n; ++t) {
      s += r[t];
      ss += static_cast<double>(r[t]) * r[t];
    }
    a.sum[c] += s;
    a.sum_sq[c] += ss;
  }
  a.count += n;
  const double rest = std::max<double>(0.0, static_cast<double>(frames_ * layer.columns_per_frame - a.count));
  const double total = rest + static_cast<double>(a.count);
  for (int64_t c = 0; c < C; ++c) {
    const double mu0 = p.mean[c], var0 = p.var[c];
    const double mean = (rest * mu0 + a.sum[c]) / total;
    const double m2 = (rest * (var0 + mu0 * mu0) + a.sum_sq[c]) / total;
    out.mean[c] = static_cast<float>(mean);
    out.inv_std[c] = inv_std_of(m2 - mean * mean);
  }
}

std::unique_ptr<NormPolicy> make_norm_policy(const std::string& spec, std::shared_ptr<const NormPriors> priors) {
  const auto colon = spec.find(':');
  const std::string kind = spec.substr(0, colon);
  auto need_priors = [&] {
    if (!priors) throw Error("statistics policy " + spec + " needs per-voice priors (kokoro-stream-eval --calibrate)");
  };
  if (kind == "chunk" && colon == std::string::npos) return std::make_unique<ChunkStats>();
  if (kind == "cumulative" && colon == std::string::npos) return std::make_unique<RunningStats>(nullptr, 0.0);
  if (kind == "prior" && colon == std::string::npos) {
    need_priors();
    return std::make_unique<SuppliedStats>(SuppliedStats::from_priors(*priors));
  }
  if (kind == "blend" && colon != std::string::npos) {
    need_priors();
    double w = -1;
    try {
      w = std::stod(spec.substr(colon + 1));
    } catch (const std::exception&) {
    }
    if (!(w >= 0)) throw Error("statistics policy " + spec + ": the weight must be a number of frames >= 0");
    return std::make_unique<RunningStats>(priors, w);
  }
  throw Error("unknown statistics policy \"" + spec + "\" (chunk, cumulative, prior, blend:W)");
}

}  // namespace kokoro
