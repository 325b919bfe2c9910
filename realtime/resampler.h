// Streaming sample-rate conversion with libsamplerate, used on the producer (non-real-time) side of the
// device sinks. Output is appended to a caller-owned vector, which stops allocating once it has grown to
// its largest size. Equal rates pass samples through untouched (no filter, no delay).
#pragma once
#include <cstddef>
#include <vector>

#include "realtime/audio_sink.h"

typedef struct SRC_STATE_tag SRC_STATE;

namespace kokoro {

class StreamResampler {
 public:
  // Throws kokoro::Error for non-positive rates or a ratio libsamplerate rejects (outside 1/256..256).
  StreamResampler(double input_rate, double output_rate, ResampleQuality quality);
  ~StreamResampler();
  StreamResampler(const StreamResampler&) = delete;
  StreamResampler& operator=(const StreamResampler&) = delete;

  // Converts n input samples and appends the output produced so far (the filter holds back a few).
  void process(const float* in, std::size_t n, std::vector<float>& out);
  // Ends the stream: appends the samples still inside the filter, then starts afresh for the next stream.
  void finish(std::vector<float>& out);
  // Drops the stream in progress (barge-in) without producing its tail.
  void reset();
  // Changes the output rate for the samples that follow (JACK sample-rate change).
  void set_output_rate(double output_rate);

  double input_rate() const { return input_rate_; }
  double output_rate() const { return output_rate_; }
  bool passthrough() const { return state_ == nullptr; }

 private:
  void run(const float* in, std::size_t n, bool end_of_input, std::vector<float>& out);
  void rebuild();

  double input_rate_;
  double output_rate_;
  ResampleQuality quality_;
  SRC_STATE* state_ = nullptr;
};

}  // namespace kokoro
