// Quality measures of streamed audio against the exact (offline) audio of the same text, same noise:
//
//   LSD  log-spectral distance in dB: frames of 1024 samples every 256 (numpy.hanning window),
//        L = 20 log10(|rfft| + 1e-5); per frame sqrt(mean over bins of (L_a - L_b)^2), averaged over frames.
//        The same definition as tools/reference/compare_e2e.py (C++ vs the official reference: 0.134 dB).
//   MCD  mel-cepstral distortion in dB on the same frames: 80 mel bands (0..12 kHz, HTK mel) of the power
//        spectrum, natural log (floor 1e-10), orthonormal DCT-II, coefficients 1..24 (c0, the level, left
//        out as usual); per frame (10 / ln 10) sqrt(2 sum_d (c_d - c'_d)^2), averaged over frames.
//   Energy step at a sample position p: |20 log10(rms(x[p, p+W)) / rms(x[p-W, p)))| with W = 120 samples
//        (5 ms), windows below -60 dBFS floored there. Measured at chunk borders of streamed audio, and for
//        comparison at the same positions and at random positions of the exact audio.
#pragma once
#include <cstdint>
#include <vector>

namespace kokoro::bench {

double log_spectral_distance_db(const std::vector<float>& a, const std::vector<float>& b);
double mel_cepstral_distortion_db(const std::vector<float>& a, const std::vector<float>& b);
// Energy step in dB at each position (positions closer than W to either end are skipped).
std::vector<double> energy_steps_db(const std::vector<float>& x, const std::vector<int64_t>& positions);

// p-th percentile (0..100) of values (copied), linear interpolation; 0 for an empty set.
double percentile(std::vector<double> values, double p);
double mean(const std::vector<double>& values);

}  // namespace kokoro::bench
