// Golden tests of the acoustic model (ALBERT, bert_encoder, DurationEncoder, duration head, F0/N predictor,
// text encoder) against the official reference kokoro 0.9.4 (tools/reference/make_goldens.py).
//
// Each module runs on the reference's own input from the golden file, so each error printed is the module's
// own; then the whole acoustic stage runs from the token ids alone and its durations must be identical.
// The frame-aligned input en = d^T @ alignment is rebuilt from the reference's d and pred_dur (an exact
// column copy). Limits: relative error <= 1e-4 for every intermediate, durations identical.
#include <gtest/gtest.h>

#include <cstring>
#include <memory>
#include <random>
#include <thread>

#include "acoustic/acoustic_model.h"
#include "core/kernels.h"
#include "core/precision.h"
#include "tests/golden_support.h"

using namespace kokoro;
using namespace kokoro::test;

namespace {

constexpr double kRel = 1e-4;

struct Fixture {
  std::shared_ptr<const ModelFile> model;
  std::unique_ptr<AcousticModel> acoustic;
  std::unique_ptr<Albert> bert;
  std::unique_ptr<ProsodyPredictor> predictor;
  std::unique_ptr<TextEncoder> text;
  std::string error;
};

const Fixture& fixture() {
  static const Fixture f = [] {
    Fixture r;
    r.model = real_model(&r.error);
    if (!r.model) return r;
    r.acoustic = std::make_unique<AcousticModel>(r.model);
    r.bert = std::make_unique<Albert>(r.model);
    r.predictor = std::make_unique<ProsodyPredictor>(r.model);
    r.text = std::make_unique<TextEncoder>(r.model);
    return r;
  }();
  return f;
}

Tensor transpose(const Tensor& x) {
  Tensor t({x.dim(1), x.dim(0)});
  t.matrix() = x.matrix().transpose();
  return t;
}

class AcousticGolden : public ::testing::TestWithParam<std::string> {
 protected:
  void SetUp() override { ASSERT_TRUE(fixture().model) << fixture().error; }
  void check(const Golden& g, const std::string& name, const Tensor& got) {
    ASSERT_TRUE(g.has(name)) << g.name() << " has no " << name;
    const Comparison c = compare(g, name, got);
    print_comparison(g.name(), name, c);
    EXPECT_LE(c.worst(), kRel) << g.name() << " " << name;
  }
};

TEST_P(AcousticGolden, EachModuleOnReferenceInputs) {
  const Fixture& f = fixture();
  const Golden g(GetParam());
  const std::vector<int64_t> ids = g.ints("input_ids");
  const Tensor ref_s = g.tensor("ref_s");
  const float* prosody_style = ref_s.data() + 128;
  const float speed = g.config().at("speed").get<float>();

  Tensor bert_dur;
  f.bert->forward(ids, bert_dur);
  check(g, "bert_dur", bert_dur);

  if (g.whole("bert_dur")) {
    Tensor rows;
    linear_rows(g.tensor("bert_dur"), f.model->get("bert_encoder.weight"), nullptr, rows);
    const TensorView b = f.model->get("bert_encoder.bias");
    rows.matrix().rowwise() += b.vector().transpose();
    check(g, "d_en", transpose(rows));
  }
  if (g.whole("d_en")) {
    Tensor d;
    f.predictor->encode(g.tensor("d_en"), prosody_style, d);
    check(g, "d", d);
  }
  if (g.whole("d")) {
    Tensor dur_sum;
    std::vector<int64_t> dur;
    Tensor lstm_x;
    Trace t = [&](const std::string& n, const Tensor& v) {
      if (n == "lstm_x") lstm_x = v;
    };
    f.predictor->durations(g.tensor("d"), speed, dur_sum, dur, &t);
    check(g, "lstm_x", lstm_x);
    check(g, "dur_sum", dur_sum);
    EXPECT_EQ(dur, g.ints("pred_dur")) << g.name() << ": durations differ from the reference";

    Tensor en, f0, n;
    repeat_columns(transpose(g.tensor("d")), g.ints("pred_dur"), en);
    check(g, "en", en);
    f.predictor->f0_n(en, prosody_style, f0, n);
    check(g, "F0_pred", f0);
    check(g, "N_pred", n);
  }
  Tensor t_en;
  f.text->forward(ids, t_en);
  check(g, "t_en", t_en);
}

TEST_P(AcousticGolden, EndToEndFromTokenIds) {
  const Fixture& f = fixture();
  const Golden g(GetParam());
  const std::vector<int64_t> ids = g.ints("input_ids");
  const Tensor ref_s = g.tensor("ref_s");
  AlignedFeatures out;
  std::map<std::string, Tensor> seen;
  Trace t = [&](const std::string& n, const Tensor& v) { seen[n] = v; };
  f.acoustic->forward(ids, ref_s.data(), g.config().at("speed").get<float>(), out, &t);
  ASSERT_EQ(out.durations, g.ints("pred_dur")) << g.name() << ": durations differ from the reference";
  for (const char* name : {"bert_dur", "d_en", "d", "lstm_x", "dur_sum", "en", "F0_pred", "N_pred", "t_en", "asr"})
    if (g.has(name)) check(g, name, seen.at(name));
}

// bf16-all (core/precision.h): ALBERT's products, its attention's included, in bf16. Its output against the
// reference's, at bf16's tolerance (8 significant bits through 12 layers), and not equal to the fp32 output:
// the bf16 path ran.
TEST_P(AcousticGolden, AlbertInBf16WithinItsToleranceOfTheReference) {
  if (!bf16_supported()) GTEST_SKIP() << "this CPU has no AVX512-BF16: ALBERT's bf16 path cannot be checked here";
  const Fixture& f = fixture();
  const Golden g(GetParam());
  const std::vector<int64_t> ids = g.ints("input_ids");
  Tensor fp32, bf16;
  f.bert->forward(ids, fp32);
  {
    const ScopedKernelPrecision scope(Precision::bf16);
    f.bert->forward(ids, bf16);
  }
  const Comparison c = compare(g, "bert_dur", bf16);
  print_comparison(g.name(), "bert_dur (bf16)", c);
  EXPECT_LE(c.worst(), 5e-2) << g.name();
  double diff = 0;
  for (int64_t i = 0; i < fp32.numel(); ++i) diff = std::max(diff, double(std::abs(fp32[i] - bf16[i])));
  EXPECT_GT(diff, 0) << "bf16 equal to fp32: the bf16 path did not run";
}

// int8 (core/precision.h): ALBERT's encoder products in 8 bits on AVX512-VNNI. Its output against the
// reference's, at 8-bit quantisation's tolerance through 12 layers, and farther from it than bf16 (the int8
// path ran, and its error is what docs/benchmarks.md measured).
TEST_P(AcousticGolden, AlbertInInt8WithinItsToleranceOfTheReference) {
  if (!int8_precision_supported()) GTEST_SKIP() << "this CPU has no AVX512-VNNI with BF16: ALBERT's int8 path cannot be checked here";
  const Fixture& f = fixture();
  const Golden g(GetParam());
  const std::vector<int64_t> ids = g.ints("input_ids");
  Tensor bf16, int8;
  {
    const ScopedKernelPrecision scope(Precision::bf16);
    f.bert->forward(ids, bf16);
  }
  {
    const ScopedKernelPrecision scope(Precision::int8);
    f.bert->forward(ids, int8);
  }
  const Comparison c8 = compare(g, "bert_dur", int8), c16 = compare(g, "bert_dur", bf16);
  print_comparison(g.name(), "bert_dur (int8)", c8);
  EXPECT_LE(c8.worst(), 0.15) << g.name();
  EXPECT_GT(c8.worst(), c16.worst()) << g.name() << ": int8 as close to the reference as bf16: did it run?";
}

// int8 also runs the LSTMs in 8 bits (core/lstm.h): the text encoder's and the DurationEncoder's outputs on
// the reference's inputs against the reference's, at 8-bit tolerance, and farther from it than bf16 (the int8
// path ran). The DurationEncoder is three LSTMs deep, each feeding the next.
TEST_P(AcousticGolden, LstmsInInt8WithinTheirToleranceOfTheReference) {
  if (!int8_precision_supported()) GTEST_SKIP() << "this CPU has no AVX512-VNNI with BF16: the int8 LSTMs cannot be checked here";
  const Fixture& f = fixture();
  const Golden g(GetParam());
  const std::vector<int64_t> ids = g.ints("input_ids");
  const Tensor ref_s = g.tensor("ref_s");
  const float* prosody_style = ref_s.data() + 128;
  for (const char* name : {"t_en", "d"}) {
    if (std::string(name) == "d" && !g.whole("d_en")) continue;
    Tensor out[2];
    const Precision precisions[2] = {Precision::bf16, Precision::int8};
    for (int i = 0; i < 2; ++i) {
      const ScopedKernelPrecision scope(precisions[i]);
      if (std::string(name) == "t_en") f.text->forward(ids, out[i]);
      else f.predictor->encode(g.tensor("d_en"), prosody_style, out[i]);
    }
    const Comparison c8 = compare(g, name, out[1]), c16 = compare(g, name, out[0]);
    print_comparison(g.name(), std::string(name) + " (int8)", c8);
    print_comparison(g.name(), std::string(name) + " (bf16)", c16);
    EXPECT_LE(c8.worst(), 5e-2) << g.name() << " " << name;
    EXPECT_GT(c8.worst(), c16.worst()) << g.name() << " " << name << ": int8 as close to the reference as bf16: did it run?";
  }
}

// The same ids give the same bits on any thread, wherever its buffers happen to lie: each new thread has new
// per-thread buffers at new heap addresses (a few odd-sized blocks are allocated first to move them). The
// attention's scores were once in a 16-byte aligned buffer, and Eigen's row sums, which peel scalars up to
// the first aligned packet, then added in an order that depended on the address: the audio differed from
// process to process, by a few last bits of ALBERT and so, through the durations, by whole frames.
TEST_P(AcousticGolden, AlbertInBf16IsTheSameOnEveryThread) {
  if (!bf16_supported()) GTEST_SKIP() << "this CPU has no AVX512-BF16: ALBERT's bf16 path cannot be checked here";
  const Fixture& f = fixture();
  const Golden g(GetParam());
  const std::vector<int64_t> ids = g.ints("input_ids");
  std::vector<Precision> precisions{Precision::bf16};
  if (int8_precision_supported()) precisions.push_back(Precision::int8);  // the same holds for the int8 path
  for (const Precision p : precisions) {
    auto run = [&](int junk_blocks, Tensor& out) {
      std::vector<std::unique_ptr<char[]>> junk;
      for (int i = 0; i < junk_blocks; ++i) junk.emplace_back(new char[static_cast<size_t>(16 * i + 8)]);
      const ScopedKernelPrecision scope(p);
      f.bert->forward(ids, out);
    };
    Tensor reference;
    run(0, reference);
    for (int t = 1; t <= 6; ++t) {
      Tensor other;
      std::thread([&] { run(t, other); }).join();
      ASSERT_EQ(other.numel(), reference.numel());
      EXPECT_EQ(0, std::memcmp(other.data(), reference.data(), sizeof(float) * static_cast<size_t>(other.numel())))
          << g.name() << ", " << precision_name(p) << ": thread " << t << " computed other bits";
    }
  }
}

// Text that streams in: the text encoder's columns computed from the start of a sentence before its end
// (TextEncoder::extend), then the sentence whole, give the bits of the sentence computed whole, however the
// start was cut and whatever it held past the final tokens; and the columns are really reused.
TEST(TextEncoderPrefix, ColumnsComputedAheadGiveTheBitsOfTheWhole) {
  const Fixture& f = fixture();
  ASSERT_TRUE(f.model) << f.error;
  std::vector<Precision> precisions{Precision::fp32};
  if (bf16_supported()) precisions.push_back(Precision::bf16);
  if (int8_precision_supported()) precisions.push_back(Precision::int8);
  std::mt19937 rng(11);
  const int64_t vocab = f.model->config().at("n_token");
  auto random_ids = [&](int64_t n) {
    std::vector<int64_t> ids(static_cast<size_t>(n));
    for (int64_t& id : ids) id = 1 + static_cast<int64_t>(rng() % static_cast<unsigned>(vocab - 1));
    return ids;
  };
  for (const Precision p : precisions) {
    const ScopedKernelPrecision scope(p);
    int reused_sentences = 0;
    for (const int64_t T : {20, 63, 64, 65, 130, 363, 512}) {
      std::vector<int64_t> ids = random_ids(T);
      ids.front() = ids.back() = 0;
      Tensor whole;
      f.text->forward(ids, whole);
      // Schedules: word-sized steps; steps whose last tokens were guessed wrong; one look at a longer start.
      for (int schedule = 0; schedule < 3; ++schedule) {
        TextEncoderPrefix prefix;
        for (int64_t n = 1; n < T; n += 3 + static_cast<int64_t>(rng() % 7)) {
          std::vector<int64_t> start(ids.begin(), ids.begin() + n);
          if (schedule == 1 && n > 4)
            for (int64_t i = n - 4; i < n; ++i) start[static_cast<size_t>(i)] = 1 + (start[static_cast<size_t>(i)] % (vocab - 1));
          f.text->extend(start, prefix);
        }
        if (schedule == 2) {
          std::vector<int64_t> longer = ids;
          longer.back() = 5;
          for (int i = 0; i < 20; ++i) longer.push_back(7);
          f.text->extend(longer, prefix);
        }
        const int64_t ahead = prefix.valid.empty() ? 0 : prefix.valid.back();
        Tensor got;
        f.text->forward(ids, got, &prefix);
        ASSERT_EQ(got.shape(), whole.shape());
        EXPECT_EQ(0, std::memcmp(got.data(), whole.data(), sizeof(float) * static_cast<size_t>(whole.numel())))
            << precision_name(p) << ", " << T << " tokens, schedule " << schedule << ": other bits than the whole";
        if (ahead >= T / 2) ++reused_sentences;
      }
    }
    // Sentences of 64 tokens and more take the tiled form in bf16 and int8: their columns were computed ahead.
    // fp32 computes nothing ahead (its products' sums depend on the rows computed together).
    if (p == Precision::fp32)
      EXPECT_EQ(reused_sentences, 0) << "fp32 computed columns ahead";
    else
      EXPECT_GE(reused_sentences, 12) << precision_name(p) << ": the prefix computed nothing";
  }
}

INSTANTIATE_TEST_SUITE_P(Cases, AcousticGolden, ::testing::ValuesIn(golden_cases()),
                         [](const auto& info) {
                           std::string n = info.param;
                           std::replace(n.begin(), n.end(), '.', '_');
                           return n;
                         });

TEST(AcousticGoldenData, AllCasesPresent) {
  // The suite must not pass vacuously: the six reference cases are committed with the tests.
  EXPECT_GE(golden_cases().size(), 6u) << "golden files missing in " << golden_dir();
}

}  // namespace
