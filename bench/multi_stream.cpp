#include "bench/multi_stream.h"

#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <future>
#include <mutex>
#include <sstream>
#include <thread>

#include "bench/process_stats.h"
#include "bench/simulated_device.h"
#include "bench/bench_report.h"
#include "core/error.h"
#include "frontend/voice_language.h"

namespace kokoro::bench {

namespace {

using Clock = std::chrono::steady_clock;

// One listener: a session onto its own simulated device, one utterance at a time.
class Listener {
 public:
  Listener(const Model& model, const MultiStreamOptions& o) : paced_(o.paced) {
    StreamOptions so = model.stream_options(o.mode);
    if (o.mode == SynthesisMode::slice && o.max_slice_seconds > 0) so.max_chunk_frames = slice_frames(o.max_slice_seconds);
    if (o.mode == SynthesisMode::slice && o.first_slice_seconds > 0) so.first_chunk_frames = slice_frames(o.first_slice_seconds);
    std::string language = language_for_voice(o.voice);
    if (language.empty()) language = "en-us";
    EngineVoice ev;
    ev.speed = o.speed;
    session_ = std::make_unique<StreamEngine>(model.synthesizer(), model.frontend(language), *model.voice(o.voice), sink_, ev,
                                              o.mode, std::move(so));
    session_->on_report([this](const UtteranceReport& r) {
      std::lock_guard<std::mutex> lock(mutex_);
      if (pending_) {
        pending_->set_value(r);
        pending_.reset();
      }
    });
  }

  UtteranceMeasure say(const std::string& text) {
    std::future<UtteranceReport> done;
    {
      std::lock_guard<std::mutex> lock(mutex_);
      pending_.emplace();
      done = pending_->get_future();
    }
    const auto t0 = Clock::now();
    session_->say(text);
    const UtteranceReport r = done.get();
    if (!r.error.empty()) throw Error("kokoro-bench --streams: " + r.error);
    UtteranceMeasure m;
    m.compute_ms = std::chrono::duration<double, std::milli>(Clock::now() - t0).count();
    m.ttfa_ms = r.first_audio_ms;
    m.audio_s = r.audio_seconds;
    const DryRun dry = sink_.take();
    m.underruns = dry.underruns;
    m.dry_ms = dry.dry_ms;
    // A listener hears one utterance, then the next: the next one is said once this one has played.
    if (paced_) std::this_thread::sleep_for(std::chrono::duration<double>(sink_.seconds_until_played()));
    return m;
  }

 private:
  const bool paced_;
  SimulatedDeviceSink sink_;
  std::unique_ptr<StreamEngine> session_;
  std::mutex mutex_;
  std::optional<std::promise<UtteranceReport>> pending_;
};

std::vector<double> ttfas(const std::vector<UtteranceMeasure>& us) {
  std::vector<double> v;
  for (const auto& u : us) v.push_back(u.ttfa_ms);
  return v;
}

int dry_count(const std::vector<UtteranceMeasure>& us) {
  int n = 0;
  for (const auto& u : us) n += u.underruns > 0;
  return n;
}

}  // namespace

MultiStreamResult run_streams(const Model& model, const std::vector<std::string>& texts, const MultiStreamOptions& o) {
  if (o.streams < 1) throw Error("kokoro-bench: --streams must be at least 1");
  MultiStreamResult r;
  r.mode = to_string(o.mode);
  r.streams = o.streams;
  r.paced = o.paced;
  r.slots = model.scheduler()->slots();
  std::vector<std::unique_ptr<Listener>> listeners;
  for (int i = 0; i < o.streams; ++i) listeners.push_back(std::make_unique<Listener>(model, o));
  listeners.front()->say(texts.front());  // warm-up: first touch of weights and buffers, untimed
  r.runs.resize(o.streams);

  // Started together: every listener waits at the gate until all threads exist.
  std::mutex gate_mutex;
  std::condition_variable gate_cv;
  bool open = false;
  std::vector<std::string> errors(o.streams);
  std::vector<std::thread> threads;
  r.loadavg_before = loadavg_1m();
  const double cpu0 = cpu_seconds();
  Clock::time_point start;
  for (int i = 0; i < o.streams; ++i)
    threads.emplace_back([&, i] {
      {
        std::unique_lock<std::mutex> lock(gate_mutex);
        gate_cv.wait(lock, [&] { return open; });
      }
      try {
        for (int rep = 0; rep < o.repeat; ++rep)
          for (const std::string& t : texts) r.runs[i].utterances.push_back(listeners[i]->say(t));
      } catch (const std::exception& e) {
        errors[i] = e.what();
      }
      r.runs[i].wall_s = std::chrono::duration<double>(Clock::now() - start).count();
    });
  {
    std::lock_guard<std::mutex> lock(gate_mutex);
    start = Clock::now();
    open = true;
  }
  gate_cv.notify_all();
  for (auto& t : threads) t.join();
  r.wall_s = std::chrono::duration<double>(Clock::now() - start).count();
  r.cpu_s = cpu_seconds() - cpu0;
  r.loadavg_after = loadavg_1m();
  r.peak_rss_mb = peak_rss_mb();
  for (const std::string& e : errors)
    if (!e.empty()) throw Error(e);
  return r;
}

nlohmann::json to_json(const MultiStreamResult& r) {
  nlohmann::json j;
  j["mode"] = r.mode;
  j["streams"] = r.streams;
  j["threads"] = r.threads;
  j["compute_slots"] = r.slots;
  j["paced"] = r.paced;
  std::vector<double> all;
  int dry = 0, utterances = 0;
  double audio = 0, compute = 0;
  nlohmann::json per = nlohmann::json::array();
  for (const StreamRun& s : r.runs) {
    const std::vector<double> t = ttfas(s.utterances);
    all.insert(all.end(), t.begin(), t.end());
    dry += dry_count(s.utterances);
    utterances += static_cast<int>(s.utterances.size());
    double a = 0, dry_ms = 0;
    for (const auto& u : s.utterances) {
      a += u.audio_s;
      dry_ms += u.dry_ms;
      compute += u.compute_ms / 1e3;
    }
    audio += a;
    per.push_back({{"ttfa_ms_p50", percentile(t, 50)},
                   {"ttfa_ms_p95", percentile(t, 95)},
                   {"ttfa_ms_max", percentile(t, 100)},
                   {"utterances", s.utterances.size()},
                   {"dry_utterances", dry_count(s.utterances)},
                   {"dry_ms", dry_ms},
                   {"audio_s", a},
                   {"wall_s", s.wall_s}});
  }
  j["per_stream"] = per;
  j["utterances"] = utterances;
  j["ttfa_ms_p50"] = percentile(all, 50);
  j["ttfa_ms_p95"] = percentile(all, 95);
  j["ttfa_ms_max"] = percentile(all, 100);
  j["dry_utterances"] = dry;
  j["audio_s"] = audio;
  j["peak_rss_mb"] = r.peak_rss_mb;
  j["load_ms"] = r.load_ms;
  add_run_context(j, r.wall_s, r.cpu_s, r.loadavg_before, r.loadavg_after, r.peak);
  return j;
}

std::string to_table(const MultiStreamResult& r) {
  const nlohmann::json j = to_json(r);
  std::ostringstream out;
  char line[256];
  std::snprintf(line, sizeof line, "kokoro-bench --streams %d, mode %s, %d threads, %d compute slots\n", r.streams,
                r.mode.c_str(), r.threads, r.slots);
  out << line;
  out << "stream  utterances  TTFA p50 ms  TTFA p95 ms  TTFA max ms  dry utterances  audio s  wall s\n";
  for (size_t i = 0; i < j["per_stream"].size(); ++i) {
    const auto& s = j["per_stream"][i];
    std::snprintf(line, sizeof line, "%6zu  %10d  %11.0f  %11.0f  %11.0f  %14d  %7.1f  %6.1f\n", i, s["utterances"].get<int>(),
                  s["ttfa_ms_p50"].get<double>(), s["ttfa_ms_p95"].get<double>(), s["ttfa_ms_max"].get<double>(),
                  s["dry_utterances"].get<int>(), s["audio_s"].get<double>(), s["wall_s"].get<double>());
    out << line;
  }
  std::snprintf(line, sizeof line,
                "all     %10d  %11.0f  %11.0f  %11.0f  %14d  %7.1f  %6.1f\n"
                "CPU %.1f s, peak RSS %.0f MB, "
                "load %.1f -> %.1f\nGEMM peak %.1f GFLOP/s on 1 thread, %.1f on %d\n",
                j["utterances"].get<int>(), j["ttfa_ms_p50"].get<double>(), j["ttfa_ms_p95"].get<double>(),
                j["ttfa_ms_max"].get<double>(), j["dry_utterances"].get<int>(), j["audio_s"].get<double>(), r.wall_s,
                r.cpu_s, r.peak_rss_mb, r.loadavg_before,
                r.loadavg_after, r.peak.gflops_1, r.peak.gflops_n, r.peak.threads);
  out << line << contended_warning(r.peak);
  return out.str();
}

}  // namespace kokoro::bench
