// The chunked (streaming) vocoder against the offline one on the real weights.
//
// Equivalence: for several utterances (aligned features from the C++ acoustic model on golden token ids;
// two of them cut to a 40-frame excerpt, itself a valid decoder input, to keep the test under ~20 s),
// Decoder::forward runs once under InstanceStatsCapture; the StreamDecoder then runs with exactly those
// statistics (SuppliedStats) and the same deterministic TestNoise, fed in chunks of 1, 2, 3, 7 and 16 frames
// and as one whole-segment chunk. Every sample must match the offline audio within 1e-5, and the first and
// last chunk of each run are reported separately (they exercise the zero padding at both ends).
//
// Needs models/kokoro-v1_0.kokoro and tests/data/golden (fails, never skips, without them).
#include <gtest/gtest.h>
#include <malloc.h>

#include <cmath>
#include <cstdio>

#include "acoustic/acoustic_model.h"
#include "core/error.h"
#include "tests/golden_support.h"
#include "vocoder/decoder.h"
#include "vocoder/stream_decoder.h"

using namespace kokoro;
using namespace kokoro::test;

namespace {

constexpr double kMaxAbs = 1e-5;

struct Utterance {
  std::string name;
  AlignedFeatures feats;
  std::vector<float> style;
  Tensor audio;                                   // offline
  std::map<std::string, InstanceStats> stats;     // offline statistics of every AdaIN layer
};

struct Fixture {
  std::shared_ptr<const ModelFile> model;
  std::unique_ptr<Decoder> decoder;
  std::vector<Utterance> utterances;
  std::string error;
};

const Fixture& fixture() {
  static const Fixture f = [] {
    Fixture r;
    r.model = real_model(&r.error);
    if (!r.model) return r;
    r.decoder = std::make_unique<Decoder>(r.model);
    AcousticModel acoustic(r.model);
    struct Pick {
      const char* name;
      int64_t first, frames;  // excerpt of the aligned frames (frames 0: all)
    };
    for (const Pick& pick : {Pick{"one_phoneme", 0, 0}, Pick{"short_20", 0, 40}, Pick{"speed_1.3", 20, 40}}) {
      const Golden g(pick.name);
      Utterance u;
      u.name = pick.name;
      const Tensor ref_s = g.tensor("ref_s");
      u.style.assign(ref_s.data(), ref_s.data() + ref_s.numel());
      AlignedFeatures all;
      acoustic.forward(g.ints("input_ids"), u.style.data(), g.config().at("speed").get<float>(), all);
      const int64_t F = pick.frames ? pick.frames : all.frames();
      if (pick.first + F > all.frames()) {
        r.error = std::string(pick.name) + ": fewer frames than the excerpt needs";
        r.decoder.reset();
        return r;
      }
      u.feats.asr.resize({all.asr.dim(0), F});
      for (int64_t c = 0; c < all.asr.dim(0); ++c)
        std::copy(all.asr.data() + c * all.frames() + pick.first, all.asr.data() + c * all.frames() + pick.first + F,
                  u.feats.asr.data() + c * F);
      u.feats.f0 = Tensor::from(all.f0.data() + 2 * pick.first, {2 * F});
      u.feats.n = Tensor::from(all.n.data() + 2 * pick.first, {2 * F});
      TestNoise noise;
      InstanceStatsCapture capture;
      r.decoder->forward(u.feats.asr, u.feats.f0, u.feats.n, u.style.data(), noise, u.audio);
      u.stats = capture.take();
      r.utterances.push_back(std::move(u));
    }
    return r;
  }();
  return f;
}

// Runs the stream decoder over u in chunks of `chunk` frames (0: whole segment); returns the audio and the
// sample range of each chunk's output.
std::vector<float> run_chunked(const Decoder& dec, const Utterance& u, NormPolicy& policy, int64_t chunk,
                               std::vector<std::pair<int64_t, int64_t>>* ranges = nullptr) {
  StreamDecoder sd(dec);
  TestNoise noise;
  const int64_t F = u.feats.frames();
  sd.begin(u.style.data(), noise, policy, F);
  if (chunk <= 0) chunk = F;
  std::vector<float> out;
  Tensor asr, audio;
  for (int64_t f = 0; f < F; f += chunk) {
    const int64_t m = std::min(chunk, F - f);
    asr.resize({u.feats.asr.dim(0), m});
    for (int64_t c = 0; c < asr.dim(0); ++c)
      std::copy(u.feats.asr.data() + c * F + f, u.feats.asr.data() + c * F + f + m, asr.data() + c * m);
    sd.push(asr, u.feats.f0.data() + 2 * f, u.feats.n.data() + 2 * f, f + m == F, audio);
    if (ranges) ranges->push_back({static_cast<int64_t>(out.size()), static_cast<int64_t>(out.size()) + audio.numel()});
    out.insert(out.end(), audio.data(), audio.data() + audio.numel());
  }
  return out;
}

double max_abs_diff(const std::vector<float>& a, const Tensor& b, int64_t from, int64_t to) {
  double d = 0;
  for (int64_t i = from; i < to; ++i) d = std::max(d, double(std::fabs(a[i] - b[i])));
  return d;
}

class StreamEquivalence : public ::testing::TestWithParam<int> {};

TEST_P(StreamEquivalence, ChunkedEqualsOfflineWithOfflineStatistics) {
  const Fixture& fx = fixture();
  ASSERT_TRUE(fx.decoder) << fx.error;
  const int chunk = GetParam();
  for (const Utterance& u : fx.utterances) {
    SuppliedStats policy(u.stats);
    std::vector<std::pair<int64_t, int64_t>> ranges;
    const std::vector<float> audio = run_chunked(*fx.decoder, u, policy, chunk, &ranges);
    ASSERT_EQ(static_cast<int64_t>(audio.size()), u.audio.numel()) << u.name;
    const double all = max_abs_diff(audio, u.audio, 0, u.audio.numel());
    // The first chunk that produced audio, and the last chunk (which flushes the look-ahead).
    std::pair<int64_t, int64_t> first{0, 0};
    for (const auto& r : ranges)
      if (r.second > r.first) {
        first = r;
        break;
      }
    const auto last = ranges.back();
    const double d_first = max_abs_diff(audio, u.audio, first.first, first.second);
    const double d_last = max_abs_diff(audio, u.audio, last.first, last.second);
    std::printf("  %-12s chunk %-5s frames %4lld: max|d| %.3e (first chunk %.3e over %lld samples, last %.3e over %lld)\n",
                u.name.c_str(), chunk ? std::to_string(chunk).c_str() : "whole", static_cast<long long>(u.feats.frames()),
                all, d_first, static_cast<long long>(first.second - first.first), d_last,
                static_cast<long long>(last.second - last.first));
    EXPECT_GT(first.second, first.first) << u.name;
    EXPECT_LE(all, kMaxAbs) << u.name << " chunk " << chunk;
  }
}

INSTANTIATE_TEST_SUITE_P(ChunkFrames, StreamEquivalence, ::testing::Values(1, 2, 3, 7, 16, 0),
                         [](const auto& info) { return info.param ? "chunk_" + std::to_string(info.param) : std::string("whole"); });

}  // namespace

namespace {

// The generator alone, fed with Decoder::features of the whole segment (the streaming engine's input), with
// the F0 curve 2 frames ahead of the feature columns as the engine feeds it: also equal to the offline audio.
TEST(StreamGeneratorOnly, ChunkedFeaturesEqualOffline) {
  const Fixture& fx = fixture();
  ASSERT_TRUE(fx.decoder) << fx.error;
  for (const Utterance& u : fx.utterances) {
    Tensor x, cols, audio;
    fx.decoder->features(u.feats.asr, u.feats.f0, u.feats.n, u.style.data(), x);
    SuppliedStats policy(u.stats);
    StreamDecoder sd(*fx.decoder);
    TestNoise noise;
    const int64_t F = u.feats.frames();
    sd.begin(u.style.data(), noise, policy, F, StreamDecoder::Input::decoder_features);
    std::vector<float> out;
    int64_t f0_sent = 0;
    for (int64_t f = 0; f < F; f += 3) {
      const int64_t m = std::min<int64_t>(3, F - f);
      copy_columns(x, 2 * f, 2 * m, cols);
      const int64_t f0_to = std::min<int64_t>(2 * (f + m + 2), 2 * F);
      sd.push_features(cols, u.feats.f0.data() + f0_sent, f0_to - f0_sent, f + m == F, audio);
      f0_sent = f0_to;
      out.insert(out.end(), audio.data(), audio.data() + audio.numel());
    }
    ASSERT_EQ(static_cast<int64_t>(out.size()), u.audio.numel());
    const double d = max_abs_diff(out, u.audio, 0, u.audio.numel());
    std::printf("  %-12s generator only, chunk 3: max|d| %.3e\n", u.name.c_str(), d);
    EXPECT_LE(d, kMaxAbs) << u.name;
  }
}

TEST(StreamDecoderErrors, MisuseIsAClearError) {
  const Fixture& fx = fixture();
  ASSERT_TRUE(fx.decoder) << fx.error;
  const Utterance& u = fx.utterances.front();
  StreamDecoder sd(*fx.decoder);
  Tensor audio, asr({512, 1});
  EXPECT_THROW(sd.push(asr, u.feats.f0.data(), u.feats.n.data(), false, audio), Error);  // before begin
  TestNoise noise;
  SuppliedStats missing({});
  EXPECT_THROW(sd.begin(u.style.data(), noise, missing, 1), Error);  // no statistics for the layers
  ChunkStats chunk;
  sd.begin(u.style.data(), noise, chunk, 1);
  EXPECT_THROW(sd.push(Tensor({511, 1}), u.feats.f0.data(), u.feats.n.data(), false, audio), Error);  // shape
  EXPECT_THROW(sd.push_features(Tensor({512, 2}), u.feats.f0.data(), 2, false, audio), Error);  // wrong input kind
  EXPECT_THROW(sd.push(Tensor({512, 0}), nullptr, nullptr, true, audio), Error);  // empty segment
}

}  // namespace

namespace {

// StreamDecoder::kFeaturesLookaheadFrames, which the engine's first slice adds to its push so that the first
// audio is the whole first slice: from a segment's start, m + that many frames of features (the F0 curve
// kFeaturesSourceLeadFrames ahead) complete at least m frames of audio, and one frame fewer does not.
TEST(StreamGeneratorOnly, FeaturesLookaheadIsWhatTheFirstSliceMustReachPast) {
  const Fixture& fx = fixture();
  ASSERT_TRUE(fx.decoder) << fx.error;
  const Utterance& u = fx.utterances[1];  // short_20, 40 frames
  Tensor x, cols, audio;
  fx.decoder->features(u.feats.asr, u.feats.f0, u.feats.n, u.style.data(), x);
  const int64_t F = u.feats.frames(), spf = fx.decoder->samples_per_frame();
  auto first_push_samples = [&](int64_t frames) {
    SuppliedStats policy(u.stats);
    StreamDecoder sd(*fx.decoder);
    TestNoise noise;
    sd.begin(u.style.data(), noise, policy, F, StreamDecoder::Input::decoder_features);
    copy_columns(x, 0, 2 * frames, cols);
    const int64_t f0_to = std::min<int64_t>(2 * (frames + StreamDecoder::kFeaturesSourceLeadFrames), 2 * F);
    sd.push_features(cols, u.feats.f0.data(), f0_to, false, audio);
    return audio.numel();
  };
  const int64_t k = StreamDecoder::kFeaturesLookaheadFrames;
  for (const int64_t m : {1, 4, 12}) {
    ASSERT_LT(m + k, F);
    const int64_t got = first_push_samples(m + k), fewer = first_push_samples(m + k - 1);
    std::printf("  first push of %lld + %lld frames: %lld samples (%lld + %lld frames: %lld)\n", static_cast<long long>(m),
                static_cast<long long>(k), static_cast<long long>(got), static_cast<long long>(m),
                static_cast<long long>(k - 1), static_cast<long long>(fewer));
    EXPECT_GE(got, m * spf);
    EXPECT_LT(fewer, m * spf) << "the look-ahead constant is larger than it needs to be";
  }
}

}  // namespace

namespace {

// Bytes malloc has handed out and not taken back, over every arena and mmapped block (glibc).
double heap_in_use_mb() {
  const struct mallinfo2 m = mallinfo2();
  return static_cast<double>(m.uordblks + m.hblkhd) / (1 << 20);
}

// What a slice costs in memory: the generator's layers keep only their context and their branches' lead
// between pushes, and a push works in buffers shared by every layer on the thread (vocoder/stream_ops.h).
// With a window and a scratch copy kept per layer (~100 of them, stage 2 at 128 x 4800 columns per second)
// a slice cost 209 MB of heap per second of its length (this test on that code; ~340 MB of RSS), and the
// longest slice set a paragraph's peak memory.
// Measured: the heap in use after one push of a short and of a long slice (the generator's input tiled from
// a real segment), per second of the difference.
TEST(StreamGeneratorOnly, MemoryOfASliceIsAFewBuffersNotOnePerLayer) {
  const Fixture& fx = fixture();
  ASSERT_TRUE(fx.decoder) << fx.error;
  const Utterance& u = fx.utterances[1];  // short_20, 40 frames
  Tensor x;
  fx.decoder->features(u.feats.asr, u.feats.f0, u.feats.n, u.style.data(), x);
  const int64_t F = u.feats.frames(), tiles = 4, total = tiles * F, C = x.dim(0);
  Tensor long_x({C, 2 * total});
  std::vector<float> f0(static_cast<size_t>(2 * total));
  for (int64_t t = 0; t < tiles; ++t) {
    for (int64_t c = 0; c < C; ++c) std::copy_n(x.data() + c * 2 * F, 2 * F, long_x.data() + c * 2 * total + t * 2 * F);
    std::copy_n(u.feats.f0.data(), 2 * F, f0.data() + t * 2 * F);
  }
  auto heap_after_push = [&](int64_t frames) {
    SuppliedStats policy(u.stats);
    StreamDecoder sd(*fx.decoder);
    TestNoise noise;
    Tensor cols, audio;
    sd.begin(u.style.data(), noise, policy, total, StreamDecoder::Input::decoder_features);
    copy_columns(long_x, 0, 2 * frames, cols);
    sd.push_features(cols, f0.data(), 2 * frames, false, audio);
    EXPECT_GT(audio.numel(), 0);
    return heap_in_use_mb();
  };
  const int64_t short_frames = 8, long_frames = total - 8;  // 0.2 s and 3.8 s
  heap_after_push(short_frames);  // the kernels' per-thread scratch and prepared weights, once
  const double at_short = heap_after_push(short_frames), at_long = heap_after_push(long_frames);
  const double seconds = static_cast<double>(long_frames - short_frames) * fx.decoder->samples_per_frame() / 24000.0;
  const double per_second = (at_long - at_short) / seconds;
  std::printf("  heap in use after a push of %lld frames: %.1f MB, of %lld frames: %.1f MB (%.1f MB per second of slice)\n",
              static_cast<long long>(short_frames), at_short, static_cast<long long>(long_frames), at_long, per_second);
  // Stage 2 alone is 2.5 MB per second per buffer; a push needs a few dozen of them at most (the kernels'
  // scratch included), against ~130 with a window per layer.
  EXPECT_LT(per_second, 100.0);
}

}  // namespace
