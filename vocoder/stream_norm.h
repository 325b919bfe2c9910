// Where the streaming vocoder's AdaIN layers get their instance-norm statistics from.
//
// Offline, every AdaIN layer normalises with the mean and variance of its input over the whole segment
// (the reference's semantics). A chunk does not have the whole segment, so the streaming vocoder asks a
// NormPolicy for the statistics of each chunk of each layer:
//   SuppliedStats   fixed statistics per layer: the offline run's own (InstanceStatsCapture) for the
//                   equivalence tests, or a voice's calibrated priors (NormPriors).
//   ChunkStats      the statistics of the chunk itself: exact when the whole segment is one chunk (the
//                   pipelined exact mode), a naive baseline otherwise.
//   RunningStats    the statistics of every column seen so far in the segment (cumulative), optionally
//                   blended with a prior worth `prior_weight` frames of evidence (shrinkage: the prior
//                   dominates the first chunks, the segment's own columns take over as they accumulate).
// docs/streaming.md compares them.
#pragma once
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "core/tensor.h"
#include "vocoder/adain.h"

namespace kokoro {

// One AdaIN layer of the streaming graph.
struct NormLayer {
  int index = 0;
  std::string name;             // the AdaIN1d's weight prefix, e.g. "decoder.generator.resblocks.3.adain1.0"
  int64_t channels = 0;
  int64_t columns_per_frame = 0;  // its time resolution in columns per asr frame (1, 2, 20 or 120)
};

class NormPolicy {
 public:
  virtual ~NormPolicy() = default;
  // The layers of the graph, once, before any segment.
  virtual void bind(const std::vector<NormLayer>& layers) { layers_ = layers; }
  // A segment of `frames` asr frames starts.
  virtual void begin_segment(int64_t frames) {}
  // Statistics for the chunk x [C, n] (the layer's input, columns first .. first+n-1 of the segment, not
  // yet normalised). last: no further columns follow in this segment.
  virtual void statistics(const NormLayer& layer, const Tensor& x, int64_t first, bool last, InstanceStats& out) = 0;
  const std::vector<NormLayer>& layers() const { return layers_; }

 protected:
  std::vector<NormLayer> layers_;
};

// Per-voice priors: the expected statistics of every AdaIN layer, calibrated offline on sentences other
// than those measured. Stored as a model-format file (core/model_file.h): tensors "<layer>.mean" and
// "<layer>.var", config {"kind": "kokoro-norm-priors", "voice", "segments", "frames"}.
class NormPriors {
 public:
  std::map<std::string, MomentStats> layers;
  std::string voice;
  int64_t segments = 0, frames = 0;

  // Accumulates one offline segment's statistics (from InstanceStatsCapture), weighted by its frames.
  void add_segment(const std::map<std::string, InstanceStats>& stats, int64_t frames);
  // Turns the accumulated sums into means (call once after the last add_segment).
  void finish();
  void save(const std::string& path) const;
  static NormPriors load(const std::string& path);

 private:
  std::map<std::string, std::vector<double>> sum_mean_, sum_var_;
};

// Where kokoro-stream-eval caches a voice's calibrated priors (measurements only; no mode of the engine uses
// them): <model dir>/norm-priors-<voice>.kokoro, the model dir being models/ in a build tree and the data
// directory of an install (core/assets.h).
std::string norm_priors_path(const std::string& voice_name);

InstanceStats to_instance_stats(const MomentStats& m);
MomentStats to_moments(const InstanceStats& s);

class ChunkStats final : public NormPolicy {
 public:
  void statistics(const NormLayer& layer, const Tensor& x, int64_t first, bool last, InstanceStats& out) override;
};

class SuppliedStats final : public NormPolicy {
 public:
  explicit SuppliedStats(std::map<std::string, InstanceStats> stats) : stats_(std::move(stats)) {}
  static SuppliedStats from_priors(const NormPriors& priors);
  void bind(const std::vector<NormLayer>& layers) override;  // throws naming a layer without statistics
  void statistics(const NormLayer& layer, const Tensor& x, int64_t first, bool last, InstanceStats& out) override;
  void set(std::map<std::string, InstanceStats> stats) { stats_ = std::move(stats); }

 private:
  std::map<std::string, InstanceStats> stats_;
};

// One policy for the decoder's layers, another for the generator's ("decoder.generator." prefix).
class SplitStats final : public NormPolicy {
 public:
  SplitStats(std::unique_ptr<NormPolicy> decoder_part, std::unique_ptr<NormPolicy> generator_part);
  void bind(const std::vector<NormLayer>& layers) override;
  void begin_segment(int64_t frames) override;
  void statistics(const NormLayer& layer, const Tensor& x, int64_t first, bool last, InstanceStats& out) override;
  NormPolicy& decoder_part() { return *decoder_; }
  NormPolicy& generator_part() { return *generator_; }

 private:
  std::unique_ptr<NormPolicy> decoder_, generator_;
  std::vector<NormLayer> local_;  // layer as each part knows it (indices within that part)
  std::vector<bool> in_generator_;
};

class RunningStats final : public NormPolicy {
 public:
  // priors may be null (pure cumulative statistics); prior_weight in asr frames of evidence.
  RunningStats(std::shared_ptr<const NormPriors> priors, double prior_weight_frames);
  void bind(const std::vector<NormLayer>& layers) override;
  void begin_segment(int64_t frames) override;
  void statistics(const NormLayer& layer, const Tensor& x, int64_t first, bool last, InstanceStats& out) override;

 private:
  struct Acc {
    std::vector<double> sum, sum_sq;
    int64_t count = 0;
    const MomentStats* prior = nullptr;
  };
  std::shared_ptr<const NormPriors> priors_;
  double prior_weight_;
  std::vector<Acc> acc_;
};

// The learned predictor's whole-segment statistics (vocoder/stats_predictor.h), per layer: slice mode's.
// Fixed: the predicted moments for every chunk, so the audio does not depend on where chunks end. Pooled
// (kokoro-stream-eval's "predictpool", a measurement): the columns seen so far with their own moments, the
// predicted moments standing for the columns still to come (a layer's total is the segment's frames times
// its columns per frame).
class PredictedStats final : public NormPolicy {
 public:
  PredictedStats(std::map<std::string, MomentStats> predicted, bool pooled);
  void bind(const std::vector<NormLayer>& layers) override;  // throws naming a layer without a prediction
  void begin_segment(int64_t frames) override;
  void statistics(const NormLayer& layer, const Tensor& x, int64_t first, bool last, InstanceStats& out) override;

 private:
  struct Acc {
    std::vector<double> sum, sum_sq;
    int64_t count = 0;
    const MomentStats* predicted = nullptr;
  };
  std::map<std::string, MomentStats> predicted_;
  bool pooled_;
  int64_t frames_ = 0;
  std::vector<Acc> acc_;
};

// A policy by name: "chunk", "cumulative", "prior" (fixed priors), "blend:W" (priors worth W frames blended
// with the cumulative statistics). Throws kokoro::Error for an unknown name or a missing prior.
std::unique_ptr<NormPolicy> make_norm_policy(const std::string& spec, std::shared_ptr<const NormPriors> priors);

}  // namespace kokoro
