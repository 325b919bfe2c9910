// kokoro-stream-eval: what streaming costs in fidelity and what it gains in latency, on the real weights.
//
// For every sentence of the corpus (one frontend segment each), the exact audio is Decoder::forward over the
// whole segment (the reference's semantics). Each streaming configuration (statistics policy x chunk size)
// then runs the StreamDecoder on the same aligned frames with the same noise, and is measured against it:
// LSD and MCD (bench/stream_metrics.h), the energy step at its chunk borders (against the same positions and
// random positions of the exact audio), the vocoder's time to first audio and its RTF (compute / audio).
//
//   kokoro-stream-eval                                   the table of docs/streaming.md
//   kokoro-stream-eval --policies blend:20 --chunks 5    one configuration
//
// Policies (vocoder/stream_norm.h): oracle (the exact statistics: a check, LSD 0), chunk (each chunk's own),
// cumulative, prior (per-voice calibrated priors, fixed), blend:W (priors worth W frames blended with the
// cumulative statistics), hybrid:W (decoder over the whole segment first, exact; generator streamed with
// blend:W), hybridprior (same with fixed priors in the generator).
// predict (the learned statistics predictor's, vocoder/stats_predictor.h, fixed per segment; --predictor: a late
// one is hybrid, for the generator's layers, an early one's stream the whole decoder).
// Priors are calibrated on --calibration (other sentences) and cached in --priors.
//
//                                                           per variant: LSD/MCD, first second and rest, level
#include <CLI/CLI.hpp>
#include <Eigen/Core>

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <random>
#include <sstream>

#include "bench/stream_metrics.h"
#include "core/assets.h"
#include "core/error.h"
#include "core/parallel.h"
#include "engine/stream_engine.h"
#include "engine/synthesizer.h"
#include "realtime/null_sink.h"
#include "frontend/frontend.h"
#include "frontend/utf8.h"
#include "frontend/vocab.h"
#include "vocoder/stats_predictor.h"
#include "vocoder/stream_decoder.h"
#include "apps/common/malloc_tuning.h"

using namespace kokoro;
using namespace kokoro::bench;

namespace {

using Clock = std::chrono::steady_clock;
double ms_since(Clock::time_point t) { return std::chrono::duration<double, std::milli>(Clock::now() - t).count(); }

struct Case {
  std::string text;
  AlignedFeatures feats;
  Tensor shared;  // the prosody predictor's shared BiLSTM output (an early predictor's features)
  std::vector<float> style;
  std::vector<float> exact;
  double exact_ms = 0, decoder_ms = 0;  // whole-segment vocoder time, and its decoder half
  double acoustic_ms = 0;
  int64_t frames() const { return feats.frames(); }
};

std::vector<std::string> read_lines(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw Error("cannot read corpus " + path);
  std::vector<std::string> lines;
  for (std::string l; std::getline(in, l);)
    if (!l.empty()) lines.push_back(l);
  return lines;
}

// Frontend -> aligned features of every segment of every line.
std::vector<Case> prepare(const std::vector<std::string>& lines, const Frontend& fe, const Vocab& vocab,
                          const VoicePack& voice, const Synthesizer& synth, bool exact_audio) {
  std::vector<Case> cases;
  for (const std::string& line : lines)
    for (const Segment& seg : fe.segment(line)) {
      std::vector<int64_t> ids = tokenize(seg.phonemes, vocab);
      if (ids.empty()) continue;
      Case c;
      c.text = seg.text;
      const float* row = voice.style_for(static_cast<int>(utf8::count_code_points(seg.phonemes)));
      c.style.assign(row, row + kStyleDim);
      ids.insert(ids.begin(), 0);
      ids.push_back(0);
      auto t0 = Clock::now();
      synth.acoustic().forward_text(ids, c.style.data(), 1.0f, c.feats, c.shared);
      synth.acoustic().forward_curves(c.shared, c.style.data(), c.feats);
      c.acoustic_ms = ms_since(t0);
      if (exact_audio) {
        SeededNoise noise(0);
        Tensor audio, x;
        t0 = Clock::now();
        synth.decoder().forward(c.feats.asr, c.feats.f0, c.feats.n, c.style.data(), noise, audio);
        c.exact_ms = ms_since(t0);
        t0 = Clock::now();
        synth.decoder().features(c.feats.asr, c.feats.f0, c.feats.n, c.style.data(), x);
        c.decoder_ms = ms_since(t0);
        c.exact.assign(audio.data(), audio.data() + audio.numel());
      }
      cases.push_back(std::move(c));
    }
  return cases;
}

NormPriors calibrate(const std::vector<Case>& cases, const Decoder& dec, const std::string& voice) {
  NormPriors p;
  p.voice = voice;
  for (const Case& c : cases) {
    SeededNoise noise(0);
    Tensor audio;
    InstanceStatsCapture capture;
    dec.forward(c.feats.asr, c.feats.f0, c.feats.n, c.style.data(), noise, audio);
    p.add_segment(capture.stats(), c.frames());
  }
  p.finish();
  return p;
}

struct Policy {
  std::string name;
  bool hybrid = false;  // decoder over the whole segment first (exact), generator streamed
  std::function<std::unique_ptr<NormPolicy>(const Case&)> make;
};

// The predictor's statistics for a case: a late predictor's for the generator layers (from the exact decoder
// features), an early one's for every decoder layer (from the aligned text and shared prosody features).
std::map<std::string, InstanceStats> predicted_stats(const StatsPredictor& predictor, const Decoder& dec, const Case& c) {
  std::vector<float> features;
  if (predictor.early()) {
    features = stats_predictor_early_features(c.feats.asr, c.shared, c.style.data(), static_cast<int64_t>(c.style.size()));
  } else {
    Tensor x;
    dec.features(c.feats.asr, c.feats.f0, c.feats.n, c.style.data(), x);
    features = stats_predictor_features(x, c.feats.f0.data(), c.style.data(), dec.style_dim());
  }
  std::map<std::string, InstanceStats> s;
  for (const auto& [name, m] : predictor.predict(features)) s[name] = to_instance_stats(m);
  return s;
}

// The exact statistics of every AdaIN layer for a case (the offline run, captured).
std::map<std::string, InstanceStats> exact_stats(const Decoder& dec, const Case& c) {
  SeededNoise noise(0);
  Tensor audio;
  InstanceStatsCapture capture;
  dec.forward(c.feats.asr, c.feats.f0, c.feats.n, c.style.data(), noise, audio);
  return capture.take();
}

Policy make_policy(const std::string& spec, std::shared_ptr<const NormPriors> priors,
                   const std::function<std::shared_ptr<const StatsPredictor>()>& predictor, const Decoder& dec) {
  Policy p;
  p.name = spec;
  const auto colon = spec.find(':');
  const std::string kind = spec.substr(0, colon);
  const double w = colon == std::string::npos || kind == "swap" || kind == "predictexact" ? 0 : std::stod(spec.substr(colon + 1));
  if (kind == "oracle") {
    p.make = [&dec](const Case& c) -> std::unique_ptr<NormPolicy> {
      return std::make_unique<SuppliedStats>(exact_stats(dec, c));
    };
  } else if (kind == "swap") {
    // Diagnosis: the exact statistics everywhere except the layers whose name starts with the given prefix,
    // which get the priors. Shows which layers the statistics matter for.
    const std::string prefix = spec.substr(colon + 1);
    p.make = [&dec, priors, prefix](const Case& c) -> std::unique_ptr<NormPolicy> {
      std::map<std::string, InstanceStats> s = exact_stats(dec, c);
      for (auto& [name, st] : s)
        if (name.rfind(prefix, 0) == 0) st = to_instance_stats(priors->layers.at(name));
      return std::make_unique<SuppliedStats>(std::move(s));
    };
  } else if (kind == "scale" || kind == "shift") {
    // Diagnosis: the exact statistics with every generator layer's 1/std scaled by (1 + w) ("scale:w") or its
    // mean moved by w standard deviations ("shift:w"): how sensitive the audio is to statistics errors.
    const bool scale = kind == "scale";
    p.make = [&dec, w, scale](const Case& c) -> std::unique_ptr<NormPolicy> {
      std::map<std::string, InstanceStats> s = exact_stats(dec, c);
      for (auto& [name, st] : s)
        if (name.rfind("decoder.generator.", 0) == 0)
          for (size_t ch = 0; ch < st.mean.size(); ++ch) {
            if (scale) st.inv_std[ch] *= static_cast<float>(1 + w);
            else st.mean[ch] += static_cast<float>(w) / st.inv_std[ch];
          }
      return std::make_unique<SuppliedStats>(std::move(s));
    };
  } else if (kind == "predict") {
    std::shared_ptr<const StatsPredictor> pr = predictor();
    p.hybrid = !pr->early();  // an early predictor: the whole decoder streams
    p.make = [&dec, pr](const Case& c) -> std::unique_ptr<NormPolicy> {
      return std::make_unique<SuppliedStats>(predicted_stats(*pr, dec, c));
    };
  } else if (kind == "predictexact") {
    // Diagnosis: the predictor's statistics, except the layers whose name starts with the given prefix,
    // which get the exact ones: which layers a predictor's error comes from. Several prefixes: a+b.
    std::shared_ptr<const StatsPredictor> pr = predictor();
    p.hybrid = !pr->early();
    const std::string prefix = spec.substr(colon + 1);
    p.make = [&dec, pr, prefix](const Case& c) -> std::unique_ptr<NormPolicy> {
      std::map<std::string, InstanceStats> s = predicted_stats(*pr, dec, c), exact = exact_stats(dec, c);
      for (auto& [name, st] : s)
        for (size_t at = 0; at <= prefix.size();) {  // prefixes joined by '+'
          const size_t end = std::min(prefix.find('+', at), prefix.size());
          if (name.rfind(prefix.substr(at, end - at), 0) == 0) st = exact.at(name);
          at = end + 1;
        }
      return std::make_unique<SuppliedStats>(std::move(s));
    };
  } else if (kind == "predictpool") {
    // The predicted moments for the columns still to come, the columns seen so far with their own.
    p.hybrid = true;
    std::shared_ptr<const StatsPredictor> pr = predictor();
    p.make = [&dec, pr](const Case& c) -> std::unique_ptr<NormPolicy> {
      Tensor x;
      dec.features(c.feats.asr, c.feats.f0, c.feats.n, c.style.data(), x);
      return std::make_unique<PredictedStats>(
          pr->predict(stats_predictor_features(x, c.feats.f0.data(), c.style.data(), dec.style_dim())), true);
    };
  } else if (kind == "chunk") {
    p.make = [](const Case&) { return std::make_unique<ChunkStats>(); };
  } else if (kind == "cumulative") {
    p.make = [](const Case&) { return std::make_unique<RunningStats>(nullptr, 0.0); };
  } else if (kind == "prior" || kind == "hybridprior") {
    p.hybrid = kind == "hybridprior";
    p.make = [priors](const Case&) { return std::make_unique<SuppliedStats>(SuppliedStats::from_priors(*priors)); };
  } else if (kind == "blend" || kind == "hybrid") {
    if (colon == std::string::npos) throw Error("policy " + spec + " needs a weight, e.g. " + kind + ":20");
    p.hybrid = kind == "hybrid";
    p.make = [priors, w](const Case&) { return std::make_unique<RunningStats>(priors, w); };
  } else {
    throw Error("unknown policy " + spec + " (oracle, chunk, cumulative, prior, blend:W, hybrid:W, hybridprior, predict, predictpool)");
  }
  return p;
}

constexpr int64_t kSourceLeadFrames = 2;  // as the engine (StreamOptions::source_lead_frames)

struct RunResult {
  std::vector<float> audio;
  std::vector<int64_t> borders;  // sample positions where one push's output meets the next one's
  double first_audio_ms = 0, total_ms = 0;
};

// Chunk sizes: "N" fixed N frames, or "A-B" growing: A frames first, doubling up to B (the engine's schedule).
struct Schedule {
  int64_t first = 1, max = 1;
  std::string name;
  int64_t next(int64_t current) const { return std::min(2 * current, max); }
};

Schedule parse_schedule(const std::string& s) {
  Schedule r;
  r.name = s;
  const auto dash = s.find('-');
  r.first = std::stoll(s.substr(0, dash));
  r.max = dash == std::string::npos ? r.first : std::stoll(s.substr(dash + 1));
  if (r.first < 1 || r.max < r.first) throw Error("bad chunk schedule " + s);
  return r;
}

RunResult run_stream(const Decoder& dec, StreamDecoder& sd, const Case& c, const Policy& policy, const Schedule& sched) {
  RunResult r;
  std::unique_ptr<NormPolicy> norm = policy.make(c);
  SeededNoise noise(0);
  const int64_t F = c.frames();
  Tensor in, audio, x;
  const auto t0 = Clock::now();
  bool first = true;
  auto take = [&](const Tensor& a) {
    if (a.numel() == 0) return;
    if (first) r.first_audio_ms = ms_since(t0);
    first = false;
    if (!r.audio.empty()) r.borders.push_back(static_cast<int64_t>(r.audio.size()));
    r.audio.insert(r.audio.end(), a.data(), a.data() + a.numel());
  };
  if (policy.hybrid) {
    dec.features(c.feats.asr, c.feats.f0, c.feats.n, c.style.data(), x);
    sd.begin(c.style.data(), noise, *norm, F, StreamDecoder::Input::decoder_features);
    int64_t f0_sent = 0;
    for (int64_t f = 0, chunk = sched.first; f < F; f += chunk, chunk = sched.next(chunk)) {
      const int64_t m = std::min(chunk, F - f);
      copy_columns(x, 2 * f, 2 * m, in);
      const int64_t f0_to = std::min<int64_t>(2 * (f + m + kSourceLeadFrames), 2 * F);
      sd.push_features(in, c.feats.f0.data() + f0_sent, f0_to - f0_sent, f + m == F, audio);
      f0_sent = f0_to;
      take(audio);
    }
  } else {
    sd.begin(c.style.data(), noise, *norm, F);
    for (int64_t f = 0, chunk = sched.first; f < F; f += chunk, chunk = sched.next(chunk)) {
      const int64_t m = std::min(chunk, F - f);
      copy_columns(c.feats.asr, f, m, in);
      sd.push(in, c.feats.f0.data() + 2 * f, c.feats.n.data() + 2 * f, f + m == F, audio);
      take(audio);
    }
  }
  r.total_ms = ms_since(t0);
  return r;
}

void write_raw(const std::string& path, const std::vector<float>& a) {
  std::ofstream out(path, std::ios::binary);
  out.write(reinterpret_cast<const char*>(a.data()), static_cast<std::streamsize>(a.size() * sizeof(float)));
}

// A sink that plays nothing but checks the timing a device would see: each utterance starts playing when
// its first samples arrive; a write that arrives after the moment its first sample is due would have made
// the device run dry (an underrun). Lateness per utterance = how much prebuffering would have avoided it.
class TimingSink final : public AudioSink {
 public:
  using AudioSink::write;
  std::size_t write(const float*, std::size_t n) override {
    const auto now = Clock::now();
    if (!started_) {
      started_ = true;
      t0_ = now;
      samples_ = 0;
    }
    const double due_ms = samples_ * 1000.0 / kSampleRate;
    const double at_ms = std::chrono::duration<double, std::milli>(now - t0_).count();
    late_ms_ = std::max(late_ms_, at_ms - due_ms);
    if (std::getenv("KOKORO_EVAL_TRACE")) std::fprintf(stderr, "write %zu samples at %.1f ms, due %.1f ms\n", n, at_ms, due_ms);
    samples_ += n;
    return n;
  }
  void end_utterance() override {
    std::lock_guard<std::mutex> lock(m_);
    lateness_.push_back(std::max(0.0, late_ms_));
    started_ = false;
    late_ms_ = 0;
  }
  void flush() override {}
  void drain(double) override {}
  void interrupt() override {}
  SinkStats stats() const override { return {}; }
  std::string describe() const override { return "timing sink"; }
  int input_rate() const override { return kSampleRate; }
  std::vector<double> lateness() const {
    std::lock_guard<std::mutex> lock(m_);
    return lateness_;
  }

 private:
  bool started_ = false;
  Clock::time_point t0_;
  uint64_t samples_ = 0;
  double late_ms_ = 0;
  mutable std::mutex m_;
  std::vector<double> lateness_;
};

// A sink that keeps each utterance's samples (not real time: the slice engine uses its nominal plan, as for WAV).
class CaptureSink final : public AudioSink {
 public:
  using AudioSink::write;
  std::size_t write(const float* p, std::size_t n) override {
    std::lock_guard<std::mutex> lock(m_);
    current_.insert(current_.end(), p, p + n);
    return n;
  }
  void end_utterance() override {
    std::lock_guard<std::mutex> lock(m_);
    done_.push_back(std::move(current_));
    current_.clear();
  }
  void flush() override {}
  void drain(double) override {}
  void interrupt() override {}
  SinkStats stats() const override { return {}; }
  std::string describe() const override { return "capture sink"; }
  int input_rate() const override { return kSampleRate; }
  std::vector<std::vector<float>> take() {
    std::lock_guard<std::mutex> lock(m_);
    return std::move(done_);
  }

 private:
  std::mutex m_;
  std::vector<float> current_;
  std::vector<std::vector<float>> done_;
};

std::vector<std::string> parse_strings(const std::string& s) {
  std::vector<std::string> v;
  std::stringstream ss(s);
  for (std::string t; std::getline(ss, t, ',');) v.push_back(t);
  return v;
}

}  // namespace

int main(int argc, char** argv) {
  kokoro::app::tune_malloc_for_tensors();  // before any allocation worth tuning
  CLI::App app{"kokoro-stream-eval: streaming fidelity (LSD, MCD, chunk-border energy steps) and latency vs exact mode"};
  std::string model, assets, voice_name = "af_heart";
  std::string corpus = std::string(KOKORO_SOURCE_DIR) + "/bench/corpus/stream_eval.txt";
  std::string calibration = std::string(KOKORO_SOURCE_DIR) + "/bench/corpus/stream_calibration.txt";
  std::string priors_path, chunks = "1,2,5,10,20,40", policies = "chunk,cumulative,prior,blend:20,hybrid:20";
  std::string wav_dir, predictor_path;
  int limit = 0, threads = 1;
  bool recalibrate = false, diagnose = false;
  std::string pipeline;
  int profile_words = -1;
  bool overlap_first = false;
  app.add_option("--model", model, "Model file (default: $KOKORO_MODEL or models/kokoro-v1_0.kokoro)");
  app.add_option("--assets", assets, "Assets directory");
  app.add_option("--voice", voice_name, "Voice")->capture_default_str();
  app.add_option("--corpus", corpus, "Sentences to measure, one per line")->capture_default_str();
  app.add_option("--calibration", calibration, "Sentences for the per-voice priors (not the measured ones)")
      ->capture_default_str();
  app.add_option("--priors", priors_path, "Priors cache (default: models/norm-priors-<voice>.kokoro)");
  app.add_option("--pipeline", pipeline,
                 "Instead of the table: time to first audio and RTF of the whole engine (StreamEngine, null sink) "
                 "per sentence, for modes like exact:6,stream:6 (mode:first-segment words)");
  app.add_flag("--overlap-first", overlap_first,
               "--pipeline: let the next segment's acoustic model run while the first segment is vocoded "
               "(StreamOptions::first_segment_first off)");
  app.add_option("--profile-first", profile_words,
                 "Instead of the table: the first-audio path step by step (frontend, acoustic model, decoder), run "
                 "serially per sentence with this many words in the first segment (0: no limit)");
  app.add_flag("--diagnose", diagnose, "Print how far each segment's statistics are from the priors, per layer");
  app.add_flag("--recalibrate", recalibrate, "Recompute the priors even if the cache exists");
  app.add_option("--chunks", chunks, "Chunk sizes in frames (25 ms each), comma-separated")->capture_default_str();
  app.add_option("--policies", policies, "Statistics policies, comma-separated")->capture_default_str();
  app.add_option("--limit", limit, "Use only the first N sentences (0: all)");
  app.add_option("--threads", threads, "Eigen threads")->capture_default_str();
  app.add_option("--predictor", predictor_path,
                 "Statistics predictor for policies predict and predictpool (default: <model dir>/<model "
                 "name>.stats-predictor.kokoro, made by kokoro-stats-fit)");
  app.add_option("--wav-dir", wav_dir, "Also write the exact and streamed audio here (raw float32, 24 kHz)");
  CLI11_PARSE(app, argc, argv);

  try {
    Eigen::setNbThreads(threads);
    const std::string assets_dir = find_assets_dir(assets);
    if (priors_path.empty()) priors_path = norm_priors_path(voice_name);
    auto synth = std::make_shared<const Synthesizer>(ModelFile::open(default_model_path(model)));
    FrontendOptions fo;
    fo.assets_dir = assets_dir;
    const Frontend fe(fo);
    const Vocab vocab = Vocab::from_config(synth->model().config(), synth->model().path());
    const VoicePack voice = VoicePack::resolve(voice_name, assets_dir);

    std::shared_ptr<const StatsPredictor> predictor;
    auto get_predictor = [&]() {
      if (!predictor) {
        std::string path = predictor_path;
        if (path.empty()) {
          const std::filesystem::path mp(synth->model().path());
          path = (mp.parent_path() / (mp.stem().string() + ".stats-predictor.kokoro")).string();
        }
        predictor = std::make_shared<const StatsPredictor>(StatsPredictor::load(path, &synth->model()));
        std::fprintf(stderr, "statistics predictor: %s\n", path.c_str());
      }
      return predictor;
    };
    std::shared_ptr<NormPriors> priors;
    if (!recalibrate && std::filesystem::exists(priors_path)) {
      priors = std::make_shared<NormPriors>(NormPriors::load(priors_path));
      std::fprintf(stderr, "priors: %s (%lld segments, %lld frames)\n", priors_path.c_str(),
                   static_cast<long long>(priors->segments), static_cast<long long>(priors->frames));
    } else {
      const auto t0 = Clock::now();
      const std::vector<Case> cal = prepare(read_lines(calibration), fe, vocab, voice, *synth, false);
      priors = std::make_shared<NormPriors>(calibrate(cal, synth->decoder(), voice_name));
      priors->save(priors_path);
      std::fprintf(stderr, "priors: calibrated on %zu segments in %.1f s, saved to %s\n", cal.size(), ms_since(t0) / 1e3,
                   priors_path.c_str());
    }

    std::vector<std::string> lines = read_lines(corpus);
    if (limit > 0 && static_cast<size_t>(limit) < lines.size()) lines.resize(limit);

    if (profile_words >= 0) {
      // Each step of the first-audio path alone, one after the other, on a quiet engine: what TTFA is made of.
      FrontendOptions pfo = fo;
      pfo.first_segment_max_words = static_cast<size_t>(profile_words);
      const Frontend pfe(pfo);
      const Schedule s = parse_schedule(parse_strings(chunks).front());
      std::vector<double> fe_ms, ac_ms, fwd_ms, feat_ms, chunk_ms, seg_s;
      StreamDecoder sd(synth->decoder());
      std::unique_ptr<NormPolicy> norm = make_norm_policy("prior", priors);
      for (const std::string& line : lines) {
        auto t0 = Clock::now();
        const std::vector<Segment> segs = pfe.segment(line);
        fe_ms.push_back(ms_since(t0));
        if (segs.empty()) continue;
        std::vector<int64_t> ids = tokenize(segs.front().phonemes, vocab);
        ids.insert(ids.begin(), 0);
        ids.push_back(0);
        const float* style = voice.style_for(static_cast<int>(utf8::count_code_points(segs.front().phonemes)));
        AlignedFeatures feats;
        t0 = Clock::now();
        synth->acoustic().forward(ids, style, 1.0f, feats);
        ac_ms.push_back(ms_since(t0));
        const int64_t F = feats.frames();
        seg_s.push_back(F * 0.025);
        SeededNoise noise(0);
        Tensor audio, x, cols;
        t0 = Clock::now();
        synth->decoder().forward(feats.asr, feats.f0, feats.n, style, noise, audio);
        fwd_ms.push_back(ms_since(t0));
        t0 = Clock::now();
        synth->decoder().features(feats.asr, feats.f0, feats.n, style, x);
        feat_ms.push_back(ms_since(t0));
        t0 = Clock::now();
        sd.begin(style, noise, *norm, F, StreamDecoder::Input::decoder_features);
        const int64_t m = std::min(s.first, F);
        copy_columns(x, 0, 2 * m, cols);
        const int64_t f0_to = std::min<int64_t>(2 * (m + kSourceLeadFrames), 2 * F);
        sd.push_features(cols, feats.f0.data(), f0_to, m == F, audio);
        chunk_ms.push_back(ms_since(t0));
      }
      auto row = [](const char* step, const std::vector<double>& v) {
        std::printf("| %s | %.1f | %.1f | %.1f |\n", step, percentile(v, 50), percentile(v, 95), percentile(v, 100));
      };
      std::printf("first segment: %d words at most, audio p50 %.2f s; kernel threads %d\n\n", profile_words,
                  percentile(seg_s, 50), num_threads());
      std::printf("| step of the first-audio path | p50 ms | p95 ms | max ms |\n| --- | --- | --- | --- |\n");
      row("frontend: segment() of the sentence", fe_ms);
      row("acoustic model, first segment", ac_ms);
      row("exact: Decoder::forward, first segment", fwd_ms);
      row("stream: Decoder::features, first segment", feat_ms);
      row(("stream: first chunk (" + std::to_string(s.first) + " frames) incl. look-ahead").c_str(), chunk_ms);
      return 0;
    }
    if (!pipeline.empty()) {
      // The engine as kokoro-say runs it: say() each sentence, wait until it has been handed to the sink.
      std::printf("later segments' acoustic model: %s\n\n",
                  overlap_first ? "overlapping the first segment's vocoder (--overlap-first)"
                                : "after the first segment is vocoded (first_segment_first, the default)");
      std::printf("| mode | first-segment words | chunks | policy | TTFA p50 / p95 / max ms | of which acoustic model "
                  "p50 / p95 ms | RTF | utterances that would underrun | prebuffer needed p50 / p95 / max ms |\n"
                  "| --- | --- | --- | --- | --- | --- | --- | --- | --- |\n");
      for (const std::string& spec : parse_strings(pipeline)) {
        const auto colon = spec.find(':');
        const SynthesisMode mode = parse_synthesis_mode(spec.substr(0, colon));
        FrontendOptions pfo = fo;
        pfo.first_segment_max_words = colon == std::string::npos ? 0 : std::stoul(spec.substr(colon + 1));
        auto pfe = std::make_shared<const Frontend>(pfo);
        TimingSink sink;
        StreamOptions so = recommended_slice_options(synth->model());  // slice mode: the predictor's statistics
        const std::vector<std::string> sched = parse_strings(chunks);
        const Schedule s = parse_schedule(sched.front());
        so.first_chunk_frames = static_cast<int>(s.first);
        so.max_chunk_frames = static_cast<int>(s.max);
        so.first_segment_first = !overlap_first;
        StreamEngine eng(synth, pfe, voice, sink, EngineVoice{}, mode, so);
        std::vector<double> ttfa;
        double synth_s = 0, audio_s2 = 0;
        std::mutex m;
        eng.on_report([&](const UtteranceReport& r) {
          std::lock_guard<std::mutex> lock(m);
          if (!r.error.empty()) std::fprintf(stderr, "error: %s\n", r.error.c_str());
          ttfa.push_back(r.first_audio_ms);
          synth_s += r.synth_seconds;
          audio_s2 += r.audio_seconds;
        });
        std::vector<double> acoustic_first;
        for (const std::string& line : lines) {
          eng.say(line);
          if (!eng.wait_idle(600)) throw Error("pipeline run timed out");
          // The first segment's acoustic model alone, timed again outside the engine (the TTFA's first part).
          for (const Segment& seg : pfe->segment(line)) {
            std::vector<int64_t> ids = tokenize(seg.phonemes, vocab);
            if (ids.empty()) continue;
            ids.insert(ids.begin(), 0);
            ids.push_back(0);
            AlignedFeatures feats;
            const auto t0 = Clock::now();
            synth->acoustic().forward(ids, voice.style_for(static_cast<int>(utf8::count_code_points(seg.phonemes))), 1.0f,
                                      feats);
            acoustic_first.push_back(ms_since(t0));
            break;
          }
        }
        const std::vector<double> late = sink.lateness();
        const size_t n_late = std::count_if(late.begin(), late.end(), [](double l) { return l > 0; });
        std::printf("| %s | %zu | %s | %s | %.1f / %.1f / %.1f | %.1f / %.1f | %.3f | %zu of %zu | %.1f / %.1f / %.1f |\n",
                    to_string(mode), pfo.first_segment_max_words,
                    mode == SynthesisMode::slice ? s.name.c_str() : "whole segments",
                    mode == SynthesisMode::slice ? "predict" : "exact", percentile(ttfa, 50),
                    percentile(ttfa, 95), percentile(ttfa, 100), percentile(acoustic_first, 50),
                    percentile(acoustic_first, 95), synth_s / audio_s2, n_late, late.size(),
                    percentile(late, 50), percentile(late, 95), percentile(late, 100));
        std::fflush(stdout);
      }
      return 0;
    }
    const std::vector<Case> cases = prepare(lines, fe, vocab, voice, *synth, true);
    double audio_s = 0, exact_ms = 0, shortest = 1e9, longest = 0;
    std::vector<double> exact_first, acoustic;
    for (const Case& c : cases) {
      shortest = std::min(shortest, c.exact.size() / double(kSampleRate));
      longest = std::max(longest, c.exact.size() / double(kSampleRate));
      audio_s += c.exact.size() / double(kSampleRate);
      exact_ms += c.exact_ms;
      exact_first.push_back(c.acoustic_ms + c.exact_ms);
      acoustic.push_back(c.acoustic_ms);
    }
    std::printf("corpus: %zu segments, %.1f s of audio (%.2f .. %.2f s); exact vocoder RTF %.3f; acoustic model "
                "p50 %.1f ms, p95 %.1f ms per segment\n",
                cases.size(), audio_s, shortest, longest, exact_ms / 1e3 / audio_s,
                percentile(acoustic, 50), percentile(acoustic, 95));

    if (diagnose && !cases.empty()) {
      // Look-ahead of the live graph: push one frame at a time; after k frames, 600 k - emitted samples.
      const Case& c = *std::max_element(cases.begin(), cases.end(), [](const Case& a, const Case& b) { return a.frames() < b.frames(); });
      auto lag = [&](int mode) {  // 0: aligned frames, 1: features, 2: features with the F0 curve ahead
        StreamDecoder sd(synth->decoder());
        ChunkStats norm;
        SeededNoise noise(0);
        const int64_t F = c.frames(), k = std::min<int64_t>(F - 1, 40);
        Tensor in, audio, x;
        int64_t emitted = 0, f0_sent = 0;
        if (mode == 0) {
          sd.begin(c.style.data(), noise, norm, F);
        } else {
          synth->decoder().features(c.feats.asr, c.feats.f0, c.feats.n, c.style.data(), x);
          sd.begin(c.style.data(), noise, norm, F, StreamDecoder::Input::decoder_features);
        }
        for (int64_t f = 0; f < k; ++f) {
          if (mode == 0) {
            copy_columns(c.feats.asr, f, 1, in);
            sd.push(in, c.feats.f0.data() + 2 * f, c.feats.n.data() + 2 * f, false, audio);
          } else {
            copy_columns(x, 2 * f, 2, in);
            const int64_t to = std::min<int64_t>(2 * (f + 1 + (mode == 2 ? kSourceLeadFrames : 0)), 2 * F);
            sd.push_features(in, c.feats.f0.data() + f0_sent, to - f0_sent, false, audio);
            f0_sent = to;
          }
          emitted += audio.numel();
        }
        return 600 * k - emitted;
      };
      std::printf("look-ahead (samples): aligned frames %lld; decoder features %lld; features with the F0 curve %lld "
                  "frames ahead %lld\n",
                  static_cast<long long>(lag(0)), static_cast<long long>(lag(1)),
                  static_cast<long long>(kSourceLeadFrames), static_cast<long long>(lag(2)));
    }
    if (diagnose) {
      // Per layer: mean over channels of |mean - prior mean| / prior std, and of |ln(var / prior var)|.
      std::map<std::string, std::vector<std::pair<double, double>>> rows;
      std::vector<std::string> order;
      for (const Case& c : cases) {
        SeededNoise noise(0);
        Tensor audio;
        InstanceStatsCapture capture;
        synth->decoder().forward(c.feats.asr, c.feats.f0, c.feats.n, c.style.data(), noise, audio);
        for (const auto& [name, s] : capture.stats()) {
          const MomentStats m = to_moments(s), &p = priors->layers.at(name);
          double dm = 0, dv = 0;
          for (size_t ch = 0; ch < m.mean.size(); ++ch) {
            dm += std::fabs(m.mean[ch] - p.mean[ch]) / std::sqrt(p.var[ch] + 1e-5);
            dv += std::fabs(std::log((m.var[ch] + 1e-5) / (p.var[ch] + 1e-5)));
          }
          rows[name].push_back({dm / m.mean.size(), dv / m.mean.size()});
        }
      }
      std::printf("layer: per segment  mean shift (prior std units) / |ln var ratio|\n");
      for (const auto& [name, v] : rows) {
        std::printf("%-48s", name.c_str());
        for (const auto& [dm, dv] : v) std::printf(" %5.2f/%4.2f", dm, dv);
        std::printf("\n");
      }
    }

    // Energy steps of the exact audio at random positions: the natural level of the metric.
    std::mt19937 rng(12345);
    std::vector<double> random_steps;
    for (const Case& c : cases) {
      std::uniform_int_distribution<int64_t> pos(200, static_cast<int64_t>(c.exact.size()) - 200);
      std::vector<int64_t> p;
      for (int i = 0; i < 50; ++i) p.push_back(pos(rng));
      for (double s : energy_steps_db(c.exact, p)) random_steps.push_back(s);
    }
    std::printf("exact mode: first audio (acoustic model + whole-segment vocoder) p50 %.1f ms, p95 %.1f ms; energy step at "
                "random positions p50 %.2f dB, p95 %.2f dB, mean %.2f dB\n\n",
                percentile(exact_first, 50), percentile(exact_first, 95), percentile(random_steps, 50),
                percentile(random_steps, 95), mean(random_steps));

    std::printf("| policy | chunk frames | LSD dB | MCD dB | border step p50 / p95 dB | exact, same positions p50 / p95 dB | "
                "first audio p50 / p95 ms | RTF |\n");
    std::printf("| --- | --- | --- | --- | --- | --- | --- | --- |\n");
    StreamDecoder sd(synth->decoder());
    for (const std::string& spec : parse_strings(policies)) {
      const Policy policy = make_policy(spec, priors, get_predictor, synth->decoder());
      for (const std::string& chunk_spec : parse_strings(chunks)) {
        const Schedule chunk = parse_schedule(chunk_spec);
        std::vector<double> lsd, mcd, steps, exact_steps, first_ms;
        double total_ms = 0;
        for (size_t i = 0; i < cases.size(); ++i) {
          const Case& c = cases[i];
          const RunResult r = run_stream(synth->decoder(), sd, c, policy, chunk);
          if (r.audio.size() != c.exact.size()) throw Error("streamed audio has a different length (internal)");
          lsd.push_back(log_spectral_distance_db(r.audio, c.exact));
          mcd.push_back(mel_cepstral_distortion_db(r.audio, c.exact));
          for (double s : energy_steps_db(r.audio, r.borders)) steps.push_back(s);
          for (double s : energy_steps_db(c.exact, r.borders)) exact_steps.push_back(s);
          first_ms.push_back(c.acoustic_ms + r.first_audio_ms);  // the segment's acoustic model, then the vocoder
          total_ms += r.total_ms;
          if (!wav_dir.empty()) {
            const std::string stem = wav_dir + "/" + std::to_string(i) + "_";
            write_raw(stem + "exact.f32", c.exact);
            std::string tag = policy.name + "_" + chunk.name;
            for (char& ch : tag)
              if (ch == ':') ch = '-';
            write_raw(stem + tag + ".f32", r.audio);
          }
        }
        std::printf("| %s | %s | %.3f | %.3f | %.2f / %.2f | %.2f / %.2f | %.1f / %.1f | %.3f |\n",
                    policy.name.c_str(), chunk.name.c_str(), mean(lsd),
                    mean(mcd), percentile(steps, 50), percentile(steps, 95), percentile(exact_steps, 50),
                    percentile(exact_steps, 95), percentile(first_ms, 50), percentile(first_ms, 95),
                    total_ms / 1e3 / audio_s);
        std::fflush(stdout);
      }
    }
  } catch (const std::exception& e) {
    std::fprintf(stderr, "kokoro-stream-eval: %s\n", e.what());
    return 1;
  }
  return 0;
}
