// The learned statistics predictor (issue 11): the whole-segment mean and variance of every generator AdaIN
// layer and channel, predicted from what is exact before the generator runs.
//
// Inputs (stats_predictor_features, layout kStatsFeatureLayout): per channel of the decoder features x
// (Decoder::features) their mean, standard deviation and the mean of leaky_relu(x, 0.1) (the generator's first
// layers are linear in that: their means follow from it), statistics of the F0 curve, the style vector and
// the segment's length. Targets per layer: the channels' means and log variances.
//
// Model: reduced-rank ridge regression. Features are standardised, a ridge regression to all standardised
// targets is fitted (kernel form: segments < features), and its fitted values are reduced to `rank`
// directions, so that a shared projection (features -> rank latent values) and, per target, `rank` weights
// and an offset predict everything (a few MB for the 18432 targets of Kokoro's generator).
//
// File: the model format (core/model_file.h), config {"kind": "kokoro-stats-predictor", "version",
// "feature_layout", "feature_dim", "rank", "layers": [{"name", "channels"}...], "segments", "voices", ...};
// tensors "features.mean" [D], "features.scale" [D], "latent.weight" [D, rank], and per layer
// "<layer>.mean.offset" [C], "<layer>.mean.weight" [C, rank], "<layer>.logvar.offset", "<layer>.logvar.weight".
// The two matrices may be stored as f16 (half the size; the shipped file, data/), the rest is f32. Config
// "model_identity" (StatsPredictor::model_identity) names the model it was fitted for: the engine uses a
// predictor only with that model (files made before identities existed have none and are trusted).
// Made by kokoro-stats-fit (bench/kokoro_stats_fit.cpp, docs/streaming.md).
#pragma once
#include <Eigen/Core>
#include <nlohmann/json.hpp>
#include <map>
#include <string>
#include <vector>

#include "core/model_file.h"
#include "core/error.h"
#include "core/tensor.h"
#include "vocoder/adain.h"

namespace kokoro {

inline constexpr const char* kStatsPredictorKind = "kokoro-stats-predictor";
inline constexpr int kStatsPredictorVersion = 1;
// What stats_predictor_features computes, in order; a file made for another layout is refused.
inline constexpr const char* kStatsFeatureLayout =
    "v1: x.mean[C] x.std[C] lrelu0.1(x).mean[C] f0(voiced share, voiced log-f0 mean and std, mean/100, rms/100) "
    "style[S] log(T) 10/sqrt(T)";

// The early layout (issue 28): features known as soon as the durations are, so that the F0 and energy
// branches (their 12 AdaIN layers) and the whole decoder (its 10 AdaIN layers as well as the generator's 48)
// can run in slices and only the acoustic model's text side stands before the first slice. asr [C, F] the
// aligned text features, shared [H, F] the prosody predictor's shared BiLSTM output (what the F0 and energy
// branches read), style the whole 256-float voice row. (v2-early, before the branches ran early, read the F0
// and energy curves instead of shared: those files are refused.)
inline constexpr const char* kStatsEarlyFeatureLayout =
    "v3-early: asr.mean[C] asr.std[C] shared.mean[H] shared.std[H] style[S] log(2F) 10/sqrt(2F)";

// The feature vector of one segment: x [C, T] = Decoder::features, f0 [T] the F0 curve (Hz, one value per x
// column), style the decoder's style vector (style_dim floats).
std::vector<float> stats_predictor_features(const Tensor& x, const float* f0, const float* style, int64_t style_dim);
int64_t stats_predictor_feature_dim(int64_t channels, int64_t style_dim);
std::vector<float> stats_predictor_early_features(const Tensor& asr, const Tensor& shared, const float* style,
                                                  int64_t style_dim);
int64_t stats_predictor_early_feature_dim(int64_t asr_channels, int64_t shared_channels, int64_t style_dim);

// A readable predictor file of another version or feature layout (fitted by an earlier version of the engine:
// refit it), as opposed to a damaged one. The engine's lookup passes over such a file found beside the model.
class OutdatedPredictorError : public Error {
 public:
  using Error::Error;
};

struct StatsLayerShape {
  std::string name;
  int64_t channels = 0;
};

using RowMatrixXf = Eigen::Matrix<float, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;

class StatsPredictor {
 public:
  std::vector<StatsLayerShape> layers;      // targets in this order: per layer C means, then C log variances
  Eigen::VectorXf feature_mean, feature_scale;  // [D]
  RowMatrixXf latent;                       // [D, rank]: standardised features -> latent values
  RowMatrixXf weight;                       // [M, rank]: latent values -> targets (M = 2 * sum of channels)
  Eigen::VectorXf offset;                   // [M]
  nlohmann::json info;                      // what it was fitted on (segments, voices, ...), saved in the config
  std::string fitted_for;                   // model_identity() of the model it was fitted for; "" if unknown
  std::string path;                         // the file it was loaded from (for messages)
  std::string feature_layout = kStatsFeatureLayout;  // kStatsFeatureLayout or kStatsEarlyFeatureLayout

  // Its features are known once the durations are (stats_predictor_early_features) and it predicts every
  // AdaIN layer of the F0 and energy branches and of the decoder (early_layers), so both can run in slices.
  bool early() const { return feature_layout == kStatsEarlyFeatureLayout; }

  int64_t feature_dim() const { return feature_mean.size(); }
  int64_t rank() const { return latent.cols(); }
  int64_t targets() const { return offset.size(); }

  // The targets for one feature vector (throws on a feature vector of the wrong length).
  Eigen::VectorXf predict_targets(const std::vector<float>& features) const;
  // Per layer: predicted whole-segment mean and variance of every channel.
  std::map<std::string, MomentStats> predict(const std::vector<float>& features) const;

  // `matrices`: how latent.weight and the per-layer weights are stored (f16: half the file, errors well
  // under the fit's own; docs/streaming.md); vectors are always f32.
  void save(const std::string& path, DType matrices = DType::f32) const;
  // Throws kokoro::Error naming the path for a missing, corrupt or foreign file. With a model: also when the
  // predictor does not fit it (mismatch()).
  static StatsPredictor load(const std::string& path, const ModelFile* model = nullptr);
  // Why this predictor cannot serve `model`, or "" when it can: its layers are not exactly the model's
  // generator AdaIN layers (early_layers for an early one; names and channel counts), or it records another
  // model's identity.
  std::string mismatch(const ModelFile& model) const;
  // A model's identity for predictors: a digest of its tensor index (every name and shape) and of the
  // generator AdaIN layers' style projections (every fc.bias, and the fc.weight of the first layer by
  // name), ~0.1 MB of weights. Another conversion of the same checkpoint gives the same identity (the
  // conversion is deterministic); another checkpoint, a fine-tune or a quantized form gives another.
  static std::string model_identity(const ModelFile& model);
  // The model's generator AdaIN layers (tensors "decoder.generator.*.fc.weight"), sorted by name.
  static std::vector<StatsLayerShape> generator_layers(const ModelFile& model);
  // Every AdaIN layer of the model's decoder (tensors "decoder.*.fc.weight": the decoder half's and the
  // generator's), sorted by name.
  static std::vector<StatsLayerShape> decoder_layers(const ModelFile& model);
  // What an early predictor predicts: the prosody predictor's F0 branch layers ("predictor.F0.*"), its energy
  // branch's ("predictor.N.*"), then decoder_layers, each part sorted by name.
  static std::vector<StatsLayerShape> early_layers(const ModelFile& model);
};

struct StatsFitOptions {
  double ridge = 1.0;  // the ridge penalty, relative to the mean eigenvalue of the standardised features' Gram matrix
  int rank = 48;       // latent dimensions kept
};

// Fits on N segments: features [N, D], targets [N, M] (layout of StatsPredictor::layers: per layer C means then
// C log variances). Deterministic.
// feature_layout: what the features are (recorded in the file).
StatsPredictor fit_stats_predictor(const Eigen::MatrixXf& features, const Eigen::MatrixXf& targets,
                                   std::vector<StatsLayerShape> layers, const StatsFitOptions& options,
                                   const std::string& feature_layout = kStatsFeatureLayout);

// The target vector of one segment from its captured statistics (InstanceStatsCapture), in the layout of layers.
Eigen::VectorXf stats_targets(const std::map<std::string, InstanceStats>& stats, const std::vector<StatsLayerShape>& layers);

}  // namespace kokoro
