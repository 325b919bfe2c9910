#include "bench/bench_runner.h"

#include <chrono>
#include <numeric>

#include "core/error.h"
#include "frontend/utf8.h"
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
    SeededNoise noise(0);
    StageTimer timer;
    bool first = true;
    for (const Segment& seg : segments) {
      const auto tf = Clock::now();
      const std::vector<int64_t> ids = tokenize(seg.phonemes, vocab_);
      m.frontend_ms += ms_between(tf, Clock::now());
      if (ids.empty()) continue;
      const int64_t n_phonemes = static_cast<int64_t>(utf8::count_code_points(seg.phonemes));
      timer.start();
      const SynthesisResult r = synth_->synthesize(ids, voice_, options_.speed, n_phonemes, &noise, &timer.trace());
      timer.stop();
      if (first) m.ttfa_ms = ms_between(t0, Clock::now());
      first = false;
      SegmentMeasure s;
      s.tokens = static_cast<int64_t>(ids.size()) + 2;
      s.frames = std::accumulate(r.durations.begin(), r.durations.end(), int64_t{0});
      s.stages = timer.times();
      m.segments.push_back(s);
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

}  // namespace

std::unique_ptr<Runner> make_runner(const std::string& mode, std::shared_ptr<const Synthesizer> synth,
                                    const std::string& assets_dir, const RunnerOptions& options) {
  if (mode == "exact") return std::make_unique<ExactRunner>(std::move(synth), assets_dir, options);
  if (mode == "stream")
    throw Error("kokoro-bench --mode stream: the streaming engine (engine/stream*) is not in this build yet; "
                "add a StreamRunner in bench/bench_runner.cpp when it lands");
  throw Error("kokoro-bench: unknown mode \"" + mode + "\" (exact or stream)");
}

}  // namespace kokoro::bench
