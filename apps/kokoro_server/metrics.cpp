#include "apps/kokoro_server/metrics.h"

#include <cstdio>

namespace kokoro::server {

void Metrics::Histogram::add(const std::array<double, 12>& bounds, double v) {
  size_t i = 0;
  while (i < bounds.size() && v > bounds[i]) ++i;
  ++counts[i];
  sum += v;
  ++count;
}

void Metrics::request(const std::string& protocol, const std::string& endpoint) {
  std::lock_guard<std::mutex> lock(mutex_);
  ++requests_[{protocol, endpoint}];
}
void Metrics::error(const std::string& protocol, int status) {
  std::lock_guard<std::mutex> lock(mutex_);
  ++errors_[{protocol, status}];
}
void Metrics::ttfa(double seconds) {
  std::lock_guard<std::mutex> lock(mutex_);
  ttfa_.add(Histogram::kTtfaBounds, seconds);
}
void Metrics::rtf(double value) {
  std::lock_guard<std::mutex> lock(mutex_);
  rtf_.add(kRtfBounds, value);
}
void Metrics::audio_seconds(double seconds) {
  std::lock_guard<std::mutex> lock(mutex_);
  audio_seconds_ += seconds;
}
void Metrics::underrun() {
  std::lock_guard<std::mutex> lock(mutex_);
  ++underruns_;
}
void Metrics::rejected() {
  std::lock_guard<std::mutex> lock(mutex_);
  ++rejected_;
}

namespace {

std::string number(double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.9g", v);
  return buf;
}

}  // namespace

std::string Metrics::render(int sessions_open, int sessions_leased, int speaking, double demand, double capacity) const {
  std::lock_guard<std::mutex> lock(mutex_);
  std::string out;
  auto line = [&](const std::string& s) { out += s + "\n"; };
  line("# HELP kokoro_requests_total Requests received, by protocol and endpoint (Wyoming: event type).");
  line("# TYPE kokoro_requests_total counter");
  for (const auto& [key, n] : requests_)
    line("kokoro_requests_total{protocol=\"" + key.first + "\",endpoint=\"" + key.second + "\"} " + std::to_string(n));
  line("# HELP kokoro_errors_total Requests answered with an error, by protocol and HTTP status (Wyoming: 400/500/503).");
  line("# TYPE kokoro_errors_total counter");
  for (const auto& [key, n] : errors_)
    line("kokoro_errors_total{protocol=\"" + key.first + "\",status=\"" + std::to_string(key.second) + "\"} " +
         std::to_string(n));
  line("# HELP kokoro_rejected_total Requests refused with 503 because one more real-time stream did not fit.");
  line("# TYPE kokoro_rejected_total counter");
  line("kokoro_rejected_total " + std::to_string(rejected_));
  line("# HELP kokoro_sessions Engine sessions: open (pooled), leased to a request, speaking now.");
  line("# TYPE kokoro_sessions gauge");
  line("kokoro_sessions{state=\"open\"} " + std::to_string(sessions_open));
  line("kokoro_sessions{state=\"leased\"} " + std::to_string(sessions_leased));
  line("kokoro_sessions{state=\"speaking\"} " + std::to_string(speaking));
  line("# HELP kokoro_compute_cores Cores the speaking sessions need (demand) and the model computes on (capacity).");
  line("# TYPE kokoro_compute_cores gauge");
  line("kokoro_compute_cores{kind=\"demand\"} " + number(demand));
  line("kokoro_compute_cores{kind=\"capacity\"} " + number(capacity));
  auto histogram = [&](const char* name, const char* help, const Histogram& h, const std::array<double, 12>& bounds) {
    line(std::string("# HELP ") + name + " " + help);
    line(std::string("# TYPE ") + name + " histogram");
    uint64_t cumulative = 0;
    for (size_t i = 0; i < bounds.size(); ++i) {
      cumulative += h.counts[i];
      line(std::string(name) + "_bucket{le=\"" + number(bounds[i]) + "\"} " + std::to_string(cumulative));
    }
    line(std::string(name) + "_bucket{le=\"+Inf\"} " + std::to_string(h.count));
    line(std::string(name) + "_sum " + number(h.sum));
    line(std::string(name) + "_count " + std::to_string(h.count));
  };
  histogram("kokoro_ttfa_seconds", "Request arrival to first audio bytes sent.", ttfa_, Histogram::kTtfaBounds);
  histogram("kokoro_rtf", "Engine seconds per audio second of each finished utterance.", rtf_, kRtfBounds);
  line("# HELP kokoro_audio_seconds_total Audio sent, in seconds.");
  line("# TYPE kokoro_audio_seconds_total counter");
  line("kokoro_audio_seconds_total " + number(audio_seconds_));
  line("# HELP kokoro_underruns_total Times a stream's audio fell behind real-time playback from its first byte.");
  line("# TYPE kokoro_underruns_total counter");
  line("kokoro_underruns_total " + std::to_string(underruns_));
  return out;
}

}  // namespace kokoro::server
