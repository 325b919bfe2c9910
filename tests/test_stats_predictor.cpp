// The learned statistics predictor (vocoder/stats_predictor.h) without the model: the fit on generated data,
// the file's round trip, and clear errors for missing, corrupt, truncated and foreign files.
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <random>
#include <unistd.h>

#include "core/error.h"
#include "engine/stream_options.h"
#include "vocoder/stats_predictor.h"

using namespace kokoro;

namespace {

std::string temp_path(const std::string& name) {
  const auto dir = std::filesystem::temp_directory_path() / ("kokoro-test-stats-" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  return (dir / name).string();
}

const std::vector<StatsLayerShape> kLayers = {{"decoder.generator.a.adain1.0", 3}, {"decoder.generator.b.adain2.1", 5}};
constexpr int64_t kTargets = 2 * (3 + 5);

// Targets that are an exact linear function of the features (rank 4), on N segments of D features.
void linear_data(int64_t N, int64_t D, unsigned seed, Eigen::MatrixXf& F, Eigen::MatrixXf& Y) {
  std::mt19937 rng(seed);
  std::normal_distribution<float> g(0.0f, 1.0f);
  std::mt19937 fixed(7);  // the relation is the same for every call
  std::normal_distribution<float> h(0.0f, 1.0f);
  Eigen::MatrixXf A(D, 4), B(4, kTargets);
  Eigen::RowVectorXf c(kTargets);
  for (int64_t i = 0; i < A.size(); ++i) A.data()[i] = h(fixed);
  for (int64_t i = 0; i < B.size(); ++i) B.data()[i] = h(fixed);
  for (int64_t i = 0; i < c.size(); ++i) c[i] = h(fixed);
  F.resize(N, D);
  for (int64_t i = 0; i < F.size(); ++i) F.data()[i] = 3.0f * g(rng) + 1.0f;
  Y = (F * A * B).rowwise() + c;
}

StatsPredictor fitted() {
  Eigen::MatrixXf F, Y;
  linear_data(60, 12, 1, F, Y);
  StatsFitOptions o;
  o.ridge = 0.0;
  o.rank = 8;
  return fit_stats_predictor(F, Y, kLayers, o);
}

std::vector<float> row(const Eigen::MatrixXf& F, int64_t i) {
  std::vector<float> v(F.cols());
  for (int64_t d = 0; d < F.cols(); ++d) v[d] = F(i, d);
  return v;
}

}  // namespace

TEST(StatsPredictor, FitReproducesALinearRelationOnUnseenData) {
  const StatsPredictor p = fitted();
  Eigen::MatrixXf F, Y;
  linear_data(20, 12, 2, F, Y);  // other segments, same relation
  double worst = 0, scale = 0;
  for (int64_t i = 0; i < F.rows(); ++i) {
    const Eigen::VectorXf y = p.predict_targets(row(F, i));
    worst = std::max<double>(worst, (y - Y.row(i).transpose()).cwiseAbs().maxCoeff());
    scale = std::max<double>(scale, Y.row(i).cwiseAbs().maxCoeff());
  }
  EXPECT_GT(scale, 1.0);
  EXPECT_LT(worst, 1e-3 * scale);
}

TEST(StatsPredictor, PredictSplitsTargetsIntoMeansAndVariances) {
  const StatsPredictor p = fitted();
  Eigen::MatrixXf F, Y;
  linear_data(1, 12, 3, F, Y);
  const auto m = p.predict(row(F, 0));
  const Eigen::VectorXf y = p.predict_targets(row(F, 0));
  ASSERT_EQ(m.size(), 2u);
  const MomentStats& b = m.at("decoder.generator.b.adain2.1");
  ASSERT_EQ(b.mean.size(), 5u);
  EXPECT_FLOAT_EQ(b.mean[2], y[6 + 2]);                                         // b's means follow a's 6 targets
  for (int c = 0; c < 5; ++c) {  // then its log variances (log(var + eps); never a negative variance)
    const float e = std::exp(y[6 + 5 + c]);
    EXPECT_NEAR(b.var[c], std::max(0.0f, e - kInstanceNormEps), 1e-5f * e + 1e-9f) << "channel " << c;
  }
  EXPECT_THROW(p.predict(std::vector<float>(11, 0.0f)), Error);                 // wrong feature count
}

TEST(StatsPredictor, FileRoundTripsExactly) {
  const StatsPredictor p = fitted();
  const std::string path = temp_path("round.kokoro");
  p.save(path);
  const StatsPredictor q = StatsPredictor::load(path);
  EXPECT_EQ(q.path, path);
  ASSERT_EQ(q.layers.size(), p.layers.size());
  for (size_t i = 0; i < p.layers.size(); ++i) {
    EXPECT_EQ(q.layers[i].name, p.layers[i].name);
    EXPECT_EQ(q.layers[i].channels, p.layers[i].channels);
  }
  EXPECT_EQ(q.feature_mean, p.feature_mean);
  EXPECT_EQ(q.feature_scale, p.feature_scale);
  EXPECT_EQ(q.latent, p.latent);
  EXPECT_EQ(q.weight, p.weight);
  EXPECT_EQ(q.offset, p.offset);
  Eigen::MatrixXf F, Y;
  linear_data(3, 12, 4, F, Y);
  for (int64_t i = 0; i < 3; ++i) EXPECT_EQ(q.predict_targets(row(F, i)), p.predict_targets(row(F, i)));
}

TEST(StatsPredictor, MissingCorruptAndTruncatedFilesAreErrorsNamingThePath) {
  auto expect_error = [](const std::string& path, const std::string& also) {
    try {
      StatsPredictor::load(path);
      ADD_FAILURE() << "no error for " << path;
    } catch (const Error& e) {
      const std::string msg = e.what();
      EXPECT_NE(msg.find(path), std::string::npos) << msg;
      EXPECT_NE(msg.find(also), std::string::npos) << msg;
    }
  };
  expect_error(temp_path("does-not-exist.kokoro"), "statistics predictor");

  const std::string good = temp_path("good.kokoro");
  fitted().save(good);
  const auto size = std::filesystem::file_size(good);
  std::string bytes(size, '\0');
  std::ifstream(good, std::ios::binary).read(bytes.data(), static_cast<std::streamsize>(size));

  const std::string truncated = temp_path("truncated.kokoro");
  std::ofstream(truncated, std::ios::binary).write(bytes.data(), static_cast<std::streamsize>(size / 2));
  expect_error(truncated, "statistics predictor");

  const std::string corrupt = temp_path("corrupt.kokoro");
  std::string garbage = bytes;
  for (size_t i = 0; i < 64; ++i) garbage[i] = static_cast<char>(0xA5 ^ i);
  std::ofstream(corrupt, std::ios::binary).write(garbage.data(), static_cast<std::streamsize>(garbage.size()));
  expect_error(corrupt, "statistics predictor");
}

TEST(StatsPredictor, FilesOfAnotherKindLayoutOrModelAreRefused) {
  const float zero[4] = {0, 0, 0, 0};
  const std::string other_kind = temp_path("priors.kokoro");
  ModelWriter w(nlohmann::json{{"kind", "kokoro-norm-priors"}});
  w.add("x.mean", {1}, zero);
  w.write(other_kind);
  EXPECT_THROW(StatsPredictor::load(other_kind), Error);

  const std::string other_layout = temp_path("layout.kokoro");
  ModelWriter l({{"kind", kStatsPredictorKind}, {"version", kStatsPredictorVersion}, {"feature_layout", "v0: something else"}});
  l.add("features.mean", {1}, zero);
  l.write(other_layout);
  try {
    StatsPredictor::load(other_layout);
    ADD_FAILURE() << "another feature layout was accepted";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("feature layout"), std::string::npos) << e.what();
  }

  // A "model" whose generator has other AdaIN layers than the predictor's.
  const std::string predictor = temp_path("for-model.kokoro");
  fitted().save(predictor);
  const std::string model_path = temp_path("model.kokoro");
  ModelWriter m(nlohmann::json{{"kind", "test-model"}});
  std::vector<float> fc(2 * 3 * 4, 0.0f);
  m.add("decoder.generator.a.adain1.0.fc.weight", {6, 4}, fc.data());  // b is missing
  m.write(model_path);
  const auto model = ModelFile::open(model_path);
  try {
    StatsPredictor::load(predictor, model.get());
    ADD_FAILURE() << "a predictor for other layers was accepted";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find(predictor), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("not the generator layers"), std::string::npos) << e.what();
  }
  ModelWriter m2(nlohmann::json{{"kind", "test-model"}});
  std::vector<float> fc2(2 * 5 * 4, 0.0f);
  m2.add("decoder.generator.a.adain1.0.fc.weight", {6, 4}, fc.data());
  m2.add("decoder.generator.b.adain2.1.fc.weight", {10, 4}, fc2.data());
  const std::string model2 = temp_path("model2.kokoro");
  m2.write(model2);
  EXPECT_NO_THROW(StatsPredictor::load(predictor, ModelFile::open(model2).get()));
}

TEST(StatsPredictor, FeaturesHaveTheDocumentedLayout) {
  Tensor x({2, 4});
  const float xv[8] = {1, 2, 3, 6, -1, -1, -1, -1};
  std::copy(xv, xv + 8, x.data());
  const float f0[4] = {0, 100, 100, 0};
  const float style[3] = {0.5f, -0.5f, 2.0f};
  const std::vector<float> f = stats_predictor_features(x, f0, style, 3);
  ASSERT_EQ(static_cast<int64_t>(f.size()), stats_predictor_feature_dim(2, 3));
  EXPECT_FLOAT_EQ(f[0], 3.0f);                    // mean of channel 0
  EXPECT_FLOAT_EQ(f[1], -1.0f);                   // mean of channel 1
  EXPECT_FLOAT_EQ(f[2], std::sqrt(3.5f));         // std of channel 0
  EXPECT_FLOAT_EQ(f[3], 0.0f);                    // std of channel 1
  EXPECT_FLOAT_EQ(f[5], -0.1f);                   // mean of leaky_relu(channel 1)
  EXPECT_FLOAT_EQ(f[6], 0.5f);                    // voiced share
  EXPECT_FLOAT_EQ(f[7], std::log(100.0f));        // voiced log-F0 mean
  EXPECT_FLOAT_EQ(f[11], 0.5f);                   // the style
  EXPECT_FLOAT_EQ(f[14], std::log(4.0f));         // log T
}

// The apps' slice settings (engine/stream_options.h): the predictor beside the model when there is one,
// pooled statistics when there is none, KOKORO_SLICE_PREDICTOR to name another file or turn it off, and a
// corrupt or missing named file is an error, never a silent fallback.
TEST(StatsPredictor, SliceSettingsFindThePredictorBesideTheModel) {
  const auto dir = std::filesystem::path(temp_path("beside")) ;
  std::filesystem::create_directories(dir);
  const std::string model_path = (dir / "tiny-model.kokoro").string();
  ModelWriter m(nlohmann::json{{"kind", "test-model"}});
  std::vector<float> fc(2 * 5 * 4, 0.0f);
  m.add("decoder.generator.a.adain1.0.fc.weight", {6, 4}, fc.data());
  m.add("decoder.generator.b.adain2.1.fc.weight", {10, 4}, fc.data());
  m.write(model_path);
  const auto model = ModelFile::open(model_path);
  ::unsetenv("KOKORO_SLICE_PREDICTOR");
  EXPECT_EQ(stats_predictor_path(model_path), (dir / "tiny-model.stats-predictor.kokoro").string());

  std::string note;
  EXPECT_EQ(recommended_slice_options(*model, &note).slice.predictor, nullptr) << "no file: pooled statistics";
  EXPECT_NE(note.find("pooled"), std::string::npos) << note;

  fitted().save(stats_predictor_path(model_path));
  const StreamOptions with = recommended_slice_options(*model, &note);
  ASSERT_NE(with.slice.predictor, nullptr) << note;
  EXPECT_EQ(with.slice.predictor_subtract, 1.0);
  EXPECT_NE(note.find(stats_predictor_path(model_path)), std::string::npos) << note;

  ::setenv("KOKORO_SLICE_PREDICTOR", "none", 1);
  EXPECT_EQ(recommended_slice_options(*model).slice.predictor, nullptr);
  const std::string missing = (dir / "missing.kokoro").string();
  ::setenv("KOKORO_SLICE_PREDICTOR", missing.c_str(), 1);
  try {
    recommended_slice_options(*model);
    ADD_FAILURE() << "a named predictor that does not exist was ignored";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find(missing), std::string::npos) << e.what();
  }
  const std::string corrupt = (dir / "corrupt.kokoro").string();
  std::ofstream(corrupt) << "not a predictor";
  ::setenv("KOKORO_SLICE_PREDICTOR", corrupt.c_str(), 1);
  EXPECT_THROW(recommended_slice_options(*model), Error);
  ::unsetenv("KOKORO_SLICE_PREDICTOR");
}
