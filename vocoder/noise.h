// Randomness of the harmonic source (SineGen): initial harmonic phases and additive noise.
//
// The reference draws torch.rand / torch.randn_like, so its audio is not reproducible. Here noise is
// counter-based (value i of a stream is a pure function of i), so it can be produced in any order and any
// chunking, and so that golden tests can draw exactly the values the reference tool injects
// (tools/reference/test_noise.py; docs/golden-data.md):
//
//   splitmix64(x) = the splitmix64 finaliser (constants 0x9E3779B97F4A7C15, 0xBF58476D1CE4E5B9,
//                   0x94D049BB133111EB), arithmetic mod 2^64
//   uniform(stream, i) = float32(((splitmix64(key(stream, i)) >> 40) + 0.5) * 2^-24)     in (0, 1]
//   normal(stream, i)  = float32(sqrt(-2 ln u1) * cos(2 pi u2)) in double, u1 = uniform(stream, 2i),
//                        u2 = uniform(stream, 2i + 1)
//   TestNoise:   key(stream, i) = (stream << 32) + i
//   SeededNoise: key(stream, i) = ((stream << 32) + i) ^ splitmix64(seed)   (a different sequence per seed)
//   sine_phases(out9)[h] = uniform(1, h);  sine_noise(first, count)[j] = normal(2, first + j)
#pragma once
#include <cstdint>

namespace kokoro {

class NoiseSource {
 public:
  virtual ~NoiseSource() = default;
  // SineGen's rand_ini for the 9 harmonics (the caller zeroes the fundamental's, as the reference does).
  virtual void sine_phases(float* out9) = 0;
  // Standard normals for SineGen's noise, flat index t * 9 + h over [samples, 9], values first..first+count-1.
  // Called concurrently for disjoint ranges (the source draws blocks of samples in parallel).
  virtual void sine_noise(int64_t first_index, int64_t count, float* out) = 0;
};

uint64_t splitmix64(uint64_t x);

// Counter-based noise keyed by (stream, index) with an optional seed mask; see the header comment.
class CounterNoise : public NoiseSource {
 public:
  static constexpr uint64_t kStreamSinePhase = 1;
  static constexpr uint64_t kStreamSineNoise = 2;

  void sine_phases(float* out9) override;
  void sine_noise(int64_t first_index, int64_t count, float* out) override;

  float uniform(uint64_t stream, uint64_t index) const;
  float normal(uint64_t stream, uint64_t index) const;

 protected:
  explicit CounterNoise(uint64_t key_mask) : key_mask_(key_mask) {}

 private:
  uint64_t key_mask_;
};

// Exactly the reference tool's injected noise (golden tests).
class TestNoise : public CounterNoise {
 public:
  TestNoise() : CounterNoise(0) {}
};

// Production default: the same construction keyed by a seed; the same seed gives the same audio.
class SeededNoise : public CounterNoise {
 public:
  explicit SeededNoise(uint64_t seed) : CounterNoise(splitmix64(seed)) {}
};

}  // namespace kokoro
