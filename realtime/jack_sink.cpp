#include "realtime/jack_sink.h"

#include <jack/jack.h>
#include <spdlog/spdlog.h>

#include <chrono>
#include <cstdlib>
#include <cstring>
#include <thread>

#include "core/error.h"

namespace kokoro {
namespace {

std::string status_text(jack_status_t status) {
  std::string s;
  auto add = [&](jack_status_t bit, const char* text) {
    if (status & bit) s += (s.empty() ? "" : ", ") + std::string(text);
  };
  add(JackServerFailed, "cannot connect to the server");
  add(JackServerError, "server communication error");
  add(JackNoSuchClient, "no such client");
  add(JackInitFailure, "client initialisation failed");
  add(JackShmFailure, "cannot access shared memory");
  add(JackVersionError, "client/server protocol versions differ");
  add(JackInvalidOption, "invalid option");
  add(JackNameNotUnique, "client name taken");
  return s.empty() ? "unknown error" : s;
}

void jack_to_spdlog(const char* message) { spdlog::debug("libjack: {}", message); }

}  // namespace

void route_libjack_messages_to_spdlog() {
  jack_set_error_function(&jack_to_spdlog);
  jack_set_info_function(&jack_to_spdlog);
}

JackSink::JackSink(const SinkOptions& options) : options_(options), input_rate_(options.input_rate) {
  if (options.client_name.empty()) throw Error("JACK: the client name must not be empty");
  std::string server = options.server_name;
  if (server.empty()) {
    const char* env = std::getenv("JACK_DEFAULT_SERVER");
    server = env && *env ? env : "default";
  }
  server_label_ = server;
  route_libjack_messages_to_spdlog();

  jack_status_t status{};
  const auto open_options = static_cast<jack_options_t>(JackNoStartServer | JackServerName);
  client_ = jack_client_open(options.client_name.c_str(), open_options, &status, server.c_str());
  if (!client_)
    throw Error("JACK: cannot open client '" + options.client_name + "' on server '" + server + "': " +
                status_text(status) + " (is jackd running?)");
  client_name_ = jack_get_client_name(client_);

  try {
    const auto rate = static_cast<int>(jack_get_sample_rate(client_));
    queue_ = std::make_unique<PlaybackQueue>("JACK client " + client_name_, input_rate_, rate, options);
    queue_->set_period(static_cast<int>(jack_get_buffer_size(client_)));

    out1_ = jack_port_register(client_, "out_1", JACK_DEFAULT_AUDIO_TYPE, JackPortIsOutput | JackPortIsTerminal, 0);
    if (!out1_) throw Error("JACK: cannot register port " + client_name_ + ":out_1");
    if (options.stereo) {
      out2_ = jack_port_register(client_, "out_2", JACK_DEFAULT_AUDIO_TYPE, JackPortIsOutput | JackPortIsTerminal, 0);
      if (!out2_) throw Error("JACK: cannot register port " + client_name_ + ":out_2");
    }
    if (jack_set_process_callback(client_, &JackSink::process_callback, this) ||
        jack_set_sample_rate_callback(client_, &JackSink::sample_rate_callback, this) ||
        jack_set_buffer_size_callback(client_, &JackSink::buffer_size_callback, this) ||
        jack_set_xrun_callback(client_, &JackSink::xrun_callback, this))
      throw Error("JACK: cannot install the callbacks of client " + client_name_);
    jack_on_info_shutdown(client_, &JackSink::shutdown_callback, this);
  } catch (...) {
    close();
    throw;
  }
}

JackSink::~JackSink() { close(); }

void JackSink::close() noexcept {
  if (!client_) return;
  // After a server shutdown the client is a zombie; closing it still frees its resources and returns.
  if (active_ && !queue_->failed()) jack_deactivate(client_);
  jack_client_close(client_);
  client_ = nullptr;
  active_ = false;
}

void JackSink::start() {
  if (active_) return;
  if (queue_->failed()) throw Error(queue_->name() + ": " + queue_->stats().error);
  if (jack_activate(client_)) throw Error("JACK: cannot activate client " + client_name_);
  active_ = true;
  if (!options_.autoconnect) return;
  const char** playback = jack_get_ports(client_, "^system:playback_", JACK_DEFAULT_AUDIO_TYPE, JackPortIsInput);
  if (!playback || !playback[0]) {
    spdlog::warn("JACK client {}: no system:playback_* ports to connect to", client_name_);
  } else {
    // Mono goes to the first two playback ports so it is heard on both speakers; stereo pairs them up.
    const bool has_second = playback[1] != nullptr;
    const std::string first = port_name(1);
    const std::string second = port_name(out2_ ? 2 : 1);
    if (jack_connect(client_, first.c_str(), playback[0]))
      spdlog::warn("JACK client {}: cannot connect {} to {}", client_name_, first, playback[0]);
    if (has_second && jack_connect(client_, second.c_str(), playback[1]))
      spdlog::warn("JACK client {}: cannot connect {} to {}", client_name_, second, playback[1]);
  }
  if (playback) jack_free(playback);
}

void JackSink::drain(double timeout_seconds) {
  queue_->drain(timeout_seconds);
  // The callback has handed everything to JACK; wait out the port's playback latency (plus the period in
  // flight) so that closing the client right after drain() does not cut the end off.
  jack_latency_range_t range{};
  jack_port_get_latency_range(out1_, JackPlaybackLatency, &range);
  const SinkStats s = queue_->stats();
  if (s.output_rate > 0)
    std::this_thread::sleep_for(std::chrono::duration<double>(double(range.max + 2u * s.period_frames) / s.output_rate));
}

std::string JackSink::port_name(int channel) const { return client_name_ + ":out_" + std::to_string(channel); }

std::string JackSink::describe() const {
  const SinkStats s = queue_->stats();
  return "JACK client " + client_name_ + " on server " + server_label_ + ", " + std::to_string(s.output_rate) +
         " Hz, " + std::to_string(s.period_frames) + " frames per period, " + (out2_ ? "stereo" : "mono") +
         ", resampling from " + std::to_string(input_rate_) + " Hz (" + to_string(options_.quality) + ")";
}

int JackSink::process_callback(jack_nframes_t nframes, void* arg) noexcept {
  auto* self = static_cast<JackSink*>(arg);
  PlaybackQueue::CallbackScope scope(*self->queue_, nframes);
  auto* out1 = static_cast<float*>(jack_port_get_buffer(self->out1_, nframes));
  self->queue_->render(out1, nframes);
  if (self->out2_) {
    auto* out2 = static_cast<float*>(jack_port_get_buffer(self->out2_, nframes));
    std::memcpy(out2, out1, nframes * sizeof(float));
  }
  return 0;
}

int JackSink::sample_rate_callback(jack_nframes_t rate, void* arg) noexcept {
  static_cast<JackSink*>(arg)->queue_->set_output_rate(static_cast<int>(rate));
  return 0;
}

int JackSink::buffer_size_callback(jack_nframes_t frames, void* arg) noexcept {
  // The ring holds at least 8192 frames, so any common period fits; nothing to reallocate.
  static_cast<JackSink*>(arg)->queue_->set_period(static_cast<int>(frames));
  return 0;
}

int JackSink::xrun_callback(void* arg) noexcept {
  static_cast<JackSink*>(arg)->queue_->count_xrun();
  return 0;
}

void JackSink::shutdown_callback(jack_status_t, const char* reason, void* arg) noexcept {
  // Runs on a JACK thread: only record the failure; the producer side throws and the monitor logs it.
  char message[240];
  std::snprintf(message, sizeof(message), "JACK server shut down (%s)", reason && *reason ? reason : "no reason given");
  static_cast<JackSink*>(arg)->queue_->fail(message);
}

}  // namespace kokoro
