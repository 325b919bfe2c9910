// What GET /metrics reports, in Prometheus' text format: requests and errors per protocol, sessions, time to
// first audio and real-time factor histograms, underruns. Updated from the I/O thread and read by the
// scrape; a mutex is enough (a few updates per request).
#pragma once

#include <array>
#include <cstdint>
#include <map>
#include <mutex>
#include <string>

namespace kokoro::server {

class Metrics {
 public:
  void request(const std::string& protocol, const std::string& endpoint);
  void error(const std::string& protocol, int status);
  // Seconds from the request's arrival to its first audio bytes handed to the socket.
  void ttfa(double seconds);
  // Engine seconds per audio second of a finished utterance (includes waits on a slow client).
  void rtf(double value);
  void audio_seconds(double seconds);
  // A stream whose audio fell behind real-time playback from its first byte (counted once per gap).
  void underrun();
  void rejected();  // 503: no capacity

  // gauges come from the caller at scrape time
  std::string render(int sessions_open, int sessions_leased, int speaking, double demand, double capacity) const;

 private:
  struct Histogram {
    static constexpr std::array<double, 12> kTtfaBounds{0.05, 0.1, 0.15, 0.2, 0.3, 0.4, 0.5, 0.75, 1, 2, 5, 10};
    std::array<uint64_t, 13> counts{};
    double sum = 0;
    uint64_t count = 0;
    void add(const std::array<double, 12>& bounds, double v);
  };
  static constexpr std::array<double, 12> kRtfBounds{0.05, 0.1, 0.15, 0.2, 0.3, 0.4, 0.5, 0.6, 0.8, 1, 1.5, 2};

  mutable std::mutex mutex_;
  std::map<std::pair<std::string, std::string>, uint64_t> requests_;
  std::map<std::pair<std::string, int>, uint64_t> errors_;
  Histogram ttfa_, rtf_;
  double audio_seconds_ = 0;
  uint64_t underruns_ = 0, rejected_ = 0;
};

}  // namespace kokoro::server
