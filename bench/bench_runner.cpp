#include "bench/bench_runner.h"

#include <cstdio>

#include <chrono>
#include <mutex>
#include <numeric>
#include <optional>

#include <future>

#include "core/error.h"
#include "engine/stream_engine.h"
#include "frontend/utf8.h"
#include "bench/simulated_device.h"
#include "vocoder/noise.h"

namespace kokoro::bench {

namespace {

using Clock = std::chrono::steady_clock;
double ms_between(Clock::time_point a, Clock::time_point b) {
  return std::chrono::duration<double, std::milli>(b - a).count();
}

class ExactRunner : public Runner {
 public:
  ExactRunner(std::shared_ptr<const Synthesizer> synth, const std::string& assets_dir, const RunnerOptions& o)
      : synth_(std::move(synth)),
        frontend_(make_frontend(assets_dir, o)),
        vocab_(Vocab::from_config(synth_->model().config(), synth_->model().path())),
        voice_(VoicePack::resolve(o.voice, assets_dir)),
        options_(o) {}

  UtteranceMeasure run(const std::string& text) override {
    UtteranceMeasure m;
    const auto t0 = Clock::now();
    std::vector<Segment> segments;
    if (options_.phoneme_input) {
      segments.emplace_back();
      segments.back().phonemes = text;
    } else {
      segments = frontend_.segment(text);
    }
    m.frontend_ms = ms_between(t0, Clock::now());
    m.stages.add(EngineStage::frontend, m.frontend_ms, true);
    SeededNoise noise(0);
    StageTimer timer;
    bool first = true;
    for (const Segment& seg : segments) {
      const auto tf = Clock::now();
      const std::vector<int64_t> ids = tokenize(seg.phonemes, vocab_);
      m.frontend_ms += ms_between(tf, Clock::now());
      m.stages.add(EngineStage::frontend, ms_between(tf, Clock::now()), first);
      if (ids.empty()) continue;
      const int64_t n_phonemes = static_cast<int64_t>(utf8::count_code_points(seg.phonemes));
      timer.start();
      const SynthesisResult r = synth_->synthesize(ids, voice_, options_.speed, n_phonemes, &noise, &timer.trace());
      timer.stop();
      const double ready_ms = ms_between(t0, Clock::now());
      if (first) {
        m.ttfa_ms = ready_ms;
      } else if (const double due_ms = m.ttfa_ms + m.dry_ms + m.audio_s * 1e3; ready_ms > due_ms + 1.0) {
        ++m.underruns;  // this segment arrives after the previous ones have played
        m.dry_ms += ready_ms - due_ms;
      }
      add_stage_times(m.stages, timer.times(), first);
      first = false;
      SegmentMeasure s;
      s.tokens = static_cast<int64_t>(ids.size()) + 2;
      s.frames = std::accumulate(r.durations.begin(), r.durations.end(), int64_t{0});
      m.segments.push_back(s);
      ++m.segment_count;
      m.audio_s += r.seconds();
    }
    m.compute_ms = ms_between(t0, Clock::now());
    if (first) throw Error("benchmark utterance produced no speech: \"" + text + "\"");
    return m;
  }

 private:
  static Frontend make_frontend(const std::string& assets_dir, const RunnerOptions& o) {
    FrontendOptions fo;
    fo.assets_dir = assets_dir;
    fo.first_segment_max_words = o.first_words;
    return Frontend(fo);
  }

  std::shared_ptr<const Synthesizer> synth_;
  Frontend frontend_;
  Vocab vocab_;
  VoicePack voice_;
  RunnerOptions options_;
};

StreamOptions with_preroll(StreamOptions stream, const RunnerOptions& o) {
  stream.preroll.enabled = o.preroll;
  return stream;
}

// The streaming engine (engine/stream_engine.h) in a given mode onto a simulated real-time device: TTFA is the
// engine's own first_audio_ms (say() to the first samples handed to the sink), compute time is say() to the
// utterance's report, stage times are the report's.
class EngineRunner : public Runner {
 public:
  EngineRunner(std::shared_ptr<const Synthesizer> synth, const std::string& assets_dir, const RunnerOptions& o,
               SynthesisMode mode, StreamOptions stream)
      : engine_(synth, std::make_shared<const Frontend>(make_frontend_options(assets_dir, o)),
                VoicePack::resolve(o.voice, assets_dir), sink_, engine_voice(o), mode, with_preroll(std::move(stream), o)) {
    engine_.on_report([this](const UtteranceReport& r) {
      std::lock_guard<std::mutex> lock(mutex_);
      if (pending_) {
        pending_->set_value(r);
        pending_.reset();
      }
    });
  }

  UtteranceMeasure run(const std::string& text) override {
    std::future<UtteranceReport> done;
    {
      std::lock_guard<std::mutex> lock(mutex_);
      pending_.emplace();
      done = pending_->get_future();
    }
    const auto t0 = Clock::now();
    engine_.say(text);
    const UtteranceReport r = done.get();
    UtteranceMeasure m;
    m.compute_ms = ms_between(t0, Clock::now());
    if (!r.error.empty()) throw Error(std::string(to_string(engine_.mode())) + " mode: " + r.error);
    m.ttfa_ms = r.first_audio_ms;
    m.audio_s = r.audio_seconds;
    const DryRun dry = sink_.take();
    m.underruns = dry.underruns;
    m.dry_ms = dry.dry_ms;
    m.stages = r.stages;
    m.frontend_ms = r.stages.total(EngineStage::frontend);
    m.segment_count = r.segments;
    for (const UtteranceReport::SegmentSize& s : r.segment_sizes) m.segments.push_back({s.tokens, s.frames});
    return m;
  }

 private:
  static FrontendOptions make_frontend_options(const std::string& assets_dir, const RunnerOptions& o) {
    FrontendOptions fo;
    fo.assets_dir = assets_dir;
    fo.first_segment_max_words = o.first_words;
    return fo;
  }
  static EngineVoice engine_voice(const RunnerOptions& o) {
    EngineVoice v;
    v.speed = o.speed;
    v.phoneme_input = o.phoneme_input;
    return v;
  }

  SimulatedDeviceSink sink_;
  StreamEngine engine_;
  std::mutex mutex_;
  std::optional<std::promise<UtteranceReport>> pending_;
};

}  // namespace

std::unique_ptr<Runner> make_runner(const std::string& mode, std::shared_ptr<const Synthesizer> synth,
                                    const std::string& assets_dir, const RunnerOptions& options) {
  if (mode == "exact") return std::make_unique<ExactRunner>(std::move(synth), assets_dir, options);
  if (mode == "engine-exact")
    return std::make_unique<EngineRunner>(std::move(synth), assets_dir, options, SynthesisMode::exact, StreamOptions{});
  if (mode == "slice") {  // the slice settings kokoro-say uses (the model's statistics predictor when it has one)
    std::string note;
    StreamOptions slice = recommended_slice_options(synth->model(), &note);
    std::fprintf(stderr, "kokoro-bench: %s\n", note.c_str());
    if (options.max_slice_seconds > 0) slice.max_chunk_frames = slice_frames(options.max_slice_seconds);
    if (options.first_slice_seconds > 0) slice.first_chunk_frames = slice_frames(options.first_slice_seconds);
    if (options.reference_segments) slice.first_sentence_alone = false;
    return std::make_unique<EngineRunner>(std::move(synth), assets_dir, options, SynthesisMode::slice, std::move(slice));
  }
  parse_synthesis_mode(mode);  // says why a retired mode is gone
  throw Error("kokoro-bench: unknown mode \"" + mode + "\" (exact, engine-exact, slice)");
}

}  // namespace kokoro::bench
