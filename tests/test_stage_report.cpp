// The stage times of each utterance's report (engine/stage_report.h) in the modes of the streaming engine,
// on the real model: every stage that did work reports time, the parts before the first audio are within the
// stage's time and add up to no more than the time to first audio, and the compute stages add up to no more
// than the synthesis time the report gives. No assertion depends on how fast anything is.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "engine/vocode_stage_split.h"
#include "tests/stream_engine_support.h"

using namespace kokoro;
using namespace kokoro::stream_test;

namespace {

constexpr EngineStage kCompute[] = {EngineStage::acoustic, EngineStage::decoder, EngineStage::source,
                                    EngineStage::generator};

UtteranceReport speak(SynthesisMode mode, StreamOptions options, uint64_t* slices = nullptr) {
  const Engine& e = engine();
  Watchdog dog(120);
  RecordingSink sink;
  ReportLog log;
  StreamEngine eng(e.synth, e.frontend, e.voice, sink, EngineVoice{}, mode, std::move(options));
  log.attach(eng);
  eng.say(kText);
  EXPECT_TRUE(eng.wait_idle(100 * kTimeScale));
  if (slices) *slices = eng.stats().slices;
  const std::vector<UtteranceReport> reports = log.reports();
  EXPECT_EQ(reports.size(), 1u);
  return reports.empty() ? UtteranceReport{} : reports[0];
}

// What holds in every mode.
void expect_consistent(const UtteranceReport& r) {
  ASSERT_TRUE(r.error.empty()) << r.error;
  ASSERT_GT(r.first_audio_ms, 0.0);
  const EngineStages& s = r.stages;
  for (int i = 0; i < kEngineStages; ++i) {
    const auto stage = static_cast<EngineStage>(i);
    EXPECT_GE(s.before_first_audio(stage), 0.0) << engine_stage_name(stage);
    EXPECT_LE(s.before_first_audio(stage), s.total(stage) + 1e-9) << engine_stage_name(stage);
  }
  // The stages before the first audio run one after the other: their parts fit in the time to first audio.
  EXPECT_LE(s.sum_before_first_audio_ms(), r.first_audio_ms + 1e-6);
  // The compute stages are parts of the synthesis time (which also counts scheduling around them).
  double compute = 0;
  for (EngineStage st : kCompute) compute += s.total(st);
  EXPECT_GT(compute, 0.0);
  EXPECT_LE(compute, r.synth_seconds * 1e3 + 1e-6);
  // The generator's items are its whole time.
  double items = 0;
  for (double ms : s.generator_items_ms) items += ms;
  EXPECT_NEAR(items, s.total(EngineStage::generator), 1e-6);
  // Each segment's size, for work counts.
  EXPECT_EQ(r.segment_sizes.size(), r.segments);
  for (const UtteranceReport::SegmentSize& z : r.segment_sizes) {
    EXPECT_GT(z.tokens, 2);
    EXPECT_GT(z.frames, 0);
  }
  // The frontend ran, the text was spoken, and the sink was written to.
  EXPECT_GT(s.total(EngineStage::frontend), 0.0);
  EXPECT_GT(s.before_first_audio(EngineStage::frontend), 0.0);
  EXPECT_GT(s.total(EngineStage::output), 0.0);
}

TEST(StageReport, SliceModeTimesEveryStage) {
  const Engine& e = engine();
  ASSERT_TRUE(e.synth) << e.error;
  uint64_t slices = 0;
  const UtteranceReport r = speak(SynthesisMode::slice, recommended_slice_options(e.synth->model()), &slices);
  expect_consistent(r);
  const EngineStages& s = r.stages;
  for (EngineStage st : {EngineStage::acoustic, EngineStage::decoder, EngineStage::generator}) {
    EXPECT_GT(s.total(st), 0.0) << engine_stage_name(st);
    EXPECT_GT(s.before_first_audio(st), 0.0) << engine_stage_name(st) << ": the first slice needs it";
  }
  EXPECT_EQ(s.total(EngineStage::source), 0.0) << "slice mode computes its harmonic source inside each slice";
  ASSERT_EQ(s.generator_items_ms.size(), slices) << "one item per slice";
  // The first audio is the first slice's: it is among the work before it.
  EXPECT_GE(s.before_first_audio(EngineStage::generator), s.generator_items_ms.front() - 1e-9);
}

TEST(StageReport, ExactModeSplitsTheVocoderByItsTrace) {
  const Engine& e = engine();
  ASSERT_TRUE(e.synth) << e.error;
  const UtteranceReport r = speak(SynthesisMode::exact, {});
  expect_consistent(r);
  const EngineStages& s = r.stages;
  for (EngineStage st : kCompute) {
    EXPECT_GT(s.total(st), 0.0) << engine_stage_name(st);
    EXPECT_GT(s.before_first_audio(st), 0.0) << engine_stage_name(st) << ": the first segment needs it";
  }
  EXPECT_EQ(s.generator_items_ms.size(), r.segments) << "one item per segment";
  EXPECT_GE(r.segments, 2u) << "the short first segment should split this text";
}

// Without the model: the trace events of Synthesizer::vocode cut its time into three stages end to end.
TEST(StageReport, VocodeStageSplitCutsAtTheTraceEvents) {
  struct Piece {
    EngineStage stage;
    VocodeStageSplit::Clock::time_point begin, end;
  };
  std::vector<Piece> pieces;
  VocodeStageSplit split([&](EngineStage s, auto b, auto e) { pieces.push_back({s, b, e}); });
  const Trace* t = split.start();
  const Tensor x({1});
  for (const char* name : {"dec_F0", "dec_decode_0", "dec_decode_3", "gen_har", "gen_stage_0", "gen_conv_post", "audio"})
    trace(t, name, x);
  ASSERT_EQ(pieces.size(), 3u);
  EXPECT_EQ(pieces[0].stage, EngineStage::decoder);
  EXPECT_EQ(pieces[1].stage, EngineStage::source);
  EXPECT_EQ(pieces[2].stage, EngineStage::generator);
  for (size_t i = 0; i < pieces.size(); ++i) {
    EXPECT_LE(pieces[i].begin, pieces[i].end);
    if (i > 0) {
      EXPECT_EQ(pieces[i].begin, pieces[i - 1].end) << "the stages follow each other without a gap";
    }
  }
}

TEST(StageReport, AddKeepsTheFirstAudioPartWithinTheTotal) {
  EngineStages s;
  s.add(EngineStage::acoustic, 5.0, true);
  s.add(EngineStage::acoustic, 7.0, false);
  s.add(EngineStage::generator, 2.0, true);
  EXPECT_EQ(s.total(EngineStage::acoustic), 12.0);
  EXPECT_EQ(s.before_first_audio(EngineStage::acoustic), 5.0);
  EXPECT_EQ(s.sum_total_ms(), 14.0);
  EXPECT_EQ(s.sum_before_first_audio_ms(), 7.0);
  EXPECT_STREQ(engine_stage_name(EngineStage::decoder), "decoder");
}

}  // namespace
