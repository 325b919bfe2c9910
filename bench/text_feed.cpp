#include "bench/text_feed.h"

#include <algorithm>
#include <cmath>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <future>
#include <map>
#include <mutex>
#include <sstream>
#include <thread>

#include <spdlog/spdlog.h>

#include "bench/bench_report.h"
#include "bench/process_stats.h"
#include "bench/simulated_device.h"
#include "core/error.h"
#include "frontend/sentence_feed.h"
#include "frontend/voice_language.h"

namespace kokoro::bench {

namespace {

using Clock = std::chrono::steady_clock;

struct Span {
  size_t begin = 0, end = 0;  // bytes of the corpus text
};

bool is_blank(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v'; }

// The pieces fed: each word with the white space after it (white space before the first word goes with it).
std::vector<Span> words_of(const std::string& text) {
  std::vector<Span> pieces;
  size_t at = 0;
  while (at < text.size()) {
    size_t end = at;
    while (end < text.size() && is_blank(text[end])) ++end;   // leading white space (first piece only)
    while (end < text.size() && !is_blank(text[end])) ++end;  // the word
    while (end < text.size() && is_blank(text[end])) ++end;   // the white space after it
    pieces.push_back({at, end});
    at = end;
  }
  return pieces;
}

// The sentences the engine cuts the text into (frontend/sentence_feed.h), without their white space.
std::vector<Span> sentences_of(const Frontend& frontend, const std::string& text, size_t max_bytes) {
  SentenceFeed feed(frontend, max_bytes);
  feed.append(text);
  std::vector<Span> out;
  auto add = [&](const SentenceFeed::Sentence& s) {
    size_t b = s.offset, e = s.offset + s.text.size();
    while (b < e && is_blank(text[b])) ++b;
    while (e > b && is_blank(text[e - 1])) --e;
    if (e > b) out.push_back({b, e});
  };
  while (auto s = feed.next()) add(*s);
  if (auto s = feed.rest(true)) add(*s);
  return out;
}

// A segment's audio reaching the device (its segment_start event: the audio up to its first sample handed over):
// when (seconds since the feed started), where its text starts in the corpus text, when the device plays its
// first sample, and when it would have played it had the audio before it come without a gap (the end of that
// audio, or the moment the device fell idle): the device's own log (SimulatedDeviceSink::play_time). A gap is
// inserted only where a write starts, so the write holding the segment's first sample tells the gap before it
// (a word's write, later in the segment, would not: the gap is before the segment's first write).
struct WordSeen {
  double t = 0;
  size_t begin = 0;
  uint64_t sample = 0;  // its first sample in the engine's output
  double written = 0, heard = 0, without_gap = 0;
};

// One session onto a simulated device, recording each word's arrival at the device.
class FeedSession {
 public:
  FeedSession(const Model& model, const FeedOptions& o) {
    StreamOptions so = model.stream_options(o.mode);
    if (o.mode == SynthesisMode::slice && o.max_slice_seconds > 0) so.max_chunk_frames = slice_frames(o.max_slice_seconds);
    if (o.mode == SynthesisMode::slice && o.first_slice_seconds > 0) so.first_chunk_frames = slice_frames(o.first_slice_seconds);
    max_bytes_ = so.text_piece_bytes;
    std::string language = language_for_voice(o.voice);
    if (language.empty()) language = "en-us";
    frontend_ = model.frontend(language);
    engine_ = std::make_unique<StreamEngine>(model.synthesizer(), frontend_, *model.voice(o.voice), sink_, EngineVoice{},
                                             o.mode, std::move(so));
    sink_.queue_utterances(true);  // lines said one after the other play one after the other
    engine_->on_event([this](const StreamEvent& e) {
      if (e.kind != StreamEvent::Kind::segment_start) return;
      const double t = std::chrono::duration<double>(Clock::now() - t0_).count();
      const auto sample = static_cast<uint64_t>(std::llround(e.time_s * kEngineSampleRate));
      std::lock_guard<std::mutex> lock(mutex_);
      if (auto it = offsets_.find(e.utterance); it != offsets_.end())
        words_.push_back({t, it->second + e.text_begin, sample});
    });
  }
  StreamEngine& engine() { return *engine_; }
  const Frontend& frontend() const { return *frontend_; }
  size_t max_bytes() const { return max_bytes_; }
  void start() {
    std::lock_guard<std::mutex> lock(mutex_);
    t0_ = Clock::now();
    words_.clear();
    offsets_.clear();
    sink_.keep_play_log(true);
  }
  double now() const { return std::chrono::duration<double>(Clock::now() - t0_).count(); }
  // Queues an utterance whose text starts at `offset` in the corpus text (under the lock, so that its first
  // event finds the offset).
  template <typename Queue>
  void queue(size_t offset, Queue&& q) {
    std::lock_guard<std::mutex> lock(mutex_);
    offsets_[q()] = offset;
  }
  // Waits until everything said is reported and played; the words seen and the device's dry runs.
  std::vector<WordSeen> finish(int* dry) {
    if (!engine_->wait_idle(3600)) throw Error("kokoro-bench --feed-wps: the engine did not finish");
    std::this_thread::sleep_for(std::chrono::duration<double>(sink_.seconds_until_played()));
    *dry = sink_.take().underruns;
    std::lock_guard<std::mutex> lock(mutex_);
    const auto since_start = [&](Clock::time_point tp) { return std::chrono::duration<double>(tp - t0_).count(); };
    for (WordSeen& w : words_) {
      const auto played = sink_.play_time(w.sample);
      if (!played) throw Error("kokoro-bench --feed-wps: a word's audio is not in the device's log");
      w.written = since_start(played->written);
      w.heard = since_start(played->plays);
      w.without_gap = since_start(played->without_gap);
    }
    sink_.keep_play_log(false);
    return words_;
  }
  void warm_up(const std::string& text) {
    engine_->say(text);
    engine_->wait_idle(3600);
    std::this_thread::sleep_for(std::chrono::duration<double>(sink_.seconds_until_played()));
    sink_.take();
  }

 private:
  SimulatedDeviceSink sink_;
  std::shared_ptr<const Frontend> frontend_;
  std::unique_ptr<StreamEngine> engine_;
  size_t max_bytes_ = 0;
  std::mutex mutex_;
  Clock::time_point t0_ = Clock::now();
  std::map<uint64_t, size_t> offsets_;
  std::vector<WordSeen> words_;
};

// Feeds `text` piece by piece on the schedule; `streamed`: into one streamed utterance, else each line said
// when its newline arrives. Returns each piece's arrival time.
std::vector<double> feed(FeedSession& session, const std::string& text, const std::vector<Span>& pieces, double wps,
                         bool streamed) {
  StreamEngine& engine = session.engine();
  std::vector<double> arrival(pieces.size());
  uint64_t stream = 0;
  if (streamed) session.queue(0, [&] { return stream = engine.begin_text(); });
  size_t line_start = 0;
  auto say_line = [&](size_t end) {
    const std::string line = text.substr(line_start, end - line_start);
    if (line.find_first_not_of(" \t\r\n") != std::string::npos) session.queue(line_start, [&] { return engine.say(line); });
  };
  for (size_t i = 0; i < pieces.size(); ++i) {
    std::this_thread::sleep_for(std::chrono::duration<double>(static_cast<double>(i) / wps - session.now()));
    const Span& p = pieces[i];
    if (streamed) {
      engine.append_text(stream, std::string_view(text).substr(p.begin, p.end - p.begin));
    } else {
      for (size_t nl = text.find('\n', p.begin); nl != std::string::npos && nl < p.end; nl = text.find('\n', nl + 1)) {
        say_line(nl);
        line_start = nl + 1;
      }
    }
    arrival[i] = session.now();
  }
  if (streamed) engine.end_text(stream);
  else if (line_start < text.size()) say_line(text.size());
  return arrival;
}

// Per sentence: from the arrival of the piece that holds its last character to its first segment's first sample
// at the device.
std::vector<SentenceDelay> delays(const std::vector<Span>& sentences, const std::vector<Span>& pieces,
                                  const std::vector<double>& arrival, const std::vector<WordSeen>& words) {
  std::vector<SentenceDelay> out;
  for (const Span& s : sentences) {
    const auto piece = std::upper_bound(pieces.begin(), pieces.end(), s.end - 1,
                                        [](size_t byte, const Span& p) { return byte < p.begin; }) - 1;
    const double last_char = arrival[static_cast<size_t>(piece - pieces.begin())];
    SentenceDelay d;
    for (const WordSeen& w : words)
      if (w.begin >= s.begin && w.begin < s.end) {
        d.ready_ms = 1e3 * (w.written - last_char);  // (the event may come before its audio is written)
        d.heard_ms = 1e3 * (w.heard - last_char);
        // The earliest it could be heard: its last character there and the audio before it played (or the
        // device idle). What the listener waits beyond that is the engine's.
        d.wait_ms = 1e3 * std::max(0.0, w.heard - std::max(last_char, w.without_gap));
        if (std::getenv("KOKORO_FEED_DEBUG"))
          std::fprintf(stderr, "sentence at %zu: last char %.3f s, written %.3f, heard %.3f, without gap %.3f, sample %llu\n",
                       s.begin, last_char, w.written, w.heard, w.without_gap, static_cast<unsigned long long>(w.sample));
        break;
      }
    out.push_back(d);
  }
  return out;
}

std::vector<double> field(const std::vector<SentenceDelay>& v, double SentenceDelay::*which) {
  std::vector<double> out;
  for (const SentenceDelay& d : v)
    if (d.ready_ms >= 0) out.push_back(d.*which);
  return out;
}

nlohmann::json summary(const std::vector<SentenceDelay>& v) {
  nlohmann::json j = {{"sentences", field(v, &SentenceDelay::ready_ms).size()}};
  for (const auto& [name, which] : {std::pair{"ready", &SentenceDelay::ready_ms}, std::pair{"heard", &SentenceDelay::heard_ms},
                                    std::pair{"wait", &SentenceDelay::wait_ms}}) {
    const std::vector<double> x = field(v, which);
    j[std::string(name) + "_ms_p50"] = percentile(x, 50);
    j[std::string(name) + "_ms_p95"] = percentile(x, 95);
    j[std::string(name) + "_ms_max"] = percentile(x, 100);
  }
  return j;
}

}  // namespace

FeedResult run_text_feed(const Model& model, const std::vector<std::pair<std::string, std::string>>& corpora,
                         const FeedOptions& o) {
  if (!(o.words_per_second > 0)) throw Error("kokoro-bench: --feed-wps must be > 0");
  FeedResult r;
  r.options = o;
  FeedSession session(model, o);
  session.warm_up("The warm-up sentence is not timed.");
  // KOKORO_FEED_DEBUG: each sentence's times, where the device ran dry, and the engine's debug log (acoustic
  // model and pre-roll decisions) on standard error.
  if (std::getenv("KOKORO_FEED_DEBUG")) spdlog::set_level(spdlog::level::debug);
  r.loadavg_before = loadavg_1m();
  const double cpu0 = cpu_seconds();
  const auto start = Clock::now();
  for (int rep = 0; rep < o.repeat; ++rep)
    for (const auto& [name, text] : corpora) {
      const std::vector<Span> pieces = words_of(text);
      const std::vector<Span> sentences = sentences_of(session.frontend(), text, session.max_bytes());
      FeedRun run;
      run.corpus = name;
      for (const bool streamed : {true, false}) {  // alternately: a busy machine slows both alike
        session.start();
        const std::vector<double> arrival = feed(session, text, pieces, o.words_per_second, streamed);
        int dry = 0;
        const std::vector<WordSeen> words = session.finish(&dry);
        (streamed ? run.streamed : run.lines) = delays(sentences, pieces, arrival, words);
        (streamed ? run.dry_streamed : run.dry_lines) = dry;
      }
      std::fprintf(stderr, "kokoro-bench: %s fed\n", name.c_str());
      r.runs.push_back(std::move(run));
    }
  r.wall_s = std::chrono::duration<double>(Clock::now() - start).count();
  r.cpu_s = cpu_seconds() - cpu0;
  r.loadavg_after = loadavg_1m();
  return r;
}

nlohmann::json to_json(const FeedResult& r) {
  nlohmann::json j;
  j["feed_words_per_second"] = r.options.words_per_second;
  j["mode"] = to_string(r.options.mode);
  j["voice"] = r.options.voice;
  j["threads"] = r.threads;
  std::vector<SentenceDelay> all_streamed, all_lines;
  nlohmann::json per = nlohmann::json::array();
  for (const FeedRun& run : r.runs) {
    per.push_back({{"corpus", run.corpus},
                   {"streamed", summary(run.streamed)},
                   {"lines", summary(run.lines)},
                   {"dry_streamed", run.dry_streamed},
                   {"dry_lines", run.dry_lines}});
    all_streamed.insert(all_streamed.end(), run.streamed.begin(), run.streamed.end());
    all_lines.insert(all_lines.end(), run.lines.begin(), run.lines.end());
  }
  j["corpora"] = per;
  j["streamed"] = summary(all_streamed);
  j["lines"] = summary(all_lines);
  // The yardstick: the delay as a machine of 160 GFLOP/s (2-thread GEMM peak) would see it.
  const double scale = r.peak.gflops_n > 0 ? r.peak.gflops_n / 160.0 : 0.0;
  j["scale_to_160_gflops"] = scale;
  for (const char* which : {"ready", "wait"})
    for (const char* stat : {"p50", "p95", "max"}) {
      const std::string key = std::string(which) + "_ms_" + stat;
      j["streamed_" + key + "_at_160"] = scale * j["streamed"][key].get<double>();
    }
  add_run_context(j, r.wall_s, r.cpu_s, r.loadavg_before, r.loadavg_after, r.peak);
  return j;
}

std::string to_table(const FeedResult& r) {
  const nlohmann::json j = to_json(r);
  std::ostringstream out;
  char line[512];
  std::snprintf(line, sizeof line,
                "kokoro-bench --feed-wps %g: each corpus fed word by word into one session (%s, %s), simulated "
                "real-time device\nms from a sentence's last character to its first audio: wait = beyond the audio "
                "before it (0: no gap), ready = handed to the device, heard = played\n",
                r.options.words_per_second, j["mode"].get<std::string>().c_str(), r.options.voice.c_str());
  out << line;
  out << "                     |   streamed: wait             ready                heard      |  lines: wait"
         "               heard      |\n"
         "corpus     sentences |   p50    p95    max |   p50    p95    max |   p50     p95 |   p50    p95    max |"
         "    p50     p95 | dry s/l\n";
  auto ms = [](const nlohmann::json& s, const char* key) { return s[key].get<double>(); };
  auto row = [&](const std::string& name, const nlohmann::json& s, const nlohmann::json& l, const std::string& dry) {
    std::snprintf(line, sizeof line,
                  "%-10s %9d | %5.0f %6.0f %6.0f | %5.0f %6.0f %6.0f | %5.0f %7.0f | %5.0f %6.0f %6.0f | %6.0f %7.0f | %s\n",
                  name.c_str(), s["sentences"].get<int>(), ms(s, "wait_ms_p50"), ms(s, "wait_ms_p95"),
                  ms(s, "wait_ms_max"), ms(s, "ready_ms_p50"), ms(s, "ready_ms_p95"), ms(s, "ready_ms_max"),
                  ms(s, "heard_ms_p50"), ms(s, "heard_ms_p95"), ms(l, "wait_ms_p50"), ms(l, "wait_ms_p95"),
                  ms(l, "wait_ms_max"), ms(l, "heard_ms_p50"), ms(l, "heard_ms_p95"), dry.c_str());
    out << line;
  };
  for (const auto& c : j["corpora"])
    row(c["corpus"].get<std::string>(), c["streamed"], c["lines"],
        std::to_string(c["dry_streamed"].get<int>()) + "/" + std::to_string(c["dry_lines"].get<int>()));
  row("all", j["streamed"], j["lines"], "");
  if (r.peak.gflops_n > 0) {
    std::snprintf(line, sizeof line,
                  "streamed, scaled to 160 GFLOP/s (x %.2f): wait p95 / max %.0f / %.0f ms, ready p95 / max %.0f / %.0f ms\n",
                  ms(j, "scale_to_160_gflops"), ms(j, "streamed_wait_ms_p95_at_160"), ms(j, "streamed_wait_ms_max_at_160"),
                  ms(j, "streamed_ready_ms_p95_at_160"), ms(j, "streamed_ready_ms_max_at_160"));
    out << line;
  } else {
    out << "streamed: not scaled to 160 GFLOP/s (--no-peak: no GEMM peak measured)\n";
  }
  std::snprintf(line, sizeof line, "CPU %.1f s in %.1f s, load %.1f -> %.1f\n", r.cpu_s, r.wall_s, r.loadavg_before,
                r.loadavg_after);
  out << line;
  if (r.peak.gflops_n > 0) {
    std::snprintf(line, sizeof line, "GEMM peak %.1f GFLOP/s on 1 thread, %.1f on %d\n", r.peak.gflops_1,
                  r.peak.gflops_n, r.peak.threads);
    out << line;
  }
  out << contended_warning(r.peak);
  return out.str();
}

}  // namespace kokoro::bench
