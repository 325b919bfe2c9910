#include "vocoder/noise.h"

#include <cmath>
#include <numbers>

namespace kokoro {

uint64_t splitmix64(uint64_t x) {
  uint64_t z = x + 0x9E3779B97F4A7C15ull;
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

float CounterNoise::uniform(uint64_t stream, uint64_t index) const {
  const uint64_t bits = splitmix64(((stream << 32) + index) ^ key_mask_) >> 40;
  // Exact in double (24-bit integer + 0.5, times a power of two); the float conversion rounds to nearest.
  return static_cast<float>((static_cast<double>(bits) + 0.5) * 0x1p-24);
}

float CounterNoise::normal(uint64_t stream, uint64_t index) const {
  const double u1 = uniform(stream, 2 * index), u2 = uniform(stream, 2 * index + 1);
  return static_cast<float>(std::sqrt(-2.0 * std::log(u1)) * std::cos((2.0 * std::numbers::pi) * u2));
}

void CounterNoise::sine_phases(float* out9) {
  for (uint64_t h = 0; h < 9; ++h) out9[h] = uniform(kStreamSinePhase, h);
}

void CounterNoise::sine_noise(int64_t first_index, int64_t count, float* out) {
  for (int64_t j = 0; j < count; ++j) out[j] = normal(kStreamSineNoise, static_cast<uint64_t>(first_index + j));
}

}  // namespace kokoro
