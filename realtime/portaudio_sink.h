// PortAudio stream sink in callback mode: default or named output device, requested latency, mono float32
// at the device's rate (or options.device_rate). PortAudio is initialised per sink (it counts references).
#pragma once
#include <portaudio.h>

#include <atomic>
#include <memory>
#include <string>
#include <vector>

#include "realtime/audio_sink.h"
#include "realtime/playback_queue.h"

namespace kokoro {

class PortAudioSink final : public AudioSink {
 public:
  // Opens the stream; it does not run until start(). Throws kokoro::Error naming the device.
  explicit PortAudioSink(const SinkOptions& options);
  ~PortAudioSink() override;

  void start();
  // Stops the stream after the device has played what it already holds.
  void stop();

  using AudioSink::write;
  std::size_t write(const float* samples, std::size_t n) override { return queue_->write(samples, n); }
  void end_utterance() override { queue_->end_utterance(); }
  void mark_pause() override { queue_->mark_pause(); }
  void flush() override { queue_->flush(); }
  void drain(double timeout_seconds) override;
  void interrupt() override { queue_->interrupt(); }
  SinkStats stats() const override { return queue_->stats(); }
  std::string describe() const override;
  bool plays_in_real_time() const override { return true; }
  int input_rate() const override { return input_rate_; }

  // The output devices PortAudio offers (same as list_output_devices()).
  static std::vector<AudioDeviceInfo> list_devices() { return list_output_devices(); }

  const std::string& device_name() const { return device_name_; }
  double output_latency() const;  // seconds, as reported by the open stream

  // The stream callback, public so that the RT-safety test can call it directly on a stopped stream.
  static int stream_callback(const void* input, void* output, unsigned long frames,
                             const PaStreamCallbackTimeInfo* time, PaStreamCallbackFlags flags, void* self) noexcept;

 private:
  static void finished_callback(void* self) noexcept;
  void close() noexcept;

  SinkOptions options_;
  int input_rate_;
  std::string device_name_;
  std::string host_api_;
  bool initialized_ = false;
  PaStream* stream_ = nullptr;
  std::unique_ptr<PlaybackQueue> queue_;
  bool running_ = false;
  std::atomic<bool> stopping_{false};  // read by PortAudio's thread in finished_callback
};

}  // namespace kokoro
