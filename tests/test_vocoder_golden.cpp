// Golden tests of the vocoder (Decoder + Generator) against the official reference, kokoro 0.9.4 run by
// tools/reference/make_goldens.py with the deterministic TestNoise (docs/golden-data.md).
//
// Module by module: each module runs on the reference's own inputs when the golden file stores them whole;
// when an input was stored reduced (kept time steps + per-channel sums, see docs/golden-data.md), the C++
// output of the previous module is used instead ("chained", itself computed from reference inputs).
// Then end to end: Decoder::forward on the reference's asr / F0 / N / style.
//
// The decoder input asr = t_en @ alignment is a column copy of the text encoder output t_en (the alignment is
// one-hot: asr[:, f] = t_en[:, token of frame f], bit for bit). When a golden file stores asr reduced but
// t_en whole (in it, or in another case with the same tokens), asr is rebuilt from t_en and the case's
// pred_dur and verified exactly against the stored asr columns and sums before use ("from t_en").
//
// Error measures, printed for every module and case:
//   rel    = max |C++ - ref| / max |ref| over the compared values (all of them, or the kept time steps)
//   sumrel = max over channels of |sum C++ - sum ref| / sum |ref|  (reduced tensors only: covers every step)
// Limits: rel and sumrel <= 1e-4 for intermediates; audio max |C++ - ref| <= 1e-3.
//
// gen_har holds STFT magnitudes (rows 0..10) and phases atan2(Im, Re) (rows 11..21). A phase is only as
// well defined as its bin is large: float rounding of ~1e-7 in a bin of magnitude 1e-4 moves its angle by
// ~1e-3 in the reference itself. So the phase rows are compared as complex values, i.e. their error is
//   rel = max |m e^{i phi} - m' e^{i phi'}| / max m        (over bins and kept frames)
// and the raw max phase difference is printed for information.
//
// Needs the real converted model (scripts/fetch-assets) and tests/data/golden/*.kokoro
// (override with KOKORO_GOLDEN_DIR); a missing one is a failure, never a skip.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <complex>
#include <cstdio>
#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "core/assets.h"
#include "core/error.h"
#include "core/model_file.h"
#include "acoustic/acoustic_model.h"
#include "vocoder/decoder.h"

using namespace kokoro;
namespace fs = std::filesystem;

namespace {

constexpr double kIntermediateRel = 1e-4;
constexpr double kAudioMaxAbs = 1e-3;

std::string golden_dir() {
  if (const char* env = std::getenv("KOKORO_GOLDEN_DIR"); env && *env) return env;
  return std::string(KOKORO_SOURCE_DIR) + "/tests/data/golden";
}

std::vector<std::string> golden_cases() {
  std::vector<std::string> cases;
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(golden_dir(), ec))
    if (e.path().extension() == ".kokoro") cases.push_back(e.path().stem().string());
  std::sort(cases.begin(), cases.end());
  return cases;
}

// The decoder on the real weights, loaded once for all tests (or the reason it could not be).
struct Model {
  std::shared_ptr<const ModelFile> file;
  std::unique_ptr<Decoder> decoder;
  std::string error;
};

const Model& model() {
  static const Model m = [] {
    Model r;
    const std::string path = default_model_path();
    if (!fs::exists(path)) {
      r.error = "model file " + path +
                " is missing: the vocoder golden tests need the real converted weights. Create it with "
                "scripts/fetch-assets (from the repo root, after building kokoro-convert), or point KOKORO_MODEL "
                "at a converted .kokoro file.";
      return r;
    }
    try {
      r.file = ModelFile::open(path);
      r.decoder = std::make_unique<Decoder>(r.file);
    } catch (const std::exception& e) {
      r.error = e.what();
    }
    return r;
  }();
  return m;
}

// One golden file: whole tensors, and reduced ones as described in its header.
class Golden {
 public:
  explicit Golden(const std::string& path) : file_(ModelFile::open(path)) {}
  const nlohmann::json& config() const { return file_->config(); }
  bool has(const std::string& name) const { return file_->has(name); }
  bool reduced(const std::string& name) const { return file_->has(name + ".index"); }
  bool whole(const std::string& name) const { return has(name) && !reduced(name); }
  Tensor tensor(const std::string& name) const {
    const TensorView v = file_->get(name);
    return Tensor::from(v.data, v.shape);
  }
  TensorView view(const std::string& name) const { return file_->get(name); }
  std::vector<int64_t> ints(const std::string& name) const {
    const TensorView v = file_->get(name);
    std::vector<int64_t> out(v.numel());
    for (int64_t i = 0; i < v.numel(); ++i) out[i] = static_cast<int64_t>(std::lround(v.data[i]));
    return out;
  }

 private:
  std::shared_ptr<const ModelFile> file_;
};

struct Stats {
  double max_abs = 0, max_ref = 0, sum_rel = 0;
  int64_t compared = 0;
  bool reduced = false;
  std::string note;  // extra information printed after the numbers
  double rel() const { return max_ref > 0 ? max_abs / max_ref : max_abs; }
};

// Compares a whole C++ tensor with the golden one (whole or reduced). Shapes must match exactly (rank-1 audio
// is [N] on both sides; the batch dim is dropped on both sides).
Stats compare(const Golden& g, const std::string& name, const Tensor& mine) {
  Stats s;
  if (!g.has(name)) throw Error("golden tensor " + name + " is missing");
  const Shape shape = mine.shape();
  const int64_t C = shape.size() == 1 ? 1 : shape[0], T = shape.back();
  if (!g.reduced(name)) {
    const TensorView ref = g.view(name);
    if (ref.shape != shape)
      throw Error(name + ": C++ shape " + shape_to_string(shape) + " vs reference " + shape_to_string(ref.shape));
    for (int64_t i = 0; i < ref.numel(); ++i) {
      s.max_abs = std::max(s.max_abs, std::abs(double(mine[i]) - double(ref.data[i])));
      s.max_ref = std::max(s.max_ref, std::abs(double(ref.data[i])));
    }
    s.compared = ref.numel();
    return s;
  }
  s.reduced = true;
  const nlohmann::json& info = g.config().at("reduced").at(name);
  const Shape full = info.at("full_shape").get<Shape>();
  if (full != shape)
    throw Error(name + ": C++ shape " + shape_to_string(shape) + " vs reference " + shape_to_string(full));
  if (info.at("time_axis").get<size_t>() != shape.size() - 1) throw Error(name + ": time is not the last axis");
  const TensorView index = g.view(name + ".index"), kept = g.view(name);
  const int64_t K = index.numel();
  if (kept.numel() != C * K) throw Error(name + ": kept values do not match the index");
  for (int64_t c = 0; c < C; ++c)
    for (int64_t k = 0; k < K; ++k) {
      const int64_t t = static_cast<int64_t>(index.data[k]);
      const double ref = kept.data[c * K + k], got = mine[c * T + t];
      s.max_abs = std::max(s.max_abs, std::abs(got - ref));
      s.max_ref = std::max(s.max_ref, std::abs(ref));
    }
  s.compared = C * K;
  const TensorView sum = g.view(name + ".sum"), abssum = g.view(name + ".abssum");
  for (int64_t c = 0; c < C; ++c) {
    double acc = 0;
    for (int64_t t = 0; t < T; ++t) acc += mine[c * T + t];
    const double scale = std::max(double(abssum.data[c]), 1e-30);
    s.sum_rel = std::max(s.sum_rel, std::abs(acc - double(sum.data[c])) / scale);
  }
  return s;
}

// gen_har: magnitudes as usual, phases in the complex domain (see the header comment). Works on the
// compared time steps (all, or the kept ones) and keeps compare()'s per-channel sum check.
Stats compare_spectrum(const Golden& g, const std::string& name, const Tensor& mine) {
  Stats s = compare(g, name, mine);  // shapes, per-channel sums, and the plain numbers
  const int64_t rows = mine.dim(0), K = rows / 2, T = mine.dim(1);
  std::vector<int64_t> index;
  Tensor kept;
  if (g.reduced(name)) {
    const TensorView idx = g.view(name + ".index");
    for (int64_t k = 0; k < idx.numel(); ++k) index.push_back(static_cast<int64_t>(idx.data[k]));
    kept = g.tensor(name);
  } else {
    for (int64_t t = 0; t < T; ++t) index.push_back(t);
    kept = g.tensor(name);
  }
  const int64_t N = static_cast<int64_t>(index.size());
  double mag_err = 0, max_mag = 0, complex_err = 0, phase_raw = 0;
  for (int64_t k = 0; k < K; ++k)
    for (int64_t j = 0; j < N; ++j) {
      const int64_t t = index[j];
      const double m_ref = kept[k * N + j], p_ref = kept[(K + k) * N + j];
      const double m = mine[k * T + t], p = mine[(K + k) * T + t];
      mag_err = std::max(mag_err, std::abs(m - m_ref));
      max_mag = std::max(max_mag, std::abs(m_ref));
      complex_err = std::max(complex_err, std::abs(std::polar(m, p) - std::polar(m_ref, p_ref)));
      phase_raw = std::max(phase_raw, std::abs(p - p_ref));
    }
  s.max_abs = std::max(mag_err, complex_err);
  s.max_ref = max_mag;
  char buf[160];
  std::snprintf(buf, sizeof buf, "  (magnitude max|d| %.3e; phase as complex max|d| %.3e; raw phase max|d| %.3e)",
                mag_err, complex_err, phase_raw);
  s.note = buf;
  return s;
}

// A row vector [1, n] copy of a golden curve stored as [n].
Tensor row(const Golden& g, const std::string& name) {
  Tensor t = g.tensor(name);
  t.reshape({1, t.numel()});
  return t;
}

void concat_channels(std::initializer_list<const Tensor*> parts, Tensor& out) {
  int64_t C = 0;
  for (const Tensor* p : parts) C += p->dim(0);
  out.resize({C, (*parts.begin())->dim(1)});
  float* dst = out.data();
  for (const Tensor* p : parts) dst = std::copy(p->data(), p->data() + p->numel(), dst);
}

// asr rebuilt from t_en [512, T] and this case's pred_dur [T] (repeat_interleave). t_en depends only on the
// tokens, so it may come from another golden case with the same input_ids (speed_1.3 shares speed_0.8's text
// side); `source` names the case it came from. Nothing if no whole t_en exists.
std::optional<Tensor> asr_from_text_encoder(const Golden& g, std::string* source = nullptr) {
  if (!g.whole("pred_dur")) return std::nullopt;
  std::unique_ptr<Golden> sibling;
  const Golden* text = &g;
  if (!g.whole("t_en")) {
    text = nullptr;
    for (const std::string& c : golden_cases()) {
      auto other = std::make_unique<Golden>(golden_dir() + "/" + c + ".kokoro");
      if (other->whole("t_en") && other->config().value("input_ids", nlohmann::json()) == g.config().at("input_ids")) {
        sibling = std::move(other);
        text = sibling.get();
        if (source) *source = c;
        break;
      }
    }
    if (!text) return std::nullopt;
  } else if (source) {
    *source = "this case";
  }
  const TensorView t_en = text->view("t_en"), dur = g.view("pred_dur");
  const int64_t C = t_en.dim(0), T = t_en.dim(1);
  if (dur.numel() != T) throw Error("golden: pred_dur does not match t_en " + shape_to_string(t_en.shape));
  int64_t F = 0;
  for (int64_t j = 0; j < T; ++j) F += static_cast<int64_t>(dur.data[j]);
  Tensor asr({C, F});
  int64_t f = 0;
  for (int64_t j = 0; j < T; ++j)
    for (int64_t r = 0; r < static_cast<int64_t>(dur.data[j]); ++r, ++f)
      for (int64_t c = 0; c < C; ++c) asr[c * F + f] = t_en.data[c * T + j];
  return asr;
}

class VocoderGolden : public ::testing::TestWithParam<std::string> {
 protected:
  void SetUp() override {
    if (!model().error.empty()) GTEST_FAIL() << model().error;
    golden_ = std::make_unique<Golden>(golden_dir() + "/" + GetParam() + ".kokoro");
  }

  // An input of a module: the reference's own tensor if stored whole, else the C++ output of the module that
  // produced it in this test (recorded by check()), else nothing.
  std::optional<Tensor> input(const std::string& name, std::string& how) {
    if (golden_->whole(name)) return golden_->tensor(name);
    if (name == "asr") return rebuilt_asr(how);
    if (auto it = chained_.find(name); it != chained_.end()) {
      how = "chained";
      return it->second;
    }
    return std::nullopt;
  }

  // Compares, prints and asserts one module output; keeps it for chaining.
  void check(const std::string& module, const std::string& name, const Tensor& mine, const std::string& how,
             bool is_audio = false) {
    const Stats s = name == "gen_har" ? compare_spectrum(*golden_, name, mine) : compare(*golden_, name, mine);
    const bool ok = is_audio ? s.max_abs <= kAudioMaxAbs
                             : s.rel() <= kIntermediateRel && s.sum_rel <= kIntermediateRel;
    std::printf("  %-12s %-14s %-14s %-8s %-7s max|d| %.3e  max|ref| %.3e  rel %.3e", GetParam().c_str(),
                module.c_str(), name.c_str(), how.c_str(), s.reduced ? "reduced" : "whole", s.max_abs, s.max_ref,
                s.rel());
    if (s.reduced) std::printf("  sumrel %.3e", s.sum_rel);
    std::printf("%s%s\n", s.note.c_str(), ok ? "" : "  FAIL");
    if (is_audio)
      EXPECT_LE(s.max_abs, kAudioMaxAbs) << module << ": " << name;
    else {
      EXPECT_LE(s.rel(), kIntermediateRel) << module << ": " << name;
      EXPECT_LE(s.sum_rel, kIntermediateRel) << module << ": " << name << " (per-channel sums)";
    }
    chained_[name] = mine;
    ++checked_;
  }

  // asr from t_en, checked to be exactly the reference's (stored kept columns equal, sums equal to float
  // rounding of the stored f32 sums).
  std::optional<Tensor> rebuilt_asr(std::string& how) {
    if (rebuilt_asr_) {
      how = "from t_en";
      return rebuilt_asr_;
    }
    std::string source;
    auto asr = asr_from_text_encoder(*golden_, &source);
    if (!asr || !golden_->has("asr")) return std::nullopt;
    const Stats s = compare(*golden_, "asr", *asr);
    EXPECT_EQ(s.max_abs, 0.0) << "asr rebuilt from t_en differs from the stored asr columns";
    EXPECT_LE(s.sum_rel, 1e-6) << "asr rebuilt from t_en: per-channel sums differ";
    std::printf("  %-12s asr rebuilt from t_en (%s) and pred_dur: kept columns max|d| %.1e, sumrel %.1e\n",
                GetParam().c_str(), source.c_str(), s.max_abs, s.sum_rel);
    how = "from t_en";
    rebuilt_asr_ = asr;
    return asr;
  }

  // How a module's inputs were obtained: "ref" if all are the reference's, else the first other way.
  static std::string provenance(std::initializer_list<std::string> hows) {
    for (const std::string& h : hows)
      if (h != "ref") return h == "from t_en" ? h : "chained";
    return "ref";
  }

  void not_run(const std::string& module, const std::string& missing) {
    std::printf("  %-12s %-14s not run: input %s is not stored whole in this golden file\n", GetParam().c_str(),
                module.c_str(), missing.c_str());
  }

  std::unique_ptr<Golden> golden_;
  std::map<std::string, Tensor> chained_;
  std::optional<Tensor> rebuilt_asr_;
  int checked_ = 0;
};

TEST_P(VocoderGolden, ModulesOnReferenceInputs) {
  const Decoder& dec = *model().decoder;
  const Generator& gen = dec.generator();
  const Golden& g = *golden_;
  const float* style = g.view("ref_s").data;  // ref_s[:128] is the decoder's style
  ASSERT_GE(g.view("ref_s").numel(), dec.style_dim());
  std::string how;

  // F0_conv / N_conv on the predicted curves.
  {
    Tensor F0, N;
    dec.condition(row(g, "F0_pred"), row(g, "N_pred"), F0, N);
    check("F0_conv", "dec_F0", F0, "ref");
    check("N_conv", "dec_N", N, "ref");
  }
  // asr_res and encode.
  if (auto asr = input("asr", how = "ref")) {
    Tensor res;
    dec.asr_residual(*asr, res);
    check("asr_res", "dec_asr_res", res, how);
  } else {
    not_run("asr_res", "asr");
  }
  {
    std::string h1 = "ref", h2 = "ref", h3 = "ref";
    auto asr = input("asr", h1), F0 = input("dec_F0", h2), N = input("dec_N", h3);
    if (asr && F0 && N) {
      Tensor in, out;
      concat_channels({&*asr, &*F0, &*N}, in);
      dec.encode().forward(in, style, out);
      check("encode", "dec_encode", out, provenance({h1, h2, h3}));
    } else {
      not_run("encode", "asr");
    }
  }
  for (size_t i = 0; i < dec.num_decode(); ++i) {
    const std::string prev = i == 0 ? "dec_encode" : "dec_decode_" + std::to_string(i - 1);
    std::string h[4] = {"ref", "ref", "ref", "ref"};
    auto x = input(prev, h[0]), res = input("dec_asr_res", h[1]), F0 = input("dec_F0", h[2]),
         N = input("dec_N", h[3]);
    const std::string name = "dec_decode_" + std::to_string(i);
    if (!(x && res && F0 && N)) {
      not_run("decode." + std::to_string(i), x ? "dec_asr_res" : prev);
      continue;
    }
    Tensor in, out;
    concat_channels({&*x, &*res, &*F0, &*N}, in);
    dec.decode(i).forward(in, style, out);
    check("decode." + std::to_string(i), name, out, provenance({h[0], h[1], h[2], h[3]}));
  }

  // Generator: harmonic source + STFT, the upsample stages, conv_post, iSTFT.
  {
    const Tensor f0 = g.tensor("F0_pred");
    Tensor har;
    TestNoise noise;
    gen.harmonic_features(f0.data(), f0.numel(), noise, har);
    check("source+stft", "gen_har", har, "ref");
  }
  for (size_t i = 0; i < gen.num_stages(); ++i) {
    const std::string n = std::to_string(i);
    const std::string prev = i == 0 ? "dec_decode_3" : "gen_stage_" + std::to_string(i - 1);
    std::string h1 = "ref", h2 = "ref";
    auto x = input(prev, h1), har = input("gen_har", h2);
    if (!(x && har)) {
      not_run("stage." + n, x ? "gen_har" : prev);
      continue;
    }
    std::map<std::string, Tensor> traced;
    const Trace capture = [&](const std::string& name, const Tensor& t) { traced[name] = t; };
    Tensor out;
    gen.stage(i, *x, *har, style, out, &capture);
    const std::string src = provenance({h1, h2});
    check("ups." + n, "gen_ups_" + n, traced.at("gen_ups_" + n), src);
    check("stage." + n, "gen_stage_" + n, out, src);
  }
  if (auto x = input("gen_stage_" + std::to_string(gen.num_stages() - 1), how = "ref")) {
    Tensor post;
    gen.post(*x, post);
    check("conv_post", "gen_conv_post", post, how);
  } else {
    not_run("conv_post", "gen_stage_1");
  }
  if (auto post = input("gen_conv_post", how = "ref")) {
    Tensor audio;
    gen.spectrum_to_audio(*post, audio);
    check("exp/sin+istft", "audio", audio, how, true);
  } else {
    not_run("exp/sin+istft", "gen_conv_post");
  }
  EXPECT_GE(checked_, 3) << "no module could run on this golden file";
}

TEST_P(VocoderGolden, EndToEnd) {
  const Decoder& dec = *model().decoder;
  const Golden& g = *golden_;
  std::string how = "ref";
  const std::optional<Tensor> asr = input("asr", how);
  std::optional<Tensor> asr_cpp;
  if (!asr) {
    // The golden file holds neither asr nor t_en whole (make_goldens.py reduces large tensors): take t_en
    // from the C++ text encoder, check it against the stored (reduced) reference t_en, and repeat it by the
    // reference's durations. The text encoder's own error (<= 1e-6 relative, test_acoustic_golden) is far
    // below what the audio limit can see, and unlike F0 it does not feed the sine source's phase.
    ASSERT_TRUE(g.has("t_en")) << GetParam() << ": no t_en at all in this golden file";
    TextEncoder text(model().file);
    const std::vector<int64_t> ids = g.ints("input_ids");
    Tensor t_en;
    text.forward(ids, t_en);
    const Stats st = compare(g, "t_en", t_en);
    std::printf("  %-12s t_en from the C++ text encoder: rel %.3e, sumrel %.3e\n", GetParam().c_str(), st.rel(), st.sum_rel);
    ASSERT_LE(std::max(st.rel(), st.sum_rel), kIntermediateRel) << "C++ text encoder disagrees with the reference";
    const std::vector<int64_t> dur = g.ints("pred_dur");
    Tensor rebuilt;
    repeat_columns(t_en, dur, rebuilt);
    asr_cpp = std::move(rebuilt);
    how = "from C++ t_en";
  }
  const Tensor& asr_in = asr ? *asr : *asr_cpp;
  std::map<std::string, Tensor> traced;
  const Trace capture = [&](const std::string& name, const Tensor& t) { traced[name] = t; };
  Tensor audio;
  TestNoise noise;
  dec.forward(asr_in, g.tensor("F0_pred"), g.tensor("N_pred"), g.view("ref_s").data, noise, audio,
              &capture);
  for (const auto& [name, t] : traced)
    if (golden_->has(name)) check("end-to-end", name, t, "e2e", name == "audio");
  EXPECT_TRUE(traced.count("audio"));
  EXPECT_EQ(traced.size(), 15u) << "trace points of Decoder::forward";
}

INSTANTIATE_TEST_SUITE_P(Cases, VocoderGolden, ::testing::ValuesIn(golden_cases()),
                         [](const ::testing::TestParamInfo<std::string>& info) {
                           std::string n = info.param;
                           for (char& c : n)
                             if (!std::isalnum(static_cast<unsigned char>(c))) c = '_';
                           return n;
                         });

// The assets themselves: a missing model or an empty golden directory is a failure, not zero tests.
TEST(VocoderGoldenAssets, ModelAndGoldenFilesPresent) {
  EXPECT_TRUE(model().error.empty()) << model().error;
  EXPECT_FALSE(golden_cases().empty()) << "no golden files in " << golden_dir()
                                       << ": regenerate them with tools/reference/make_goldens.py";
}

// Shapes at the edges, on the real weights: one asr frame gives 600 samples; bad shapes give clear errors.
TEST(VocoderDecoder, OneFrameAndBadShapes) {
  ASSERT_TRUE(model().error.empty()) << model().error;
  const Decoder& dec = *model().decoder;
  Tensor asr({512, 1}), f0({2}), n({2}), audio;
  f0[0] = 150.0f;
  f0[1] = 0.0f;
  const std::vector<float> style(dec.style_dim(), 0.1f);
  SeededNoise noise(7);
  dec.forward(asr, f0, n, style.data(), noise, audio);
  ASSERT_EQ(audio.shape(), (Shape{600}));
  for (int64_t i = 0; i < audio.numel(); ++i) ASSERT_TRUE(std::isfinite(audio[i])) << i;
  EXPECT_EQ(dec.samples_per_frame(), 600);

  auto message = [&](const Tensor& a, const Tensor& f, const Tensor& nn) -> std::string {
    try {
      dec.forward(a, f, nn, style.data(), noise, audio);
    } catch (const Error& e) {
      return e.what();
    }
    return "no error";
  };
  EXPECT_NE(message(Tensor({512, 3}), Tensor({5}), Tensor({6})).find("F0 curve must have 6 values"), std::string::npos);
  EXPECT_NE(message(Tensor({512, 3}), Tensor({6}), Tensor({1, 7})).find("N curve must have 6 values"), std::string::npos);
  EXPECT_NE(message(Tensor({500, 3}), Tensor({6}), Tensor({6})).find("asr must be [512, F]"), std::string::npos);
  EXPECT_NE(message(Tensor({512, 0}), Tensor({0}), Tensor({0})).find("asr must be [512, F]"), std::string::npos);
}

// Enough cases give the decoder's input (asr whole, or t_en whole), so that every module and the whole
// chain run on several utterances (4 with the committed goldens: one_phoneme, short_20, speed_0.8, speed_1.3).
TEST(VocoderGoldenAssets, SomeCasesRunEndToEnd) {
  int runnable = 0;
  for (const std::string& c : golden_cases()) {
    const Golden g(golden_dir() + "/" + c + ".kokoro");
    if (g.whole("asr") || asr_from_text_encoder(g)) ++runnable;
  }
  EXPECT_GE(runnable, 4) << "fewer than 4 golden cases in " << golden_dir() << " store asr or t_en whole";
}

}  // namespace
