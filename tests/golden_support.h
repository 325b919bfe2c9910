// Reading golden files (tests/data/golden/*.kokoro, written by tools/reference/make_goldens.py, format in
// docs/golden-data.md) and measuring a C++ tensor against them, whole or reduced.
#pragma once
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "core/assets.h"
#include "core/model_file.h"

namespace kokoro::test {

inline std::string golden_dir() {
  if (const char* env = std::getenv("KOKORO_GOLDEN_DIR"); env && *env) return env;
  return std::string(KOKORO_SOURCE_DIR) + "/tests/data/golden";
}

inline std::vector<std::string> golden_cases() {
  std::vector<std::string> cases;
  std::error_code ec;
  for (const auto& e : std::filesystem::directory_iterator(golden_dir(), ec))
    if (e.path().extension() == ".kokoro") cases.push_back(e.path().stem().string());
  std::sort(cases.begin(), cases.end());
  return cases;
}

// The real converted model, opened once per test binary; a missing file is reported, never skipped.
inline std::shared_ptr<const ModelFile> real_model(std::string* error) {
  static std::string err;
  static const std::shared_ptr<const ModelFile> m = []() -> std::shared_ptr<const ModelFile> {
    const std::string path = default_model_path();
    if (!std::filesystem::exists(path)) {
      err = "model file " + path + " is missing: golden tests need the real converted weights; create it with "
            "scripts/fetch-assets (after building kokoro-convert) or set KOKORO_MODEL";
      return nullptr;
    }
    try {
      return ModelFile::open(path);
    } catch (const std::exception& e) {
      err = e.what();
      return nullptr;
    }
  }();
  if (error) *error = err;
  return m;
}

class Golden {
 public:
  explicit Golden(const std::string& case_name)
      : name_(case_name), file_(ModelFile::open(golden_dir() + "/" + case_name + ".kokoro")) {}
  const std::string& name() const { return name_; }
  const nlohmann::json& config() const { return file_->config(); }
  bool has(const std::string& n) const { return file_->has(n); }
  bool reduced(const std::string& n) const { return file_->has(n + ".index"); }
  bool whole(const std::string& n) const { return has(n) && !reduced(n); }
  Tensor tensor(const std::string& n) const {
    const TensorView v = file_->get(n);
    return Tensor::from(v.data, v.shape);
  }
  std::vector<int64_t> ints(const std::string& n) const {
    const TensorView v = file_->get(n);
    std::vector<int64_t> out(v.numel());
    for (int64_t i = 0; i < v.numel(); ++i) out[i] = static_cast<int64_t>(std::lround(v.data[i]));
    return out;
  }

 private:
  std::string name_;
  std::shared_ptr<const ModelFile> file_;
};

struct Comparison {
  double max_abs = 0, max_ref = 0, sum_rel = 0;
  int64_t compared = 0;
  bool reduced = false;
  double rel() const { return max_ref > 0 ? max_abs / max_ref : max_abs; }
  // The error the limits apply to: elementwise relative error, and for reduced tensors also the relative
  // error of the per-channel sums over every time step.
  double worst() const { return std::max(rel(), sum_rel); }
};

// Compares `got` (the full tensor) with golden tensor `name`, whole or reduced along its time axis.
inline Comparison compare(const Golden& g, const std::string& name, const Tensor& got) {
  Comparison c;
  const Tensor ref = g.tensor(name);
  if (!g.reduced(name)) {
    if (ref.numel() != got.numel()) {
      c.max_abs = INFINITY;
      return c;
    }
    for (int64_t i = 0; i < ref.numel(); ++i) {
      c.max_abs = std::max(c.max_abs, double(std::fabs(got[i] - ref[i])));
      c.max_ref = std::max(c.max_ref, double(std::fabs(ref[i])));
    }
    c.compared = ref.numel();
    return c;
  }
  c.reduced = true;
  const auto& r = g.config().at("reduced").at(name);
  const Shape full = r.at("full_shape").get<Shape>();
  const int64_t axis = r.at("time_axis");
  if (full != got.shape()) {
    c.max_abs = INFINITY;
    return c;
  }
  const std::vector<int64_t> index = g.ints(name + ".index");
  int64_t outer = 1, inner = 1;
  for (int64_t d = 0; d < axis; ++d) outer *= full[d];
  for (size_t d = axis + 1; d < full.size(); ++d) inner *= full[d];
  const int64_t L = full[axis], K = static_cast<int64_t>(index.size());
  for (int64_t o = 0; o < outer; ++o)
    for (int64_t k = 0; k < K; ++k)
      for (int64_t i = 0; i < inner; ++i) {
        const float a = got[(o * L + index[k]) * inner + i], b = ref[(o * K + k) * inner + i];
        c.max_abs = std::max(c.max_abs, double(std::fabs(a - b)));
        c.max_ref = std::max(c.max_ref, double(std::fabs(b)));
        ++c.compared;
      }
  // Per-channel sums over every time step (channels = all axes but time, flattened).
  const Tensor sum = g.tensor(name + ".sum"), abssum = g.tensor(name + ".abssum");
  for (int64_t o = 0; o < outer; ++o)
    for (int64_t i = 0; i < inner; ++i) {
      double s = 0;
      for (int64_t t = 0; t < L; ++t) s += got[(o * L + t) * inner + i];
      const int64_t ch = o * inner + i;
      const double denom = std::max(double(abssum[ch]), 1e-30);
      c.sum_rel = std::max(c.sum_rel, std::fabs(s - sum[ch]) / denom);
    }
  return c;
}

inline void print_comparison(const std::string& golden_case, const std::string& name, const Comparison& c) {
  std::printf("  %-12s %-14s max|d| %.3e  rel %.3e%s", golden_case.c_str(), name.c_str(), c.max_abs, c.rel(),
              c.reduced ? "" : "\n");
  if (c.reduced) std::printf("  sumrel %.3e (reduced: %lld kept values)\n", c.sum_rel, static_cast<long long>(c.compared));
}

}  // namespace kokoro::test
