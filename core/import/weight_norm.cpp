// fold_weight_norm (declared in state_dict.h): the converter stores plain weights, so the weight_g/weight_v
// reparametrisation of torch.nn.utils.weight_norm is undone once, here, exactly as torch's _weight_norm
// computes it: weight = v * (g / ||v||), the norm over every dim except the one g keeps.
#include <cmath>
#include <vector>

#include "core/error.h"
#include "core/import/state_dict.h"

namespace kokoro {

namespace {

constexpr char kG[] = "weight_g";
constexpr char kV[] = "weight_v";

bool is_weight_norm_key(const std::string& key, const char* suffix) {
  const std::string s(suffix);
  return key == s || (key.size() > s.size() && key.ends_with("." + s));
}

// The dim that g keeps (g has the size of v there and 1 elsewhere), or -1 for a norm over all of v (g of a
// single element: weight_norm(dim=None), or any dim of size 1, which comes to the same thing).
int norm_dim(const std::string& g_key, const Shape& g, const Shape& v) {
  if (v.empty()) throw Error(g_key + ": weight_v is a scalar");
  if (shape_numel(g) == 1) return -1;
  if (g.size() != v.size())
    throw Error(g_key + ": shape " + shape_to_string(g) + " does not fit weight_v " + shape_to_string(v));
  int dim = -1;
  for (size_t d = 0; d < g.size(); ++d) {
    if (g[d] == 1) continue;
    if (g[d] != v[d] || dim != -1)
      throw Error(g_key + ": shape " + shape_to_string(g) + " does not fit weight_v " + shape_to_string(v));
    dim = static_cast<int>(d);
  }
  return dim;
}

LoadedTensor fold(const std::string& g_key, const LoadedTensor& g, const std::string& v_key, const LoadedTensor& v) {
  const int dim = norm_dim(g_key, g.shape, v.shape);
  // v viewed as [outer, n, inner] with n the kept dim (n = 1 for the whole-tensor norm).
  int64_t outer = 1, n = 1, inner = 1;
  if (dim < 0) {
    inner = shape_numel(v.shape);
  } else {
    for (int d = 0; d < dim; ++d) outer *= v.shape[d];
    n = v.shape[dim];
    for (size_t d = dim + 1; d < v.shape.size(); ++d) inner *= v.shape[d];
  }
  std::vector<double> sum_sq(static_cast<size_t>(n), 0.0);
  for (int64_t o = 0; o < outer; ++o)
    for (int64_t j = 0; j < n; ++j)
      for (int64_t i = 0; i < inner; ++i) {
        const double x = v.data[static_cast<size_t>((o * n + j) * inner + i)];
        sum_sq[j] += x * x;
      }
  std::vector<double> scale(static_cast<size_t>(n));
  for (int64_t j = 0; j < n; ++j) {
    if (!(sum_sq[j] > 0.0) || !std::isfinite(sum_sq[j]))
      throw Error(v_key + ": slice " + std::to_string(j) + " has norm " + std::to_string(std::sqrt(sum_sq[j])) +
                  ", cannot fold weight norm");
    scale[j] = static_cast<double>(g.data[static_cast<size_t>(j)]) / std::sqrt(sum_sq[j]);
  }
  LoadedTensor w;
  w.shape = v.shape;
  w.source_dtype = v.source_dtype;
  w.data.resize(v.data.size());
  for (int64_t o = 0; o < outer; ++o)
    for (int64_t j = 0; j < n; ++j)
      for (int64_t i = 0; i < inner; ++i) {
        const size_t k = static_cast<size_t>((o * n + j) * inner + i);
        w.data[k] = static_cast<float>(v.data[k] * scale[j]);
      }
  return w;
}

}  // namespace

void fold_weight_norm(StateDict& sd) {
  std::vector<std::string> g_keys;
  for (const auto& [key, t] : sd) {
    if (is_weight_norm_key(key, kG)) {
      g_keys.push_back(key);
    } else if (is_weight_norm_key(key, kV)) {
      const std::string g_key = key.substr(0, key.size() - 1) + "g";
      if (!sd.count(g_key)) throw Error(key + ": no matching " + g_key + " (weight norm)");
    }
  }
  for (const std::string& g_key : g_keys) {
    const std::string base = g_key.substr(0, g_key.size() - 2);  // "X.weight"
    const std::string v_key = base + "_v";
    auto v = sd.find(v_key);
    if (v == sd.end()) throw Error(g_key + ": no matching " + v_key + " (weight norm)");
    if (sd.count(base)) throw Error(g_key + ": " + base + " already exists beside the weight-norm pair");
    LoadedTensor w = fold(g_key, sd.at(g_key), v_key, v->second);
    sd.erase(v);
    sd.erase(g_key);
    sd.emplace(base, std::move(w));
  }
}

}  // namespace kokoro
