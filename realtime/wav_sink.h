// WAV file sink (libsndfile): mono at the input rate, float32 (extensible header) or 16-bit PCM. write() writes straight to the
// file on the producer thread; there is no device and no ring, so flush/drain/interrupt have nothing to do.
#pragma once
#include <string>

#include "realtime/audio_sink.h"

typedef struct sf_private_tag SNDFILE;

namespace kokoro {

class WavSink final : public AudioSink {
 public:
  // Creates (truncates) the file. Throws kokoro::Error naming the path.
  explicit WavSink(const SinkOptions& options);
  ~WavSink() override;
  // Finishes the header and closes the file; throws naming the path if that fails. Called by the destructor
  // (which logs instead of throwing) if not called before.
  void close();

  using AudioSink::write;
  std::size_t write(const float* samples, std::size_t n) override;
  void end_utterance() override {}
  void flush() override {}
  void drain(double) override;
  void interrupt() override {}
  SinkStats stats() const override;
  std::string describe() const override;
  int input_rate() const override { return rate_; }

 private:
  std::string path_;
  int rate_;
  WavFormat format_;
  SNDFILE* file_ = nullptr;
  uint64_t frames_ = 0;
};

}  // namespace kokoro
