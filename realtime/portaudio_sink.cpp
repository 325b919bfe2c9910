#include "realtime/portaudio_sink.h"

#include <alsa/asoundlib.h>
#include <jack/jack.h>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <chrono>
#include <cstdarg>
#include <cstdlib>
#include <thread>

#include "core/error.h"
#include "realtime/jack_sink.h"

namespace kokoro {
namespace {

void quiet_alsa(const char*, int, const char*, int, const char*, ...) {}
void quiet_jack(const char*) {}

// Pa_Initialize probes every ALSA PCM and tries to reach a JACK server, and both libraries print their
// failures to stderr. Silence them during the probe only; real errors come back as PaError codes.
class PortAudioInit {
 public:
  PortAudioInit() {
    snd_lib_error_set_handler(&quiet_alsa);
    jack_set_error_function(&quiet_jack);
    jack_set_info_function(&quiet_jack);
    err_ = Pa_Initialize();
    snd_lib_error_set_handler(nullptr);  // back to ALSA's default handler
    route_libjack_messages_to_spdlog();  // libjack cannot restore its default printer
  }
  ~PortAudioInit() {
    if (err_ == paNoError) Pa_Terminate();
  }
  PaError error() const { return err_; }
  void release() { err_ = paNotInitialized; }  // ownership of the reference moves to the sink

 private:
  PaError err_;
};

std::string pa_text(PaError err) { return Pa_GetErrorText(err); }

AudioDeviceInfo info_of(PaDeviceIndex i) {
  const PaDeviceInfo* d = Pa_GetDeviceInfo(i);
  AudioDeviceInfo info;
  info.index = i;
  info.name = d->name ? d->name : "";
  const PaHostApiInfo* api = Pa_GetHostApiInfo(d->hostApi);
  info.host_api = api && api->name ? api->name : "";
  info.max_output_channels = d->maxOutputChannels;
  info.default_rate = d->defaultSampleRate;
  info.default_low_latency = d->defaultLowOutputLatency;
  info.is_default = i == Pa_GetDefaultOutputDevice();
  return info;
}

std::vector<AudioDeviceInfo> outputs() {
  std::vector<AudioDeviceInfo> list;
  const PaDeviceIndex n = Pa_GetDeviceCount();
  for (PaDeviceIndex i = 0; i < n; ++i)
    if (Pa_GetDeviceInfo(i)->maxOutputChannels > 0) list.push_back(info_of(i));
  return list;
}

std::string names_of(const std::vector<AudioDeviceInfo>& list) {
  std::string s;
  for (const auto& d : list) s += (s.empty() ? "" : ", ") + ("'" + d.name + "'");
  return s.empty() ? "(none)" : s;
}

// Exact name, then a unique substring, then an index.
PaDeviceIndex find_device(const std::string& wanted) {
  const auto list = outputs();
  if (wanted.empty()) {
    const PaDeviceIndex def = Pa_GetDefaultOutputDevice();
    if (def == paNoDevice) throw Error("PortAudio: there is no default output device; outputs: " + names_of(list));
    return def;
  }
  for (const auto& d : list)
    if (d.name == wanted) return d.index;
  std::vector<AudioDeviceInfo> partial;
  for (const auto& d : list)
    if (d.name.find(wanted) != std::string::npos) partial.push_back(d);
  if (partial.size() == 1) return partial[0].index;
  if (partial.size() > 1)
    throw Error("PortAudio: output device '" + wanted + "' is ambiguous: " + names_of(partial));
  char* end = nullptr;
  const long index = std::strtol(wanted.c_str(), &end, 10);
  if (*end == '\0')
    for (const auto& d : list)
      if (d.index == index) return d.index;
  throw Error("PortAudio: no output device '" + wanted + "'; outputs: " + names_of(list));
}

}  // namespace

std::vector<AudioDeviceInfo> list_output_devices() {
  PortAudioInit init;
  if (init.error() != paNoError) throw Error("PortAudio: cannot initialise: " + pa_text(init.error()));
  return outputs();
}

PortAudioSink::PortAudioSink(const SinkOptions& options) : options_(options), input_rate_(options.input_rate) {
  PortAudioInit init;
  if (init.error() != paNoError) throw Error("PortAudio: cannot initialise: " + pa_text(init.error()));
  const PaDeviceIndex device = find_device(options.device);
  const AudioDeviceInfo info = info_of(device);
  device_name_ = info.name;
  host_api_ = info.host_api;

  const double rate = options.device_rate > 0 ? options.device_rate : info.default_rate;
  PaStreamParameters out{};
  out.device = device;
  out.channelCount = 1;
  out.sampleFormat = paFloat32;
  out.suggestedLatency = options.latency_seconds > 0 ? options.latency_seconds : info.default_low_latency;
  const std::string where = "PortAudio device '" + device_name_ + "' (" + host_api_ + ")";
  PaError err = Pa_IsFormatSupported(nullptr, &out, rate);
  if (err != paFormatIsSupported)
    throw Error(where + " cannot play mono float32 at " + std::to_string(static_cast<int>(rate)) + " Hz: " + pa_text(err));

  queue_ = std::make_unique<PlaybackQueue>(where, input_rate_, static_cast<int>(rate), options);
  const unsigned long period = options.period_frames > 0 ? options.period_frames : paFramesPerBufferUnspecified;
  err = Pa_OpenStream(&stream_, nullptr, &out, rate, period, paClipOff | paDitherOff, &PortAudioSink::stream_callback, this);
  if (err != paNoError) throw Error(where + ": cannot open a stream: " + pa_text(err));
  init.release();
  initialized_ = true;
  Pa_SetStreamFinishedCallback(stream_, &PortAudioSink::finished_callback);
}

PortAudioSink::~PortAudioSink() { close(); }

void PortAudioSink::close() noexcept {
  if (stream_) {
    stopping_ = true;
    if (running_) Pa_AbortStream(stream_);
    Pa_CloseStream(stream_);
    stream_ = nullptr;
  }
  if (initialized_) Pa_Terminate();
  initialized_ = false;
  running_ = false;
}

void PortAudioSink::start() {
  if (running_) return;
  stopping_ = false;
  const PaError err = Pa_StartStream(stream_);
  if (err != paNoError) throw Error(queue_->name() + ": cannot start the stream: " + pa_text(err));
  running_ = true;
}

void PortAudioSink::stop() {
  if (!running_) return;
  stopping_ = true;
  Pa_StopStream(stream_);
  running_ = false;
}

void PortAudioSink::drain(double timeout_seconds) {
  queue_->drain(timeout_seconds);
  // Everything is in PortAudio's hands; wait out the stream's output latency and one period so that
  // stopping or closing right after drain() does not cut the end off.
  const SinkStats s = queue_->stats();
  double wait = running_ ? output_latency() : 0.0;
  if (running_ && s.output_rate > 0) wait += double(s.period_frames) / s.output_rate;
  std::this_thread::sleep_for(std::chrono::duration<double>(std::min(wait, 1.0)));
}

double PortAudioSink::output_latency() const {
  const PaStreamInfo* info = stream_ ? Pa_GetStreamInfo(stream_) : nullptr;
  return info ? info->outputLatency : 0.0;
}

std::string PortAudioSink::describe() const {
  const SinkStats s = queue_->stats();
  return queue_->name() + ", " + std::to_string(s.output_rate) + " Hz, output latency " +
         std::to_string(static_cast<int>(output_latency() * 1000 + 0.5)) + " ms, resampling from " +
         std::to_string(input_rate_) + " Hz (" + to_string(options_.quality) + ")";
}

int PortAudioSink::stream_callback(const void*, void* output, unsigned long frames, const PaStreamCallbackTimeInfo*,
                                   PaStreamCallbackFlags flags, void* arg) noexcept {
  auto* self = static_cast<PortAudioSink*>(arg);
  PlaybackQueue::CallbackScope scope(*self->queue_, frames);
  if (flags & paOutputUnderflow) self->queue_->count_xrun();
  self->queue_->render(static_cast<float*>(output), frames);
  return paContinue;
}

void PortAudioSink::finished_callback(void* arg) noexcept {
  // Called when the stream stops. Unless we stopped it, the device went away under us.
  auto* self = static_cast<PortAudioSink*>(arg);
  if (!self->stopping_) self->queue_->fail("PortAudio stream stopped unexpectedly (device lost?)");
}

}  // namespace kokoro
