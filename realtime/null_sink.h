// Null sink for benchmarks: takes samples as fast as they come and counts them. Never blocks.
#pragma once
#include <atomic>

#include "realtime/audio_sink.h"

namespace kokoro {

class NullSink final : public AudioSink {
 public:
  explicit NullSink(const SinkOptions& options) : rate_(options.input_rate) {}

  using AudioSink::write;
  std::size_t write(const float*, std::size_t n) override {
    frames_.fetch_add(n, std::memory_order_relaxed);
    return n;
  }
  void end_utterance() override { utterances_.fetch_add(1, std::memory_order_relaxed); }
  void flush() override {}
  void drain(double) override {}
  void interrupt() override {}
  SinkStats stats() const override {
    SinkStats s;
    s.frames_written = s.frames_played = frames_.load(std::memory_order_relaxed);
    s.output_rate = rate_;
    return s;
  }
  std::string describe() const override { return "null sink (discards audio), " + std::to_string(rate_) + " Hz"; }
  int input_rate() const override { return rate_; }
  uint64_t utterances() const { return utterances_.load(std::memory_order_relaxed); }

 private:
  int rate_;
  std::atomic<uint64_t> frames_{0};
  std::atomic<uint64_t> utterances_{0};
};

}  // namespace kokoro
