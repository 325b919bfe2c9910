// fit_stats_predictor (vocoder/stats_predictor.h): what kokoro-stats-fit and the tests call, never the engine.
// A file and a library of its own (kokoro_stats_fit), compiled once instead of once per kernel variant of the
// compute library: Eigen's eigen-solvers make it the slowest file of the project to compile.
#include <Eigen/Eigenvalues>

#include <algorithm>
#include <cmath>

#include "core/error.h"
#include "vocoder/stats_predictor.h"

namespace kokoro {

StatsPredictor fit_stats_predictor(const Eigen::MatrixXf& features, const Eigen::MatrixXf& targets,
                                   std::vector<StatsLayerShape> layers, const StatsFitOptions& o,
                                   const std::string& feature_layout) {
  const int64_t N = features.rows(), D = features.cols(), M = targets.cols();
  int64_t layer_targets = 0;
  for (const StatsLayerShape& l : layers) layer_targets += 2 * l.channels;
  if (N < 2 || targets.rows() != N || layer_targets != M)
    throw Error("statistics predictor fit: " + std::to_string(N) + " feature rows, " + std::to_string(targets.rows()) +
                " target rows, " + std::to_string(M) + " targets for layers with " + std::to_string(layer_targets));
  if (o.rank < 1 || o.ridge < 0) throw Error("statistics predictor fit: need rank >= 1 and ridge >= 0");
  const int64_t r = std::min<int64_t>({o.rank, N, M});

  StatsPredictor p;
  p.layers = std::move(layers);
  p.feature_layout = feature_layout;
  // Standardised features Z and targets Ys (constant columns: scale 1).
  p.feature_mean = features.colwise().mean().transpose();
  Eigen::MatrixXd Z = (features.rowwise() - p.feature_mean.transpose()).cast<double>();
  p.feature_scale.resize(D);
  for (int64_t d = 0; d < D; ++d) {
    const double s = std::sqrt(Z.col(d).squaredNorm() / N);
    p.feature_scale[d] = s > 1e-8 ? static_cast<float>(s) : 1.0f;
    Z.col(d) /= p.feature_scale[d];
  }
  p.offset = targets.colwise().mean().transpose();
  Eigen::MatrixXf Ys = targets.rowwise() - p.offset.transpose();
  Eigen::VectorXf target_scale(M);
  for (int64_t m = 0; m < M; ++m) {
    const float s = std::sqrt(Ys.col(m).squaredNorm() / N);
    target_scale[m] = s > 1e-8f ? s : 1.0f;
    Ys.col(m) /= target_scale[m];
  }
  // Kernel ridge: with K = Z Z' = Q diag(lam) Q', the ridge coefficients are B = Z' Q diag(1 / (lam + l)) Q' Ys
  // and the fitted values Q diag(lam / (lam + l)) Q' Ys.
  const Eigen::MatrixXd K = Z * Z.transpose();
  const Eigen::SelfAdjointEigenSolver<Eigen::MatrixXd> eig(K);
  const Eigen::VectorXd lam = eig.eigenvalues().cwiseMax(0.0);
  const double l = o.ridge * lam.mean();
  const Eigen::MatrixXf Q = eig.eigenvectors().cast<float>();
  const Eigen::MatrixXf QtY = Q.transpose() * Ys;
  // Directions without variance (more segments than features, or ridge 0) are left out: a pseudo-inverse.
  const double floor = 1e-9 * std::max(1.0, lam.maxCoeff());
  Eigen::VectorXf shrink(N), inv(N);
  for (int64_t i = 0; i < N; ++i) {
    const bool used = lam[i] > floor;
    shrink[i] = used ? static_cast<float>(lam[i] / (lam[i] + l)) : 0.0f;
    inv[i] = used ? static_cast<float>(1.0 / (lam[i] + l)) : 0.0f;
  }
  const Eigen::MatrixXf fitted = Q * (shrink.asDiagonal() * QtY);
  // Reduced rank: the leading right singular vectors V of the fitted values (from the N x N Gram matrix).
  const Eigen::MatrixXd G = (fitted * fitted.transpose()).cast<double>();
  const Eigen::SelfAdjointEigenSolver<Eigen::MatrixXd> geig(G);
  Eigen::MatrixXf U(N, r);
  Eigen::VectorXf sv(r);
  for (int64_t k = 0; k < r; ++k) {  // eigenvalues ascending: take from the end
    U.col(k) = geig.eigenvectors().col(N - 1 - k).cast<float>();
    sv[k] = static_cast<float>(std::sqrt(std::max(geig.eigenvalues()[N - 1 - k], 1e-20)));
  }
  const Eigen::MatrixXf V = (fitted.transpose() * U) * sv.cwiseInverse().asDiagonal();  // [M, r]
  const Eigen::MatrixXf alphaV = Q * (inv.asDiagonal() * (QtY * V));  // [N, r]
  p.latent = (Z.cast<float>().transpose() * alphaV);                   // [D, r]
  p.weight = target_scale.asDiagonal() * V;                             // [M, r]
  p.info = {{"segments", N}, {"ridge", o.ridge}, {"rank", r}};
  return p;
}

}  // namespace kokoro
