// fold_weight_norm (declared in state_dict.h): the converter stores plain weights, so the weight-norm
// reparametrisation is undone once, here, as torch's _weight_norm computes it: weight = v * (g / ||v||),
// the norm over every dim except the one g keeps.
#include <cmath>
#include <vector>

#include "core/error.h"
#include "core/import/state_dict.h"

namespace kokoro {

namespace {

// How the (g, v) pair is named: torch.nn.utils.weight_norm, and torch >= 2.1's
// torch.nn.utils.parametrizations.weight_norm (which kokoro's current code uses). Both fold into "X.weight".
struct PairNames {
  const char* g;
  const char* v;
};
constexpr PairNames kSchemes[] = {
    {"weight_g", "weight_v"},
    {"parametrizations.weight.original0", "parametrizations.weight.original1"},
};

// "X.<suffix>" or a bare "<suffix>": the prefix "X." (or ""), if key ends in that whole suffix.
bool split_suffix(const std::string& key, const std::string& suffix, std::string& prefix) {
  if (key == suffix) {
    prefix.clear();
    return true;
  }
  if (key.size() > suffix.size() && key.ends_with("." + suffix)) {
    prefix = key.substr(0, key.size() - suffix.size());
    return true;
  }
  return false;
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
    // A zero slice with g = 0 is a zero weight (int8-quantized sources zero out tiny rows); torch would
    // compute 0/0 there, but the weight is 0 whatever v's direction. A zero slice with g != 0 is undefined.
    if (sum_sq[j] == 0.0 && g.data[static_cast<size_t>(j)] == 0.0f) {
      scale[j] = 0.0;
      continue;
    }
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
  struct Pair {
    std::string g, v, weight;
  };
  std::vector<Pair> pairs;
  std::string prefix;
  for (const auto& [key, t] : sd)
    for (const PairNames& scheme : kSchemes) {
      if (split_suffix(key, scheme.g, prefix)) {
        pairs.push_back({key, prefix + scheme.v, prefix + "weight"});
        if (!sd.count(pairs.back().v)) throw Error(key + ": no matching " + pairs.back().v + " (weight norm)");
      } else if (split_suffix(key, scheme.v, prefix) && !sd.count(prefix + scheme.g)) {
        throw Error(key + ": no matching " + prefix + scheme.g + " (weight norm)");
      }
    }
  for (const Pair& p : pairs) {
    if (sd.count(p.weight)) throw Error(p.g + ": " + p.weight + " already exists beside the weight-norm pair");
    LoadedTensor w = fold(p.g, sd.at(p.g), p.v, sd.at(p.v));
    sd.erase(p.g);
    sd.erase(p.v);
    sd.emplace(p.weight, std::move(w));
  }
}

}  // namespace kokoro
