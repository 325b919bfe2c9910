// Exact mode's pre-roll (engine/preroll.h) through the streaming engine, on the real model: a cut first
// segment waits until the next one is vocoded (no underrun, where without the rule there is one), a single
// segment does not wait, a barge-in drops a held utterance; following the vocoder's progress (in virtual
// time: the test's clock is the pre-roll's and the device's), playback starts earlier than the first rule
// when the vocoder is fast and holds on when it slows down mid-segment, and after a cut the whole sentences
// that follow start sooner than one long segment; Synthesizer::vocode reports its progress without
// changing a sample. No assertion depends on wall-clock time.
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <functional>
#include <iterator>
#include <mutex>
#include <thread>

#include "frontend/utf8.h"
#include "tests/stream_engine_support.h"

using namespace kokoro;
using namespace kokoro::stream_test;

namespace {

// Exact mode's pre-roll (engine/preroll.h). The device is the test's; the vocoder is "slow" because the
// test holds it before a segment, and the speed estimate starts at 10 s per second of audio (measuring the
// real first segment can at most halve it), so the rule always asks for more than a first segment: the
// outcome depends on the rule, not on this machine's speed. These tests use the first rule (decided when a
// segment's vocoding starts and when it is queued): following the progress measures this machine's real
// pace on the wall clock; the virtual-time tests below prove that rule.
StreamOptions slow_vocoder_preroll(Gate& gate, std::atomic<int>& chunks, int stuck_at) {
  StreamOptions so;
  so.preroll.nominal_rtf = 10;
  so.preroll.follow_progress = false;
  so.before_chunk = [&gate, &chunks, stuck_at] {
    if (++chunks == stuck_at) gate.pass();
  };
  return so;
}

// The audio the device played, from its first period on.
struct Played {
  std::vector<float> audio;
  void render(ManualDeviceSink& sink, std::size_t period) {
    const std::vector<float> p = sink.render(period);
    audio.insert(audio.end(), p.begin(), p.end());
  }
};

// A cut first segment (4 words) whose playout is shorter than the second segment's vocoding: without the
// rule the device runs dry after it; with the rule nothing is handed to the device while the second
// segment is not vocoded, then the whole utterance plays without an underrun, sample for sample the
// offline synthesis.
TEST(StreamEngine, ExactModePrerollHoldsACutFirstSegmentUntilTheNextIsVocoded) {
  const Engine& e = engine();
  ASSERT_TRUE(e.synth) << e.error;
  Watchdog dog(240);
  size_t segments = 0;
  const std::vector<float> want = offline_audio(e, kText, 7, &segments);
  ASSERT_EQ(segments, 2u) << "the 4-word first segment should split this text";
  constexpr std::size_t kPeriod = 256;
  for (const bool rule : {false, true}) {
    SCOPED_TRACE(rule ? "pre-roll rule" : "no pre-roll rule");
    ManualDeviceSink sink(5.0);
    Gate gate;
    std::atomic<int> chunks{0};
    StreamOptions so = slow_vocoder_preroll(gate, chunks, 2);  // stuck before the second segment
    so.preroll.enabled = rule;
    gate.hold();
    StreamEngine eng(e.synth, e.frontend, e.voice, sink, EngineVoice{1.0f, false, 7, false}, SynthesisMode::exact, so);
    ReportLog log;
    log.attach(eng);
    eng.say(kText);
    gate.wait_for_waiter();  // the first segment is vocoded and queued, the second is not
    Played played;
    if (!rule) {
      while (sink.stats().underruns == 0) played.render(sink, kPeriod);  // the first segment plays out, then silence
      EXPECT_EQ(eng.stats().preroll_holds, 0u);
    } else {
      EXPECT_EQ(eng.stats().preroll_holds, 1u) << "the first segment's audio is ready and must wait";
      for (int i = 0; i < 400; ++i) played.render(sink, kPeriod);  // 4.3 s: longer than the first segment
      EXPECT_EQ(eng.stats().samples_to_sink, 0u) << "nothing may reach the device before the second segment is vocoded";
      EXPECT_FALSE(any_sound(played.audio));
      EXPECT_EQ(sink.stats().underruns, 0u);
      played.audio.clear();
    }
    gate.release();
    for (;;) {  // play until idle (as play_until_idle, keeping the audio)
      const bool idle = eng.wait_idle(0);
      if (sink.queued() >= kPeriod || (idle && sink.queued() > 0)) {
        played.render(sink, kPeriod);
      } else if (idle) {
        break;
      } else {
        std::this_thread::sleep_for(std::chrono::milliseconds(1));
      }
    }
    const SinkStats st = sink.stats();
    EXPECT_EQ(st.frames_played, want.size());
    if (!rule) {
      EXPECT_GE(st.underruns, 1u) << "without the rule the cut first segment runs dry";
      continue;
    }
    EXPECT_EQ(st.underruns, 0u) << "with the rule the utterance plays without a gap";
    ASSERT_GE(played.audio.size(), want.size());
    EXPECT_TRUE(std::equal(want.begin(), want.end(), played.audio.begin())) << "the pre-roll changes timing only";
    const std::vector<UtteranceReport> reports = log.reports();
    ASSERT_EQ(reports.size(), 1u);
    EXPECT_FALSE(reports[0].interrupted);
    EXPECT_GT(reports[0].preroll_ms, 0.0);
    EXPECT_GE(reports[0].first_audio_ms, reports[0].preroll_ms);
  }
}

// An utterance of one segment has nothing after it to wait for: it plays once vocoded, even while the vocoder
// is stuck on the next utterance (whose cut first segment is then held).
TEST(StreamEngine, ExactModePrerollDoesNotHoldASingleSegmentBeyondItsVocoding) {
  const Engine& e = engine();
  ASSERT_TRUE(e.synth) << e.error;
  Watchdog dog(240);
  const char* single = "It went dark.";
  size_t segments = 0;
  const std::vector<float> first = offline_audio(e, single, 7, &segments);
  ASSERT_EQ(segments, 1u);
  const std::vector<float> second = offline_audio(e, kText, 7);
  ManualDeviceSink sink(5.0);
  Gate gate;
  std::atomic<int> chunks{0};
  gate.hold();
  StreamEngine eng(e.synth, e.frontend, e.voice, sink, EngineVoice{1.0f, false, 7, false}, SynthesisMode::exact,
                   slow_vocoder_preroll(gate, chunks, 3));  // stuck before the second utterance's second segment
  ReportLog log;
  log.attach(eng);
  eng.say(single);
  eng.say(kText);
  gate.wait_for_waiter();
  // The single segment reaches the device in full although the vocoder is stuck (a hang here is the failure
  // the watchdog reports).
  while (eng.stats().samples_to_sink < first.size()) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  constexpr std::size_t kPeriod = 256;
  Played played;
  while (sink.stats().frames_played < first.size()) played.render(sink, kPeriod);
  EXPECT_EQ(sink.stats().underruns, 0u);
  EXPECT_TRUE(std::equal(first.begin(), first.end(), played.audio.begin()));
  EXPECT_EQ(eng.stats().samples_to_sink, first.size()) << "the next utterance's cut first segment is held";
  EXPECT_EQ(eng.stats().preroll_holds, 1u) << "only the second utterance waits";
  gate.release();
  play_until_idle(eng, sink, kPeriod);
  EXPECT_EQ(sink.stats().frames_played, first.size() + second.size());
  const std::vector<UtteranceReport> reports = log.reports();
  ASSERT_EQ(reports.size(), 2u);
  EXPECT_EQ(reports[0].preroll_ms, 0.0);
  EXPECT_GT(reports[1].preroll_ms, 0.0);
}

// Barge-in while an utterance is held: nothing of it is ever heard, it is reported interrupted, and the next
// utterance plays whole.
TEST(StreamEngine, ExactModeBargeInDuringThePrerollDropsTheUtterance) {
  const Engine& e = engine();
  ASSERT_TRUE(e.synth) << e.error;
  Watchdog dog(240);
  ManualDeviceSink sink(5.0);
  Gate gate;
  std::atomic<int> chunks{0};
  gate.hold();
  StreamEngine eng(e.synth, e.frontend, e.voice, sink, EngineVoice{1.0f, false, 0, false}, SynthesisMode::exact,
                   slow_vocoder_preroll(gate, chunks, 2));
  ReportLog log;
  log.attach(eng);
  eng.say(kText);
  gate.wait_for_waiter();
  ASSERT_EQ(eng.stats().preroll_holds, 1u);
  constexpr std::size_t kPeriod = 256;
  for (int i = 0; i < 20; ++i) ASSERT_FALSE(any_sound(sink.render(kPeriod)));
  stop_and_expect_silence(eng, sink, kPeriod);
  gate.release();
  ASSERT_TRUE(eng.wait_idle(60 * kTimeScale));
  EXPECT_EQ(eng.stats().samples_to_sink, 0u) << "the held utterance never reached the device";
  chunks = 100;
  expect_interrupted_then_next_plays_whole(e, eng, sink, log, kPeriod);
}

// Synthesizer::vocode's progress: after the decoder half, after each generator piece and at the end, rising
// fractions weighted by the layers' multiply-adds; listening changes no sample.
TEST(StreamEngine, VocodeReportsItsProgressByWorkWithoutChangingTheAudio) {
  const Engine& e = engine();
  ASSERT_TRUE(e.synth) << e.error;
  const Vocab vocab = Vocab::from_config(e.synth->model().config(), e.synth->model().path());
  const Segment seg = e.frontend->segment("It went dark.").front();
  std::vector<int64_t> ids = tokenize(seg.phonemes, vocab);
  ids.insert(ids.begin(), 0);
  ids.push_back(0);
  const float* style = e.voice.style_for(static_cast<int>(utf8::count_code_points(seg.phonemes)));
  AlignedFeatures feats;
  e.synth->acoustic().forward(ids, style, 1.0f, feats);
  Tensor quiet, heard;
  {
    SeededNoise noise(3);
    e.synth->vocode(feats.asr, feats.f0, feats.n, style, noise, quiet);
  }
  std::vector<double> fractions;
  const ProgressCallback record = [&](double f) { fractions.push_back(f); };
  {
    SeededNoise noise(3);
    e.synth->vocode(feats.asr, feats.f0, feats.n, style, noise, heard, nullptr, &record);
  }
  ASSERT_EQ(heard.numel(), quiet.numel());
  EXPECT_TRUE(std::equal(quiet.data(), quiet.data() + quiet.numel(), heard.data()));
  const Generator& g = e.synth->decoder().generator();
  size_t pieces = 0;
  for (size_t i = 0; i < g.num_stages(); ++i) pieces += 1 + g.config().resblock_kernel_sizes.size();
  ASSERT_EQ(fractions.size(), 1 + pieces + 1) << "decoder half, each stage's source branch and resblocks, the end";
  for (size_t i = 1; i < fractions.size(); ++i) EXPECT_GT(fractions[i], fractions[i - 1]) << i;
  EXPECT_EQ(fractions.back(), 1.0);
  // The decoder half is a small share of the work (1024-wide convs at 40 columns per second against the
  // generator's 256 and 128 channels at 400 and 2400 columns per second).
  const double decoder_share = e.synth->decoder().features_macs_per_frame() / e.synth->decoder().macs_per_frame();
  EXPECT_DOUBLE_EQ(fractions.front(), decoder_share);
  EXPECT_GT(decoder_share, 0.01);
  EXPECT_LT(decoder_share, 0.2);
}

// Exact mode's pre-roll following the vocoder's progress (PrerollOptions::follow_progress), in virtual
// time: the test's clock is the pre-roll's clock and the device's. It advances only while the vocoder
// "works": at each progress point of a segment's vocoding the vocoder thread plays the device, one period
// after the other, until the clock reaches the time that much of the segment takes at the simulated pace
// (seconds per audio second, per segment and per fraction of its work). Before each period it waits until
// the engine has handed over all it may (the output thread's own pace is not the test's subject). The outcome
// depends on the simulated paces only, not on this machine's speed.
class VirtualVocoderTime {
 public:
  static constexpr std::size_t kPeriod = 1024;  // 43 ms: fewer steps for the same virtual time
  static constexpr int64_t kPeriodNs = static_cast<int64_t>(kPeriod) * 1000000000 / kSampleRate;
  // pace(segment, fraction): seconds per audio second of the piece of that segment ending at that fraction.
  using Pace = std::function<double(int segment, double fraction)>;
  VirtualVocoderTime(ManualDeviceSink& sink, Pace pace) : sink_(sink), pace_(std::move(pace)) {}

  std::atomic<int64_t> clock{1000000000};
  StreamOptions options(bool follow_progress) {
    StreamOptions so;
    so.preroll.follow_progress = follow_progress;
    so.preroll_clock_ns = &clock;
    so.on_vocode_progress = [this](double audio_seconds, double fraction) { progress(audio_seconds, fraction); };
    return so;
  }
  void attach(StreamEngine& eng) { eng_ = &eng; }
  // The clock when the device first played a sample (-1: not yet), in seconds since the first vocoding began.
  double start_seconds() const { return start_ns_ < 0 ? -1 : static_cast<double>(start_ns_ - first_ns_) * 1e-9; }
  double seconds_now() const { return static_cast<double>(clock.load() - first_ns_) * 1e-9; }
  std::vector<float> played;

  // While the engine waits for more text (the vocoder idle): plays everything handed over so far, the clock
  // moving one period per period played, as a device plays the last sentence before the next one arrives.
  void play_out() {
    for (;;) {
      catch_up();
      if (sink_.queued() == 0 && !eng_->stats().preroll_holding) return;
      render();
      clock.fetch_add(kPeriodNs);
    }
  }
  // After the last vocoding: plays the rest as the device would (it never runs ahead of the engine here).
  void play_rest() {
    for (;;) {
      const bool idle = eng_->wait_idle(0);
      if (sink_.queued() >= kPeriod || (idle && sink_.queued() > 0)) {
        render();
      } else if (idle) {
        return;
      } else {
        std::this_thread::sleep_for(std::chrono::milliseconds(1));
      }
    }
  }

 private:
  void progress(double audio_seconds, double fraction) {
    if (first_ns_ < 0) first_ns_ = clock.load();
    if (fraction <= last_fraction_) {  // a new segment (its first progress point)
      ++segment_;
      segment_start_ns_ = clock.load();
      segment_time_ = 0;
      last_fraction_ = 0;
    }
    segment_time_ += (fraction - last_fraction_) * audio_seconds * pace_(segment_, fraction);
    last_fraction_ = fraction;
    const int64_t target = segment_start_ns_ + static_cast<int64_t>(segment_time_ * 1e9);
    while (clock.load() < target) {
      catch_up();
      render();
      clock.fetch_add(kPeriodNs);
    }
  }
  // Waits until the output thread has handed the device everything it may: all that is vocoded, or nothing
  // while a hold lasts (a hold whose release time has come is about to end).
  void catch_up() {
    for (;;) {
      const StreamEngineStats st = eng_->stats();
      if (st.preroll_holding ? clock.load() < st.preroll_release_at_ns : st.samples_to_sink == st.samples_vocoded) return;
      std::this_thread::sleep_for(std::chrono::microseconds(200));
    }
  }
  void render() {
    const std::vector<float> p = sink_.render(kPeriod);
    if (start_ns_ < 0 && any_sound(p)) start_ns_ = clock.load();
    played.insert(played.end(), p.begin(), p.end());
  }

  ManualDeviceSink& sink_;
  Pace pace_;
  StreamEngine* eng_ = nullptr;
  int segment_ = -1;
  double last_fraction_ = 2, segment_time_ = 0;
  int64_t segment_start_ns_ = 0, first_ns_ = -1, start_ns_ = -1;
};

struct VirtualRun {
  double start_s = -1, vocoded_s = -1;  // virtual seconds: first sound, end of the last vocoding
  uint64_t underruns = 0, holds = 0;
  std::vector<float> played;
};

// Once everything is vocoded: plays the rest and collects the run's figures.
VirtualRun finish_virtual_run(StreamEngine& eng, ManualDeviceSink& sink, VirtualVocoderTime& vt) {
  VirtualRun r;
  r.vocoded_s = vt.seconds_now();
  vt.play_rest();
  r.start_s = vt.start_seconds();
  r.underruns = sink.stats().underruns;
  r.holds = eng.stats().preroll_holds;
  r.played = std::move(vt.played);
  return r;
}

// kText (two segments) through the engine's frontend, or `text` in `segments` segments through `frontend`.
VirtualRun run_virtual(const Engine& e, bool follow_progress, const VirtualVocoderTime::Pace& pace,
                       std::shared_ptr<const Frontend> frontend = nullptr, const char* text = kText,
                       uint64_t segments = 2) {
  ManualDeviceSink sink(5.0);
  VirtualVocoderTime vt(sink, pace);
  StreamEngine eng(e.synth, frontend ? frontend : e.frontend, e.voice, sink, EngineVoice{1.0f, false, 7, false},
                   SynthesisMode::exact, vt.options(follow_progress));
  vt.attach(eng);
  eng.say(text);
  while (!eng.wait_idle(0) && eng.stats().chunks < segments) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  return finish_virtual_run(eng, sink, vt);
}

// A short first segment at a slow pace (its fixed costs), the second at a fast one: the first rule takes the
// first segment's pace for the second and holds playback until that is vocoded; following the progress,
// playback starts while it is still being vocoded, and neither runs dry or changes a sample.
TEST(StreamEngine, ExactModePrerollFollowingProgressStartsEarlierWhenTheVocoderIsFast) {
  const Engine& e = engine();
  ASSERT_TRUE(e.synth) << e.error;
  Watchdog dog(240);
  size_t segments = 0;
  const std::vector<float> want = offline_audio(e, kText, 7, &segments);
  ASSERT_EQ(segments, 2u);
  const auto pace = [](int segment, double) { return segment == 0 ? 2.0 : 0.5; };
  const VirtualRun first_rule = run_virtual(e, false, pace);
  const VirtualRun progress = run_virtual(e, true, pace);
  for (const VirtualRun* r : {&first_rule, &progress}) {
    SCOPED_TRACE(r == &progress ? "following progress" : "first rule");
    EXPECT_EQ(r->holds, 1u);
    EXPECT_EQ(r->underruns, 0u);
    ASSERT_GE(r->played.size(), want.size());
    const auto sound = std::find_if(r->played.begin(), r->played.end(), [](float v) { return v != 0.0f; });
    const auto first = std::find_if(want.begin(), want.end(), [](float v) { return v != 0.0f; });
    ASSERT_GE(r->played.end() - sound, want.end() - first);
    EXPECT_TRUE(std::equal(first, want.end(), sound)) << "the pre-roll changes timing only";
  }
  EXPECT_GE(first_rule.start_s, first_rule.vocoded_s) << "the first rule waits for the whole second segment";
  EXPECT_LT(progress.start_s, progress.vocoded_s) << "following progress starts while it is vocoded";
  EXPECT_LT(progress.start_s, first_rule.start_s);
}

// The second segment's vocoding slows down fourfold after the decoder half (6 % of its work), before the hold
// would have ended at the pace it started with: the rule sees it at the next progress point and holds on,
// and the device never runs dry.
TEST(StreamEngine, ExactModePrerollFollowingProgressHoldsOnWhenTheVocoderSlowsDown) {
  const Engine& e = engine();
  ASSERT_TRUE(e.synth) << e.error;
  Watchdog dog(240);
  const std::vector<float> want = offline_audio(e, kText, 7);
  // The first segment's pace makes the rule hold when the second one's vocoding starts.
  const VirtualRun steady = run_virtual(e, true, [](int, double) { return 2.0; });
  const VirtualRun slowing = run_virtual(e, true, [](int segment, double f) { return segment == 0 || f <= 0.06 ? 2.0 : 8.0; });
  for (const VirtualRun* r : {&steady, &slowing}) {
    SCOPED_TRACE(r == &steady ? "steady" : "slowing down");
    EXPECT_EQ(r->holds, 1u);
    EXPECT_EQ(r->underruns, 0u) << "never dry";
    const auto sound = std::find_if(r->played.begin(), r->played.end(), [](float v) { return v != 0.0f; });
    const auto first = std::find_if(want.begin(), want.end(), [](float v) { return v != 0.0f; });
    ASSERT_GE(r->played.end() - sound, want.end() - first);
    EXPECT_TRUE(std::equal(first, want.end(), sound));
  }
  EXPECT_LT(steady.start_s, steady.vocoded_s) << "at the steady pace playback starts during the second vocoding";
  EXPECT_GT(slowing.start_s, steady.start_s) << "the slowdown holds it longer";
}

// Issue 16's shape, small: a cut first segment (4 words), the rest of its sentence, then a long sentence.
// As one segment (segment_growth_after_cut = 0, the reference's grouping after the cut) the rest takes
// longer to vocode than the first segment plays, so playback is held; in whole sentences that grow with
// the audio before them (the default) the first segment plays as soon as the second, short one is under
// way. A machine twice as slow as this one (0.35 s per second of audio): neither runs dry, each plays its
// own offline synthesis, and the sentences are never cut.
TEST(StreamEngine, ExactModeAfterACutWholeSentencesThatGrowStartSoonerThanOneLongSegment) {
  const Engine& e = engine();
  ASSERT_TRUE(e.synth) << e.error;
  Watchdog dog(240);
  const char* text =
      "The lamp flickered twice in the wind, and the keeper woke. "
      "He climbed the stairs with a candle and wrote in his ledger that the storm had come back.";
  FrontendOptions fo = e.frontend->options();
  fo.segment_growth_after_cut = 0;
  const auto one_long = std::make_shared<const Frontend>(fo);
  const std::vector<Segment> grown_segments = e.frontend->segment(text);
  ASSERT_EQ(grown_segments.size(), 3u) << "4 words, the rest of the first sentence, the second sentence";
  EXPECT_EQ(grown_segments[1].text, "in the wind, and the keeper woke.");
  ASSERT_EQ(one_long->segment(text).size(), 2u);
  size_t n = 0;
  const std::vector<float> want_grown = offline_audio(e, text, 7, &n);
  const std::vector<float> want_long = offline_audio(e, text, 7, &n, one_long.get());
  const auto pace = [](int, double) { return 0.35; };
  const VirtualRun grown = run_virtual(e, true, pace, e.frontend, text, 3);
  const VirtualRun longer = run_virtual(e, true, pace, one_long, text, 2);
  for (const auto& [r, want] : {std::pair{&grown, &want_grown}, std::pair{&longer, &want_long}}) {
    SCOPED_TRACE(r == &grown ? "whole sentences that grow" : "one long segment");
    EXPECT_EQ(r->underruns, 0u) << "never dry";
    const auto sound = std::find_if(r->played.begin(), r->played.end(), [](float v) { return v != 0.0f; });
    const auto first = std::find_if(want->begin(), want->end(), [](float v) { return v != 0.0f; });
    ASSERT_GE(r->played.end() - sound, want->end() - first);
    EXPECT_TRUE(std::equal(first, want->end(), sound)) << "the offline synthesis of the same segments";
  }
  EXPECT_EQ(longer.holds, 1u) << "one long segment after the cut must be waited for";
  EXPECT_EQ(grown.holds, 0u) << "each grown segment takes less time than the audio ahead of it plays";
  EXPECT_LT(grown.start_s, longer.start_s) << "the grown segments start sooner";
  EXPECT_LT(grown.start_s, grown.vocoded_s) << "playback starts while the last sentence is vocoded";
}

// Slice mode's pre-roll (PrerollOptions::slice_margin_*, StreamEngine::preroll_decide_slices), in the same
// virtual time: each slice reports its progress as exact mode's vocoding does. At a pace whose doubling slices
// keep up (0.2 s per second of audio; the virtual clock moves in 43 ms periods, so the first push's measured
// pace rounds up: 0.3 would read 0.43 and hold the first utterance of an engine for ~10 ms) the first slice
// plays at once; at one that does not (0.9 s), the first audio waits until the rest can follow, and the device
// never runs dry, where without the rule it does. The audio is the same in all three.
// Slice mode on the manual device in virtual time at `pace`, with or without the pre-roll rule, its sentences
// whole (no cut first segment). Members in this order: the engine goes first, then what it plays into.
struct VirtualSliceEngine {
  ManualDeviceSink sink{5.0};
  VirtualVocoderTime vt;
  StreamEngine eng;
  VirtualSliceEngine(const Engine& e, double pace, bool rule)
      : vt(sink, [pace](int, double) { return pace; }),
        eng(e.synth, whole_sentences(e), e.voice, sink, EngineVoice{1.0f, false, 7, false}, SynthesisMode::slice,
            options(e, vt, rule)) {
    vt.attach(eng);
  }
  // Until `samples` are vocoded (the vocoder thread moves the clock and plays the device meanwhile).
  void wait_vocoded(uint64_t samples) {
    while (!eng.wait_idle(0) && eng.stats().samples_vocoded < samples) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }

 private:
  static std::shared_ptr<const Frontend> whole_sentences(const Engine& e) {
    FrontendOptions fo = e.frontend->options();
    fo.first_segment_max_words = 0;
    return std::make_shared<const Frontend>(fo);
  }
  static StreamOptions options(const Engine& e, VirtualVocoderTime& vt, bool rule) {
    StreamOptions so = vt.options(true);
    so.predictor = recommended_slice_options(e.synth->model()).predictor;
    so.preroll.enabled = rule;
    return so;
  }
};

VirtualRun run_virtual_slices(const Engine& e, double pace, bool rule, const char* text, uint64_t samples) {
  VirtualSliceEngine v(e, pace, rule);
  v.eng.say(text);
  v.wait_vocoded(samples);
  return finish_virtual_run(v.eng, v.sink, v.vt);
}

TEST(StreamEngine, SliceModePrerollWaitsOnlyWhenTheSlicesCannotKeepUp) {
  const Engine& e = engine();
  ASSERT_TRUE(e.synth) << e.error;
  ASSERT_NE(recommended_slice_options(e.synth->model()).predictor, nullptr) << "no statistics predictor for the model";
  Watchdog dog(400);
  const char* text = "The lamp flickered twice, and the old clock on the wall struck nine. Then the whole house went dark.";
  // Slice mode's segments (the first sentence alone) are exact mode's for the sentences on two lines.
  FrontendOptions fo = e.frontend->options();
  fo.first_segment_max_words = 0;
  const Frontend whole(fo);
  size_t segments = 0;
  const uint64_t samples =
      offline_audio(e, "The lamp flickered twice, and the old clock on the wall struck nine.\nThen the whole house went dark.", 7,
                    &segments, &whole).size();
  ASSERT_EQ(segments, 2u);
  const VirtualRun fast = run_virtual_slices(e, 0.2, true, text, samples);
  const VirtualRun slow = run_virtual_slices(e, 0.9, true, text, samples);
  const VirtualRun slow_no_rule = run_virtual_slices(e, 0.9, false, text, samples);
  std::printf("first sound at %.3f s (pace 0.2), %.3f s (0.9), %.3f s (0.9, no rule); underruns %llu, %llu, %llu\n",
              fast.start_s, slow.start_s, slow_no_rule.start_s, static_cast<unsigned long long>(fast.underruns),
              static_cast<unsigned long long>(slow.underruns), static_cast<unsigned long long>(slow_no_rule.underruns));
  EXPECT_EQ(fast.holds, 0u) << "slices that keep up play at once";
  EXPECT_EQ(fast.underruns, 0u);
  EXPECT_EQ(slow.holds, 1u);
  EXPECT_EQ(slow.underruns, 0u) << "held until the rest can follow";
  EXPECT_GT(slow_no_rule.underruns, 0u) << "without the rule this pace runs dry (else the test shows nothing)";
  EXPECT_GT(slow.start_s, slow_no_rule.start_s);
  EXPECT_LT(fast.start_s, 0.1) << "the first slice (0.1 s of audio, 0.2 s pushed) takes 0.04 s at this pace";
  auto sound = [](const std::vector<float>& v) {
    return std::vector<float>(std::find_if(v.begin(), v.end(), [](float x) { return x != 0.0f; }), v.end());
  };
  const std::vector<float> a = sound(fast.played), b = sound(slow.played);
  ASSERT_GT(a.size(), 24000u);
  ASSERT_GE(b.size(), a.size() - 2048);
  EXPECT_TRUE(std::equal(a.begin(), a.begin() + (a.size() - 2048), b.begin())) << "the pre-roll changes timing only";
}

// Text that streams in (begin_text): the second sentence arrives only after the first one has played out,
// at a pace whose slices cannot keep up (0.9 s per second of audio). It starts anew: its audio waits for the
// pre-roll rule as the utterance's first sentence did (a second hold), and the device does not run dry in it,
// where without the rule it does. The samples are those of a run at a pace that keeps up (timing only).
struct StreamedRun {
  uint64_t holds = 0, dry_in_second = 0, dry_waiting_for_text = 0;  // the last: up to the second sentence's text
  std::vector<float> played;
};
StreamedRun run_virtual_streamed(const Engine& e, double pace, bool rule, const std::string& first,
                                 const std::string& rest, uint64_t first_samples, uint64_t samples) {
  VirtualSliceEngine v(e, pace, rule);
  const uint64_t id = v.eng.begin_text(/*pause_flush_seconds=*/0);  // this machine's speed must not cut a sentence
  EXPECT_TRUE(v.eng.append_text(id, first));
  v.wait_vocoded(first_samples);  // the stream is open: the engine is not idle before its end
  // The engine marks the pause once the first sentence is handed over and it waits for text (the test then
  // knows where the device's audio ends before it plays it out).
  while (v.sink.pauses() == 0) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  v.vt.play_out();  // the first sentence plays to its end; the device then waits for text
  // The device ran out of audio while the engine waited for text: a pause the engine marked (mark_pause), not an
  // underrun.
  const uint64_t dry_before = v.sink.stats().underruns;
  EXPECT_TRUE(v.eng.append_text(id, rest));
  EXPECT_TRUE(v.eng.end_text(id));
  v.wait_vocoded(samples);
  VirtualRun r = finish_virtual_run(v.eng, v.sink, v.vt);
  return StreamedRun{r.holds, r.underruns - dry_before, dry_before, std::move(r.played)};
}

TEST(StreamEngine, SliceModeStreamedSentenceAfterTheLastOnePlayedWaitsForThePrerollAgain) {
  const Engine& e = engine();
  ASSERT_TRUE(e.synth) << e.error;
  ASSERT_NE(recommended_slice_options(e.synth->model()).predictor, nullptr) << "no statistics predictor for the model";
  Watchdog dog(400);
  // "Then" shows where the first sentence ends; the rest of the second one comes after it has played.
  const std::string first = "The lamp flickered twice, and the old clock on the wall struck nine. Then";
  const std::string rest = " the whole house went dark, and nobody in the village below saw the light again.";
  FrontendOptions fo = e.frontend->options();
  fo.first_segment_max_words = 0;
  const Frontend whole(fo);
  // Slice mode's lengths are exact mode's: the sentences' offline synthesis tells when each is vocoded.
  const std::vector<float> want_first =
      offline_audio(e, "The lamp flickered twice, and the old clock on the wall struck nine.", 7, nullptr, &whole);
  const std::vector<float> want_second =
      offline_audio(e, "Then the whole house went dark, and nobody in the village below saw the light again.", 7, nullptr, &whole);
  const uint64_t samples = want_first.size() + want_second.size();
  const StreamedRun with_rule = run_virtual_streamed(e, 0.9, true, first, rest, want_first.size(), samples);
  const StreamedRun without = run_virtual_streamed(e, 0.9, false, first, rest, want_first.size(), samples);
  const StreamedRun keeping_up = run_virtual_streamed(e, 0.2, true, first, rest, want_first.size(), samples);
  std::printf("[measured] streamed second sentence at 0.9 s per second of audio: %llu hold(s), %llu dry moment(s) in "
              "it; without the rule %llu dry; at 0.2 s %llu hold(s), %llu dry\n",
              static_cast<unsigned long long>(with_rule.holds), static_cast<unsigned long long>(with_rule.dry_in_second),
              static_cast<unsigned long long>(without.dry_in_second), static_cast<unsigned long long>(keeping_up.holds),
              static_cast<unsigned long long>(keeping_up.dry_in_second));
  EXPECT_EQ(with_rule.holds, 2u) << "the utterance's start, and the sentence that starts after the audio ran out";
  EXPECT_EQ(with_rule.dry_in_second, 0u) << "held until the rest of the sentence can follow";
  EXPECT_GT(without.dry_in_second, 0u) << "without the rule this pace runs dry (else the test shows nothing)";
  EXPECT_EQ(keeping_up.holds, 0u) << "slices that keep up play at once, after a wait for text too";
  EXPECT_EQ(keeping_up.dry_in_second, 0u);
  // Up to the second sentence's text (the first sentence played out, then the wait for text; without the rule
  // the first sentence itself runs dry at this pace).
  for (const StreamedRun* run : {&with_rule, &keeping_up})
    EXPECT_EQ(run->dry_waiting_for_text, 0u) << "the wait for the second sentence's text is a pause, not an underrun";
  // The pre-roll changes timing only: the sound is the same, sample for sample, once silence is left out.
  const auto sound = [](const std::vector<float>& v) {
    std::vector<float> out;
    std::copy_if(v.begin(), v.end(), std::back_inserter(out), [](float x) { return x != 0.0f; });
    return out;
  };
  const std::vector<float> held = sound(with_rule.played), reference = sound(keeping_up.played);
  EXPECT_GT(held.size(), samples * 9 / 10) << "both sentences are heard";
  EXPECT_TRUE(held == reference) << held.size() << " vs " << reference.size() << " samples of sound";
}

}  // namespace
