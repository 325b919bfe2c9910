// Gaussian test data with a fixed seed (the same values on every run), for kernel tests.
#pragma once
#include <random>
#include <vector>

namespace kokoro::test {

inline std::vector<float> randn(size_t n, unsigned seed, float scale = 1.0f) {
  std::mt19937 rng(seed);
  std::normal_distribution<float> d(0.0f, scale);
  std::vector<float> v(n);
  for (auto& x : v) x = d(rng);
  return v;
}

}  // namespace kokoro::test
