// JACK client sink: registers out_1 (and out_2, a copy, when stereo), follows the server's sample rate and
// period, counts xruns, and turns a server shutdown into a kokoro::Error on the producer side. A server is
// never started implicitly (JackNoStartServer).
#pragma once
#include <jack/types.h>

#include <memory>
#include <string>

#include "realtime/audio_sink.h"
#include "realtime/playback_queue.h"

namespace kokoro {

// libjack prints its own failures to stderr (e.g. "Cannot connect to server socket"); the sinks report them
// as kokoro::Error instead, so libjack's messages go to spdlog at debug level. Process-wide and idempotent.
void route_libjack_messages_to_spdlog();

class JackSink final : public AudioSink {
 public:
  // Opens the client and registers its ports; the client is not active until start().
  explicit JackSink(const SinkOptions& options);
  ~JackSink() override;

  // Activates the client and, if options.autoconnect, connects to system:playback_*.
  void start();

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

  // The name the server gave the client (differs from the requested one if that was taken).
  const std::string& client_name() const { return client_name_; }
  std::string port_name(int channel) const;  // "kokoro:out_1" for channel 1

  // The process callback, public so that the RT-safety test can call it directly on an inactive client.
  static int process_callback(jack_nframes_t nframes, void* self) noexcept;

 private:
  static int sample_rate_callback(jack_nframes_t rate, void* self) noexcept;
  static int buffer_size_callback(jack_nframes_t frames, void* self) noexcept;
  static int xrun_callback(void* self) noexcept;
  static void shutdown_callback(jack_status_t code, const char* reason, void* self) noexcept;
  void close() noexcept;

  SinkOptions options_;
  int input_rate_;
  std::string client_name_;
  std::string server_label_;
  jack_client_t* client_ = nullptr;
  jack_port_t* out1_ = nullptr;
  jack_port_t* out2_ = nullptr;
  std::unique_ptr<PlaybackQueue> queue_;
  bool active_ = false;
};

}  // namespace kokoro
