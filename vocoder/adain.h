// AdaIN1d of the reference: instance norm over time, then a per-channel affine predicted from the style:
//   h = fc(s); gamma, beta = h[:C], h[C:];  y = (1 + gamma) * InstanceNorm1d(x) + beta
// InstanceNorm1d has affine=True in the reference only to dodge an old ONNX-export bug; its weight/bias are
// absent from the official checkpoint (identity) but honoured here when a model file carries them.
//
// The layer is split into its two halves so that the offline path and the streaming vocoder
// (vocoder/stream_*.h) run the same arithmetic: the statistics (per-channel mean and 1/sqrt(var + eps) over
// the segment) and the normalisation of any run of columns given those statistics. Offline, apply()
// computes the statistics over the whole input; streaming, a statistics policy supplies them per chunk.
#pragma once
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "core/model_file.h"

namespace kokoro {

inline constexpr float kInstanceNormEps = 1e-5f;

// Per-channel statistics of one AdaIN input: x_hat = (x - mean) * inv_std.
struct InstanceStats {
  std::vector<float> mean, inv_std;
};

// Mean and variance per channel of one layer (what priors, calibration and the statistics predictor store).
struct MomentStats {
  std::vector<float> mean, var;
};

// The style half of an AdaIN layer for one style vector: y = (x - mean) * ((1 + gamma) * inv_std) + beta.
struct AdaINAffine {
  std::vector<float> gamma, beta;
};

// Normalises channel samples r[0..n) in place with given statistics and affine, the arithmetic of the
// offline layer step for step: r -= mean; r = r * ((1 + gamma) * inv_std) + beta.
void adain_normalize_row(float* r, int64_t n, float mean, float inv_std, float gamma, float beta);
// The second half of that: r = r * ((1 + gamma) * inv_std) + beta on already centred samples.
void adain_scale_row(float* r, int64_t n, float inv_std, float gamma, float beta);

class AdaIN1d {
 public:
  // prefix e.g. "decoder.encode.norm1"; channels C; style_dim the length of s.
  AdaIN1d(const ModelFile& model, const std::string& prefix, int64_t channels, int64_t style_dim);
  // Work on one channel's row right after it is normalised, while the row is still in cache (the Snake that
  // follows every generator AdaIN): then(channel, row, columns). Rows run in parallel.
  using RowEpilogue = std::function<void(int64_t c, float* row, int64_t n)>;
  // In place on x [C, T], statistics over all T columns (the reference's semantics), then `then` per row.
  void apply(Tensor& x, const float* style, const RowEpilogue& then = {}) const;
  // The same into dst (resized to src's shape; src is left as it is) in one pass over the rows: what
  // "dst = src; apply(dst)" computes, without a separate full-length copy.
  void apply(const Tensor& src, Tensor& dst, const float* style, const RowEpilogue& then = {}) const;
  // gamma/beta for this style (the fc projection, with a norm affine folded in when the file has one).
  AdaINAffine affine(const float* style) const;
  // Columns [c0, c0 + n) of x [C, T] in place, with statistics from elsewhere (the streaming path).
  void normalize(Tensor& x, int64_t c0, int64_t n, const InstanceStats& stats, const AdaINAffine& affine) const;
  int64_t channels() const { return channels_; }
  const std::string& name() const { return prefix_; }

 private:
  std::string prefix_;
  int64_t channels_;
  TensorView fc_w_, fc_b_;
  bool has_norm_affine_ = false;
  TensorView norm_w_, norm_b_;
};

// Records the statistics every AdaIN1d::apply computes on this thread while it is alive, keyed by the
// layer's name (e.g. "decoder.generator.resblocks.3.adain1.0"): the "statistics supplied from the offline
// run" of the streaming equivalence tests, and the calibration of per-voice priors. Scopes do not nest.
class InstanceStatsCapture {
 public:
  InstanceStatsCapture();
  ~InstanceStatsCapture();
  InstanceStatsCapture(const InstanceStatsCapture&) = delete;
  InstanceStatsCapture& operator=(const InstanceStatsCapture&) = delete;
  const std::map<std::string, InstanceStats>& stats() const { return stats_; }
  std::map<std::string, InstanceStats> take() { return std::move(stats_); }
  void record(const std::string& name, InstanceStats s);
  static InstanceStatsCapture* active();

 private:
  std::map<std::string, InstanceStats> stats_;
};

}  // namespace kokoro
