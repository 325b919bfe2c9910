// The learned statistics predictor (vocoder/stats_predictor.h): the fit on generated data, the file's round trip
// (f32 and f16), clear errors for missing, corrupt, truncated and foreign files, the model identity, the
// slice settings' lookup (engine/stream_options.h) and, with the converted model, the shipped predictor.
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <random>
#include <unistd.h>

#include "core/assets.h"
#include "core/error.h"
#include "engine/stream_options.h"
#include "vocoder/stats_predictor.h"
#include "vocoder/stream_norm.h"

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

// The shipped form: matrices in f16 (to nearest), vectors exact; predictions within the matrices' rounding.
TEST(StatsPredictor, FileWithF16MatricesRoundTripsToHalfPrecision) {
  const StatsPredictor p = fitted();
  const std::string full = temp_path("full.kokoro"), half = temp_path("half.kokoro");
  p.save(full);
  p.save(half, DType::f16);
  EXPECT_LT(std::filesystem::file_size(half), std::filesystem::file_size(full));
  const StatsPredictor q = StatsPredictor::load(half);
  EXPECT_EQ(q.feature_mean, p.feature_mean);
  EXPECT_EQ(q.feature_scale, p.feature_scale);
  EXPECT_EQ(q.offset, p.offset);
  ASSERT_EQ(q.latent.rows(), p.latent.rows());
  ASSERT_EQ(q.weight.cols(), p.weight.cols());
  EXPECT_NE(q.latent, p.latent) << "stored in f16, so rounded";
  for (int64_t i = 0; i < p.latent.size(); ++i)
    EXPECT_NEAR(q.latent.data()[i], p.latent.data()[i], std::abs(p.latent.data()[i]) / 2048.0f + 3e-8f);
  for (int64_t i = 0; i < p.weight.size(); ++i)
    EXPECT_NEAR(q.weight.data()[i], p.weight.data()[i], std::abs(p.weight.data()[i]) / 2048.0f + 3e-8f);
  Eigen::MatrixXf F, Y;
  linear_data(3, 12, 4, F, Y);
  for (int64_t i = 0; i < 3; ++i) {
    const Eigen::VectorXf a = p.predict_targets(row(F, i)), b = q.predict_targets(row(F, i));
    EXPECT_LT((a - b).cwiseAbs().maxCoeff(), 1e-2f * (1.0f + a.cwiseAbs().maxCoeff())) << "segment " << i;
  }
  // Damaged f16 files are errors naming the path, like f32 ones.
  const auto size = std::filesystem::file_size(half);
  std::string bytes(size, '\0');
  std::ifstream(half, std::ios::binary).read(bytes.data(), static_cast<std::streamsize>(size));
  const std::string truncated = temp_path("half-truncated.kokoro");
  std::ofstream(truncated, std::ios::binary).write(bytes.data(), static_cast<std::streamsize>(size - 10));
  try {
    StatsPredictor::load(truncated);
    ADD_FAILURE() << "a truncated f16 predictor was accepted";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find(truncated), std::string::npos) << e.what();
  }
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

namespace {

// A tiny "model" with kLayers' generator AdaIN style projections; `bias` fills their fc.bias.
std::string write_tiny_model(const std::string& path, float bias) {
  ModelWriter m(nlohmann::json{{"kind", "test-model"}});
  std::vector<float> fc(2 * 5 * 4, 0.25f), b(2 * 5, bias);
  m.add("decoder.generator.a.adain1.0.fc.weight", {6, 4}, fc.data());
  m.add("decoder.generator.a.adain1.0.fc.bias", {6}, b.data());
  m.add("decoder.generator.b.adain2.1.fc.weight", {10, 4}, fc.data());
  m.add("decoder.generator.b.adain2.1.fc.bias", {10}, b.data());
  m.write(path);
  return path;
}

}  // namespace

// The identity follows the weights, not the file: the same weights written twice match, other weights do
// not, and a predictor fitted for one model is refused for the other (load with the model) or reported
// (mismatch). A predictor without an identity (made before identities) is checked by its layers only.
TEST(StatsPredictor, ModelIdentityTiesAPredictorToItsModel) {
  const auto a = ModelFile::open(write_tiny_model(temp_path("id-a.kokoro"), 0.5f));
  const auto a2 = ModelFile::open(write_tiny_model(temp_path("id-a2.kokoro"), 0.5f));
  const auto b = ModelFile::open(write_tiny_model(temp_path("id-b.kokoro"), 0.75f));
  const std::string ida = StatsPredictor::model_identity(*a);
  EXPECT_EQ(ida, StatsPredictor::model_identity(*a2));
  EXPECT_NE(ida, StatsPredictor::model_identity(*b));
  EXPECT_EQ(ida.rfind("v1:", 0), 0u) << ida;

  StatsPredictor p = fitted();
  p.fitted_for = ida;
  const std::string path = temp_path("for-a.kokoro");
  p.save(path, DType::f16);
  EXPECT_EQ(StatsPredictor::load(path).fitted_for, ida);
  EXPECT_NO_THROW(StatsPredictor::load(path, a2.get()));
  EXPECT_EQ(StatsPredictor::load(path).mismatch(*a), "");
  const std::string why = StatsPredictor::load(path).mismatch(*b);
  EXPECT_NE(why.find("another model"), std::string::npos) << why;
  try {
    StatsPredictor::load(path, b.get());
    ADD_FAILURE() << "a predictor for another model was accepted";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find(path), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("another model"), std::string::npos) << e.what();
  }
  const std::string old = temp_path("no-identity.kokoro");
  fitted().save(old);
  EXPECT_EQ(StatsPredictor::load(old).fitted_for, "");
  EXPECT_NO_THROW(StatsPredictor::load(old, b.get()));
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

// Runs `call`, which must throw kokoro::Error with `fragment` in its message.
template <typename Call>
void expect_error_naming(Call call, const std::string& fragment, const char* what) {
  try {
    call();
    ADD_FAILURE() << what << " was accepted";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find(fragment), std::string::npos) << e.what();
  }
}

// The apps' slice settings (engine/stream_options.h): the predictor beside the model when there is one and it
// was fitted for the model, none (slice mode then speaks as exact mode) when there is none (the shipped one is for kokoro-v1_0, not this
// tiny model: skipped), KOKORO_SLICE_PREDICTOR to name another file or turn it off, and a corrupt, missing or
// foreign named file is an error, never a silent fallback.
TEST(StatsPredictor, SliceSettingsFindThePredictorBesideTheModel) {
  const auto dir = std::filesystem::path(temp_path("beside")) ;
  std::filesystem::create_directories(dir);
  const std::string model_path = write_tiny_model((dir / "tiny-model.kokoro").string(), 0.5f);
  const auto model = ModelFile::open(model_path);
  ::unsetenv("KOKORO_SLICE_PREDICTOR");
  EXPECT_EQ(stats_predictor_path(model_path), (dir / "tiny-model.stats-predictor.kokoro").string());
  std::filesystem::remove(stats_predictor_path(model_path));

  std::string note;
  EXPECT_EQ(recommended_slice_options(*model, &note).predictor, nullptr) << "no file: no predictor";
  EXPECT_NE(note.find("exact mode"), std::string::npos) << note;

  StatsPredictor p = fitted();
  p.fitted_for = StatsPredictor::model_identity(*model);
  p.save(stats_predictor_path(model_path), DType::f16);
  const StreamOptions with = recommended_slice_options(*model, &note);
  ASSERT_NE(with.predictor, nullptr) << note;
  EXPECT_NE(note.find(stats_predictor_path(model_path)), std::string::npos) << note;

  // Beside the model but fitted for another: skipped (a warning), no predictor (slice mode speaks as exact).
  p.fitted_for = "v1:0123456789abcdef";
  p.save(stats_predictor_path(model_path), DType::f16);
  EXPECT_EQ(recommended_slice_options(*model, &note).predictor, nullptr) << note;
  EXPECT_NE(note.find("exact mode"), std::string::npos) << note;
  EXPECT_NE(note.find(stats_predictor_path(model_path) + " is for another model"), std::string::npos) << note;
  // Named explicitly: an error.
  ::setenv("KOKORO_SLICE_PREDICTOR", stats_predictor_path(model_path).c_str(), 1);
  expect_error_naming([&] { recommended_slice_options(*model); }, "another model", "a named predictor for another model");

  // An early predictor (features known before the F0 curve) serves the early start only, never the slices'
  // statistics: skipped in the slices' place beside the model, an error when named there.
  Eigen::MatrixXf F, Y;
  linear_data(60, 12, 1, F, Y);
  StatsFitOptions o;
  o.rank = 8;
  StatsPredictor early = fit_stats_predictor(F, Y, kLayers, o, kStatsEarlyFeatureLayout);
  early.fitted_for = StatsPredictor::model_identity(*model);
  early.save(stats_predictor_path(model_path));
  ::unsetenv("KOKORO_SLICE_PREDICTOR");
  EXPECT_EQ(recommended_slice_options(*model, &note).predictor, nullptr) << note;
  EXPECT_NE(note.find("is an early predictor"), std::string::npos) << note;
  ::setenv("KOKORO_SLICE_PREDICTOR", stats_predictor_path(model_path).c_str(), 1);
  expect_error_naming([&] { recommended_slice_options(*model); }, "serves only the early start",
                      "an early predictor in the slices' place");

  // In its own place beside the model (<stem>.early-stats-predictor.kokoro) it is the early start's, next to
  // the slices' predictor; KOKORO_EARLY_PREDICTOR names another file or turns it off, and a slices' predictor
  // named there is an error.
  ::unsetenv("KOKORO_SLICE_PREDICTOR");
  EXPECT_EQ(early_stats_predictor_path(model_path), (dir / "tiny-model.early-stats-predictor.kokoro").string());
  std::filesystem::rename(stats_predictor_path(model_path), early_stats_predictor_path(model_path));
  p.fitted_for = StatsPredictor::model_identity(*model);
  p.save(stats_predictor_path(model_path), DType::f16);
  ::unsetenv("KOKORO_EARLY_PREDICTOR");
  const StreamOptions both = recommended_slice_options(*model, &note);
  ASSERT_NE(both.predictor, nullptr) << note;
  ASSERT_NE(both.early_predictor, nullptr) << note;
  EXPECT_TRUE(both.early_predictor->early());
  EXPECT_NE(note.find("early start: predictor " + early_stats_predictor_path(model_path)), std::string::npos) << note;
  ::setenv("KOKORO_EARLY_PREDICTOR", "none", 1);
  EXPECT_EQ(recommended_slice_options(*model, &note).early_predictor, nullptr);
  EXPECT_NE(note.find("no early start"), std::string::npos) << note;
  ::setenv("KOKORO_EARLY_PREDICTOR", stats_predictor_path(model_path).c_str(), 1);
  expect_error_naming([&] { recommended_slice_options(*model); }, "not an early predictor",
                      "a slices' predictor for the early start");
  ::unsetenv("KOKORO_EARLY_PREDICTOR");
  std::filesystem::remove(early_stats_predictor_path(model_path));
  EXPECT_EQ(recommended_slice_options(*model, &note).early_predictor, nullptr) << note;
  EXPECT_NE(note.find("no early start"), std::string::npos) << note;
  // One an earlier version fitted (another feature layout), found beside the model: passed over with a
  // warning, never fatal (the programs still speak, without the early start); named, an error.
  StatsPredictor stale = fit_stats_predictor(F, Y, kLayers, o, "v2-early: an earlier layout");
  stale.fitted_for = StatsPredictor::model_identity(*model);
  stale.save(early_stats_predictor_path(model_path));
  const StreamOptions without_stale = recommended_slice_options(*model, &note);
  EXPECT_NE(without_stale.predictor, nullptr) << note;
  EXPECT_EQ(without_stale.early_predictor, nullptr) << note;
  ::setenv("KOKORO_EARLY_PREDICTOR", early_stats_predictor_path(model_path).c_str(), 1);
  expect_error_naming([&] { recommended_slice_options(*model); }, "another feature layout",
                      "a named early predictor of an earlier layout");
  ::unsetenv("KOKORO_EARLY_PREDICTOR");
  std::filesystem::remove(early_stats_predictor_path(model_path));
  // A damaged one beside the model is an error, as for the slices' predictor (below).
  std::ofstream(early_stats_predictor_path(model_path)) << "not a predictor";
  EXPECT_THROW(recommended_slice_options(*model), Error);
  std::filesystem::remove(early_stats_predictor_path(model_path));

  ::setenv("KOKORO_SLICE_PREDICTOR", "none", 1);
  EXPECT_EQ(recommended_slice_options(*model).predictor, nullptr);
  const std::string missing = (dir / "missing.kokoro").string();
  ::setenv("KOKORO_SLICE_PREDICTOR", missing.c_str(), 1);
  expect_error_naming([&] { recommended_slice_options(*model); }, missing, "a named predictor that does not exist");
  const std::string corrupt = (dir / "corrupt.kokoro").string();
  std::ofstream(corrupt) << "not a predictor";
  ::setenv("KOKORO_SLICE_PREDICTOR", corrupt.c_str(), 1);
  EXPECT_THROW(recommended_slice_options(*model), Error);
  ::unsetenv("KOKORO_SLICE_PREDICTOR");
  std::filesystem::copy_file(corrupt, stats_predictor_path(model_path), std::filesystem::copy_options::overwrite_existing);
  EXPECT_THROW(recommended_slice_options(*model), Error) << "a corrupt file beside the model is an error too";
}

// The predictor shipped in data/ (made by kokoro-stats-fit --storage f16, data/README.md) is compact, was
// fitted for the converted kokoro-v1_0 model (scripts/fetch-assets + kokoro-convert), and is what slice mode
// uses when no predictor lies beside the model (the model reached through a link from an empty directory).
// A shipped predictor file: the source tree's copy is the last candidate, under max_bytes, records the model it
// was fitted for, and stores its matrices as f16.
static void load_shipped(const std::vector<std::string>& shipped, const std::string& name, uintmax_t max_bytes, StatsPredictor& p) {
  ASSERT_FALSE(shipped.empty());
  const std::string source_copy = shipped.back();
  EXPECT_EQ(source_copy, std::string(KOKORO_SOURCE_DIR) + "/data/" + name);
  ASSERT_TRUE(std::filesystem::exists(source_copy)) << source_copy;
  EXPECT_LE(std::filesystem::file_size(source_copy), max_bytes);
  p = StatsPredictor::load(source_copy);
  EXPECT_FALSE(p.fitted_for.empty());
  for (const TensorInfo& t : ModelFile::open(source_copy)->tensors())
    EXPECT_EQ(t.dtype, t.shape.size() == 2 ? DType::f16 : DType::f32) << t.name;
}

TEST(StatsPredictor, ShippedPredictorFitsTheConvertedModel) {
  const std::vector<std::string> shipped = shipped_stats_predictor_paths();
  StatsPredictor p;
  ASSERT_NO_FATAL_FAILURE(load_shipped(shipped, "kokoro-v1_0.stats-predictor.kokoro", 2u << 20, p));

  const std::string model_path = default_model_path();
  ASSERT_TRUE(std::filesystem::exists(model_path))
      << model_path << " is missing: run scripts/fetch-assets (after building kokoro-convert) or set KOKORO_MODEL";
  const auto model = ModelFile::open(model_path, ModelFile::FiniteCheck::never);
  EXPECT_EQ(p.mismatch(*model), "") << "the shipped predictor is not for " << model_path << ": refit it";

  const auto dir = std::filesystem::path(temp_path("linked"));
  std::filesystem::create_directories(dir);
  const std::string link = (dir / "kokoro-v1_0.kokoro").string();
  std::filesystem::remove(link);
  std::filesystem::create_symlink(std::filesystem::absolute(model_path), link);
  const auto linked = ModelFile::open(link, ModelFile::FiniteCheck::never);
  ::unsetenv("KOKORO_SLICE_PREDICTOR");
  std::string note;
  const StreamOptions o = recommended_slice_options(*linked, &note);
  ASSERT_NE(o.predictor, nullptr) << note;
  std::string first;  // the installed copy, or in a build tree the source tree's
  for (const std::string& s : shipped)
    if (first.empty() && std::filesystem::exists(s)) first = s;
  EXPECT_EQ(o.predictor->path, first) << note;
  EXPECT_NE(note.find("predictor " + first), std::string::npos) << note;
}

// The early start's predictor shipped beside it (data/README.md): compact (under 4 MB), early (features known
// once the durations are, every AdaIN layer of the F0/energy branches and the decoder as targets), fitted for
// the converted kokoro-v1_0, and found by the slice settings for that model.
TEST(StatsPredictor, ShippedEarlyPredictorFitsTheConvertedModel) {
  StatsPredictor p;
  ASSERT_NO_FATAL_FAILURE(load_shipped(shipped_early_stats_predictor_paths(), "kokoro-v1_0.early-stats-predictor.kokoro",
                                       4u << 20, p));
  EXPECT_TRUE(p.early());
  const std::string model_path = default_model_path();
  ASSERT_TRUE(std::filesystem::exists(model_path))
      << model_path << " is missing: run scripts/fetch-assets (after building kokoro-convert) or set KOKORO_MODEL";
  const auto model = ModelFile::open(model_path, ModelFile::FiniteCheck::never);
  EXPECT_EQ(p.mismatch(*model), "") << "the shipped early predictor is not for " << model_path << ": refit it";
  ::unsetenv("KOKORO_SLICE_PREDICTOR");
  ::unsetenv("KOKORO_EARLY_PREDICTOR");
  std::string note;
  const StreamOptions o = recommended_slice_options(*model, &note);
  ASSERT_NE(o.early_predictor, nullptr) << note;
  EXPECT_TRUE(o.early_predictor->early());
}

// Slice mode's normalisation (PredictedStats, vocoder/stream_norm.h): fixed, every chunk gets the predicted
// moments whatever its columns hold; pooled, the columns seen so far count with their own moments and the
// prediction stands for the rest, so once the whole layer has been seen the statistics are the layer's own.
TEST(StatsPredictor, PredictedStatsFixedAndPooled) {
  const NormLayer layer{0, "decoder.generator.resblocks.0.adain1.0", 2, 2};  // 2 channels, 2 columns per frame
  std::map<std::string, MomentStats> predicted;
  predicted[layer.name] = MomentStats{{1.0f, -2.0f}, {4.0f, 0.25f}};
  Tensor chunk1({2, 3}), chunk2({2, 1});
  const float v1[] = {1, 2, 3, 10, 20, 30}, v2[] = {4, 40};
  std::copy(v1, v1 + 6, chunk1.data());
  std::copy(v2, v2 + 2, chunk2.data());
  InstanceStats out;

  PredictedStats fixed(predicted, false);
  fixed.bind({layer});
  fixed.begin_segment(2);  // 2 frames: 4 columns at this layer
  fixed.statistics(layer, chunk1, 0, false, out);
  EXPECT_FLOAT_EQ(out.mean[0], 1.0f);
  EXPECT_FLOAT_EQ(out.mean[1], -2.0f);
  EXPECT_NEAR(out.inv_std[0], 0.5f, 1e-5f);
  EXPECT_NEAR(out.inv_std[1], 2.0f, 1e-3f);

  PredictedStats pooled(predicted, true);
  pooled.bind({layer});
  pooled.begin_segment(2);
  pooled.statistics(layer, chunk1, 0, false, out);
  // 3 seen columns (mean 2, second moment 14/3) and 1 predicted one (mean 1, second moment 4 + 1).
  EXPECT_NEAR(out.mean[0], (6.0 + 1.0) / 4, 1e-5);
  const double m2 = (14.0 + 5.0) / 4, mean = 7.0 / 4;
  EXPECT_NEAR(out.inv_std[0], 1.0 / std::sqrt(m2 - mean * mean + kInstanceNormEps), 1e-5);
  pooled.statistics(layer, chunk2, 3, true, out);
  EXPECT_NEAR(out.mean[0], 2.5, 1e-5) << "all four columns seen: their own mean";
  EXPECT_NEAR(out.mean[1], 25.0, 1e-4);
  EXPECT_NEAR(out.inv_std[1], 1.0 / std::sqrt(125.0 + kInstanceNormEps), 1e-6);

  std::map<std::string, MomentStats> none;
  PredictedStats missing(none, false);
  EXPECT_THROW(missing.bind({layer}), Error);
}

// The early predictor (issue 28): features known once the durations are, every AdaIN layer of the F0 and
// energy branches and of the decoder as a target. Its file keeps its layout; it is matched against those
// layers (not only the generator's); its features are the moments named by kStatsEarlyFeatureLayout, worked
// out by hand here.
TEST(StatsPredictor, EarlyPredictorKeepsItsLayoutAndIsMatchedAgainstTheBranchAndDecoderLayers) {
  const std::vector<StatsLayerShape> layers = {{"predictor.F0.0.norm1", 3}, {"decoder.generator.b.adain2.1", 5}};
  Eigen::MatrixXf F, Y;
  linear_data(60, 12, 1, F, Y);
  StatsFitOptions o;
  o.ridge = 0.0;
  o.rank = 8;
  const StatsPredictor p = fit_stats_predictor(F, Y, layers, o, kStatsEarlyFeatureLayout);
  EXPECT_TRUE(p.early());
  EXPECT_FALSE(fitted().early());
  const std::string path = temp_path("early.kokoro");
  p.save(path);
  const StatsPredictor q = StatsPredictor::load(path);
  EXPECT_TRUE(q.early());
  EXPECT_EQ(q.predict_targets(row(F, 3)), p.predict_targets(row(F, 3)));

  // A model with an F0 branch layer and a generator layer: the early predictor fits it; the generator's
  // layers alone do not; the duration encoder's AdaLayerNorm is never a target.
  auto write_model = [&](bool with_f0_layer) {
    ModelWriter m(nlohmann::json{{"kind", "test-model"}});
    std::vector<float> fc(2 * 5 * 4, 0.0f);
    if (with_f0_layer) m.add("predictor.F0.0.norm1.fc.weight", {6, 4}, fc.data());
    m.add("decoder.generator.b.adain2.1.fc.weight", {10, 4}, fc.data());
    m.add("predictor.text_encoder.lstms.1.fc.weight", {6, 4}, fc.data());
    const std::string model_path = temp_path(with_f0_layer ? "branch-model.kokoro" : "no-branch-model.kokoro");
    m.write(model_path);
    return ModelFile::open(model_path);
  };
  const auto model = write_model(true);
  EXPECT_EQ(q.mismatch(*model), "");
  EXPECT_EQ(StatsPredictor::early_layers(*model).size(), 2u);
  EXPECT_EQ(StatsPredictor::decoder_layers(*model).size(), 1u);
  EXPECT_EQ(StatsPredictor::generator_layers(*model).size(), 1u);
  EXPECT_NE(q.mismatch(*write_model(false)).find("not the F0, energy and decoder layers"), std::string::npos);
  const std::string late = temp_path("late.kokoro");
  fit_stats_predictor(F, Y, layers, o).save(late);
  EXPECT_NE(StatsPredictor::load(late).mismatch(*model).find("not the generator layers"), std::string::npos);

  // The features: asr [2 channels, 2 frames], shared [1 channel, 2 frames], a style of 2.
  Tensor asr({2, 2}), shared({1, 2});
  const float a[4] = {1, 3, -2, -2}, h[2] = {0.5f, 1.5f}, style[2] = {0.5f, -0.5f};
  std::copy(a, a + 4, asr.data());
  std::copy(h, h + 2, shared.data());
  const std::vector<float> f = stats_predictor_early_features(asr, shared, style, 2);
  ASSERT_EQ(static_cast<int64_t>(f.size()), stats_predictor_early_feature_dim(2, 1, 2));
  const float want[] = {2, -2, 1, 0,                                              // asr means, stds
                        1, 0.5f,                                                  // shared mean, std
                        0.5f, -0.5f, static_cast<float>(std::log(4.0)), 5.0f};    // style, log(2F), 10/sqrt(2F)
  ASSERT_EQ(f.size(), sizeof want / sizeof want[0]);
  for (size_t i = 0; i < f.size(); ++i) EXPECT_NEAR(f[i], want[i], 1e-5) << "feature " << i;
  EXPECT_THROW(stats_predictor_early_features(asr, Tensor({1, 3}), style, 2), Error);  // not the same frames
  EXPECT_THROW(stats_predictor_early_features(asr, shared, nullptr, 2), Error);
}
