#include "vocoder/stats_predictor.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "core/error.h"
#include "core/weight_cache.h"

namespace kokoro {

namespace {

constexpr float kLeakySlope = 0.1f;  // the generator's leaky_relu before each upsampling

bool ends_with(const std::string& s, const std::string& suffix) {
  return s.size() >= suffix.size() && s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

// The F0 curve's five features (both layouts): voiced share, voiced log-f0 mean and std, mean/100, rms/100.
void f0_features(const float* f0, int64_t T, float* g) {
  double voiced = 0, slog = 0, sslog = 0, sf = 0, ssf = 0;
  for (int64_t t = 0; t < T; ++t) {
    const double v = f0[t];
    sf += v;
    ssf += v * v;
    if (v > 10.0) {
      voiced += 1;
      slog += std::log(v);
      sslog += std::log(v) * std::log(v);
    }
  }
  const double lmean = voiced > 0 ? slog / voiced : 0.0;
  g[0] = static_cast<float>(voiced / T);
  g[1] = static_cast<float>(lmean);
  g[2] = static_cast<float>(voiced > 0 ? std::sqrt(std::max(0.0, sslog / voiced - lmean * lmean)) : 0.0);
  g[3] = static_cast<float>(sf / T / 100.0);
  g[4] = static_cast<float>(std::sqrt(ssf / T) / 100.0);
}

}  // namespace

int64_t stats_predictor_feature_dim(int64_t channels, int64_t style_dim) { return 3 * channels + 5 + style_dim + 2; }

std::vector<float> stats_predictor_features(const Tensor& x, const float* f0, const float* style, int64_t style_dim) {
  if (x.rank() != 2 || x.dim(1) < 1) throw Error("statistics predictor: expected features [C, T], got " + shape_to_string(x.shape()));
  if (!f0 || !style) throw Error("statistics predictor: no F0 curve or style vector");
  const int64_t C = x.dim(0), T = x.dim(1);
  std::vector<float> f(stats_predictor_feature_dim(C, style_dim));
  for (int64_t c = 0; c < C; ++c) {
    const float* r = x.data() + c * T;
    double s = 0, ss = 0, sl = 0;
    for (int64_t t = 0; t < T; ++t) {
      const double v = r[t];
      s += v;
      ss += v * v;
      sl += v > 0 ? v : kLeakySlope * v;
    }
    const double mean = s / T;
    f[c] = static_cast<float>(mean);
    f[C + c] = static_cast<float>(std::sqrt(std::max(0.0, ss / T - mean * mean)));
    f[2 * C + c] = static_cast<float>(sl / T);
  }
  float* g = f.data() + 3 * C;
  f0_features(f0, T, g);
  std::copy(style, style + style_dim, g + 5);
  g[5 + style_dim] = static_cast<float>(std::log(static_cast<double>(T)));
  g[6 + style_dim] = static_cast<float>(10.0 / std::sqrt(static_cast<double>(T)));
  return f;
}

int64_t stats_predictor_early_feature_dim(int64_t asr_channels, int64_t shared_channels, int64_t style_dim) {
  return 2 * asr_channels + 2 * shared_channels + style_dim + 2;
}

namespace {
// Per channel of x [C, F]: mean into out[c], standard deviation into out[C + c].
void channel_moments(const Tensor& x, float* out) {
  const int64_t C = x.dim(0), F = x.dim(1);
  for (int64_t c = 0; c < C; ++c) {
    const float* r = x.data() + c * F;
    double s = 0, ss = 0;
    for (int64_t t = 0; t < F; ++t) s += r[t], ss += double(r[t]) * r[t];
    const double mean = s / F;
    out[c] = static_cast<float>(mean);
    out[C + c] = static_cast<float>(std::sqrt(std::max(0.0, ss / F - mean * mean)));
  }
}
}  // namespace

std::vector<float> stats_predictor_early_features(const Tensor& asr, const Tensor& shared, const float* style,
                                                  int64_t style_dim) {
  if (asr.rank() != 2 || asr.dim(1) < 1) throw Error("statistics predictor: expected aligned features [C, F], got " + shape_to_string(asr.shape()));
  if (shared.rank() != 2 || shared.dim(1) != asr.dim(1))
    throw Error("statistics predictor: expected the shared prosody features [H, " + std::to_string(asr.dim(1)) + "], got " +
                shape_to_string(shared.shape()));
  if (!style) throw Error("statistics predictor: no style vector");
  const int64_t C = asr.dim(0), H = shared.dim(0), T = 2 * asr.dim(1);
  std::vector<float> f(stats_predictor_early_feature_dim(C, H, style_dim));
  channel_moments(asr, f.data());
  channel_moments(shared, f.data() + 2 * C);
  float* g = f.data() + 2 * C + 2 * H;
  std::copy(style, style + style_dim, g);
  g[style_dim] = static_cast<float>(std::log(static_cast<double>(T)));
  g[style_dim + 1] = static_cast<float>(10.0 / std::sqrt(static_cast<double>(T)));
  return f;
}

Eigen::VectorXf StatsPredictor::predict_targets(const std::vector<float>& features) const {
  if (static_cast<int64_t>(features.size()) != feature_dim())
    throw Error("statistics predictor " + path + ": " + std::to_string(features.size()) + " features given, it takes " +
                std::to_string(feature_dim()));
  const Eigen::VectorXf z =
      (Eigen::Map<const Eigen::VectorXf>(features.data(), feature_dim()) - feature_mean).cwiseQuotient(feature_scale);
  const Eigen::VectorXf h = latent.transpose() * z;
  return offset + weight * h;
}

std::map<std::string, MomentStats> StatsPredictor::predict(const std::vector<float>& features) const {
  const Eigen::VectorXf y = predict_targets(features);
  std::map<std::string, MomentStats> out;
  int64_t at = 0;
  for (const StatsLayerShape& l : layers) {
    MomentStats& m = out[l.name];
    m.mean.assign(y.data() + at, y.data() + at + l.channels);
    m.var.resize(l.channels);
    for (int64_t c = 0; c < l.channels; ++c)
      m.var[c] = std::max(0.0f, std::exp(y[at + l.channels + c]) - kInstanceNormEps);
    at += 2 * l.channels;
  }
  return out;
}

Eigen::VectorXf stats_targets(const std::map<std::string, InstanceStats>& stats, const std::vector<StatsLayerShape>& layers) {
  int64_t M = 0;
  for (const StatsLayerShape& l : layers) M += 2 * l.channels;
  Eigen::VectorXf y(M);
  int64_t at = 0;
  for (const StatsLayerShape& l : layers) {
    auto it = stats.find(l.name);
    if (it == stats.end()) throw Error("statistics predictor: no statistics captured for layer " + l.name);
    if (static_cast<int64_t>(it->second.mean.size()) != l.channels)
      throw Error("statistics predictor: layer " + l.name + " has " + std::to_string(it->second.mean.size()) +
                  " channels, expected " + std::to_string(l.channels));
    for (int64_t c = 0; c < l.channels; ++c) {
      y[at + c] = it->second.mean[c];
      y[at + l.channels + c] = -2.0f * std::log(it->second.inv_std[c]);  // log(var + eps)
    }
    at += 2 * l.channels;
  }
  return y;
}

namespace {

std::vector<StatsLayerShape> adain_layers(const ModelFile& model, const std::string& prefix) {
  std::map<std::string, int64_t> found;
  const std::string suffix = ".fc.weight";
  for (const TensorInfo& t : model.tensors())
    if (t.name.rfind(prefix, 0) == 0 && ends_with(t.name, suffix) && t.shape.size() == 2)
      found[t.name.substr(0, t.name.size() - suffix.size())] = t.shape[0] / 2;
  std::vector<StatsLayerShape> out;
  for (const auto& [name, c] : found) out.push_back({name, c});
  return out;
}

}  // namespace

std::vector<StatsLayerShape> StatsPredictor::generator_layers(const ModelFile& model) {
  return adain_layers(model, "decoder.generator.");
}

std::vector<StatsLayerShape> StatsPredictor::decoder_layers(const ModelFile& model) { return adain_layers(model, "decoder."); }

std::vector<StatsLayerShape> StatsPredictor::early_layers(const ModelFile& model) {
  std::vector<StatsLayerShape> out = adain_layers(model, "predictor.F0.");
  for (const auto* part : {"predictor.N.", "decoder."})
    for (StatsLayerShape& l : adain_layers(model, part)) out.push_back(std::move(l));
  return out;
}

void StatsPredictor::save(const std::string& file, DType matrices) const {
  nlohmann::json layer_list = nlohmann::json::array();
  for (const StatsLayerShape& l : layers) layer_list.push_back({{"name", l.name}, {"channels", l.channels}});
  nlohmann::json cfg = {{"kind", kStatsPredictorKind},       {"version", kStatsPredictorVersion},
                        {"feature_layout", feature_layout},    {"feature_dim", feature_dim()},
                        {"rank", rank()},                      {"layers", layer_list},
                        {"fit", info}};
  if (!fitted_for.empty()) cfg["model_identity"] = fitted_for;
  ModelWriter w(cfg);
  w.set_source("kokoro-stats-fit");
  const int64_t D = feature_dim(), r = rank();
  w.add("features.mean", {D}, feature_mean.data());
  w.add("features.scale", {D}, feature_scale.data());
  w.add("latent.weight", {D, r}, latent.data(), matrices);
  int64_t at = 0;
  for (const StatsLayerShape& l : layers) {
    const int64_t C = l.channels;
    w.add(l.name + ".mean.offset", {C}, offset.data() + at);
    w.add(l.name + ".mean.weight", {C, r}, weight.data() + at * r, matrices);
    w.add(l.name + ".logvar.offset", {C}, offset.data() + at + C);
    w.add(l.name + ".logvar.weight", {C, r}, weight.data() + (at + C) * r, matrices);
    at += 2 * C;
  }
  w.write(file);
}

StatsPredictor StatsPredictor::load(const std::string& file, const ModelFile* model) {
  const std::string what = "statistics predictor " + file + ": ";
  std::shared_ptr<const ModelFile> f;
  try {
    f = ModelFile::open(file);
  } catch (const Error& e) {
    throw Error(what + e.what());
  }
  const nlohmann::json& cfg = f->config();
  if (cfg.value("kind", "") != kStatsPredictorKind) throw Error(what + "not a statistics-predictor file");
  if (cfg.value("version", 0) != kStatsPredictorVersion)
    throw OutdatedPredictorError(what + "version " + std::to_string(cfg.value("version", 0)) + ", this engine reads " +
                                 std::to_string(kStatsPredictorVersion));
  const std::string layout = cfg.value("feature_layout", "");
  if (layout != kStatsFeatureLayout && layout != kStatsEarlyFeatureLayout)
    throw OutdatedPredictorError(what + "made for another feature layout (\"" + layout + "\"); refit it");
  StatsPredictor p;
  p.path = file;
  p.feature_layout = layout;
  try {
    const int64_t D = cfg.at("feature_dim").get<int64_t>(), r = cfg.at("rank").get<int64_t>();
    if (D < 1 || r < 1) throw Error("bad feature_dim or rank");
    for (const auto& l : cfg.at("layers")) p.layers.push_back({l.at("name").get<std::string>(), l.at("channels").get<int64_t>()});
    if (p.layers.empty()) throw Error("no layers");
    p.info = cfg.value("fit", nlohmann::json::object());
    p.fitted_for = cfg.value("model_identity", "");
    // Read straight into the predictor's own storage (row-major: a layer's rows are contiguous).
    p.feature_mean.resize(D);
    p.feature_scale.resize(D);
    p.latent.resize(D, r);
    f->read_floats("features.mean", {D}, p.feature_mean.data());
    f->read_floats("features.scale", {D}, p.feature_scale.data());
    f->read_floats("latent.weight", {D, r}, p.latent.data());
    int64_t M = 0;
    for (const StatsLayerShape& l : p.layers) M += 2 * l.channels;
    p.offset.resize(M);
    p.weight.resize(M, r);
    int64_t at = 0;
    for (const StatsLayerShape& l : p.layers) {
      const int64_t C = l.channels;
      const char* parts[2] = {".mean", ".logvar"};
      for (int k = 0; k < 2; ++k) {
        f->read_floats(l.name + parts[k] + ".offset", {C}, p.offset.data() + at + k * C);
        f->read_floats(l.name + parts[k] + ".weight", {C, r}, p.weight.data() + (at + k * C) * r);
      }
      at += 2 * C;
    }
  } catch (const Error& e) {
    throw Error(what + e.what());
  } catch (const nlohmann::json::exception& e) {
    throw Error(what + "bad config: " + e.what());
  }
  if (model) {
    const std::string why = p.mismatch(*model);
    if (!why.empty()) throw Error(what + why);
  }
  return p;
}

std::string StatsPredictor::mismatch(const ModelFile& model) const {
  const std::vector<StatsLayerShape> want = early() ? early_layers(model) : generator_layers(model);
  bool same = want.size() == layers.size();
  for (size_t i = 0; same && i < want.size(); ++i) same = want[i].name == layers[i].name && want[i].channels == layers[i].channels;
  if (!same)
    return "its " + std::to_string(layers.size()) + (early() ? " layers are not the F0, energy and decoder layers of " : " layers are not the generator layers of ") + model.path() + " (" +
           std::to_string(want.size()) + "); fit one for that model (scripts/fit-stats-predictor)";
  if (!fitted_for.empty()) {
    const std::string id = model_identity(model);
    if (id != fitted_for)
      return "fitted for another model (identity " + fitted_for + ", " + model.path() + " has " + id +
             "); fit one for that model (scripts/fit-stats-predictor)";
  }
  return "";
}

std::string StatsPredictor::model_identity(const ModelFile& model) {
  std::vector<const TensorInfo*> index;
  for (const TensorInfo& t : model.tensors()) index.push_back(&t);
  std::sort(index.begin(), index.end(), [](const TensorInfo* a, const TensorInfo* b) { return a->name < b->name; });
  std::string text;
  for (const TensorInfo* t : index) text += t->name + " " + to_string(t->dtype) + " " + shape_to_string(t->shape) + "\n";
  const std::vector<StatsLayerShape> gen = generator_layers(model);
  auto add_contents = [&](const std::string& name) {
    if (!model.has(name)) return;
    const TensorView v = model.get(name);
    char h[24];
    std::snprintf(h, sizeof h, "%016llx", static_cast<unsigned long long>(prepared_content_hash(v.data, v.numel() * sizeof(float))));
    text += name + " " + h + "\n";
  };
  for (size_t i = 0; i < gen.size(); ++i) {
    add_contents(gen[i].name + ".fc.bias");
    if (i == 0) add_contents(gen[i].name + ".fc.weight");
  }
  char id[32];
  std::snprintf(id, sizeof id, "v1:%016llx", static_cast<unsigned long long>(prepared_content_hash(text.data(), text.size())));
  return id;
}

}  // namespace kokoro
