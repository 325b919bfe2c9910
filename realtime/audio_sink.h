// Audio output behind one small interface. The engine's vocoder worker (the producer) hands mono float
// samples at the engine rate (24 kHz) to a sink; the sink plays them (JACK, PortAudio), writes them (WAV) or
// counts them (null).
//
// Data flow of the device sinks (JACK, PortAudio):
//   producer thread: write() -> libsamplerate 24 kHz -> device rate -> SPSC ring (blocks while full)
//   device callback: ring -> output buffer; silence when the ring is empty; never allocates, locks, logs or
//                    makes syscalls (tests/test_realtime_safety.cpp proves it with trapped malloc/locks).
// Resampling happens on the producer side so that the callback is a bounded memcpy.
//
// Threads: write(), end_utterance(), flush() and drain() belong to ONE producer thread. interrupt(),
// stats() and describe() may be called from any thread.
//
// Barge-in: (1) any thread calls interrupt(), which makes a write() blocked on a full buffer return early;
// (2) the producer stops producing the old audio and calls flush(); the device fades out over a few ms and
// plays silence from its next period on; audio written after flush() plays normally.
//
// Underruns: when the device runs out of audio before the producer said end_utterance(), the callback plays
// silence, counts one underrun and resumes as soon as audio arrives. Running out right after
// end_utterance() is the normal end of speech, not an underrun; so is running out right after mark_pause()
// (text that streams in: the engine waits for the next sentence's text, which is no fault of the output).
#pragma once
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace kokoro {

inline constexpr int kEngineSampleRate = 24000;

enum class SinkKind { jack, portaudio, wav, null };
// libsamplerate converters: best = SRC_SINC_BEST_QUALITY, medium = SRC_SINC_MEDIUM_QUALITY,
// fastest = SRC_SINC_FASTEST, linear = SRC_LINEAR (cheap, audible aliasing).
enum class ResampleQuality { best, medium, fastest, linear };
enum class WavFormat { float32, pcm16 };

struct SinkOptions {
  SinkKind kind = SinkKind::null;
  int input_rate = kEngineSampleRate;  // rate of the samples given to write()

  // Device sinks (JACK, PortAudio)
  ResampleQuality quality = ResampleQuality::medium;
  double buffer_seconds = 1.0;  // ring capacity in seconds of device audio (how far the producer may run ahead)
  double stall_timeout_seconds = 3.0;  // write()/drain() throw if the device consumes nothing for this long

  // JACK
  std::string client_name = "kokoro";
  std::string server_name;  // empty: $JACK_DEFAULT_SERVER, else the default server. A server is never started.
  bool stereo = false;      // also register out_2, a copy of out_1
  bool autoconnect = true;  // connect to system:playback_* on start

  // PortAudio
  std::string device;            // empty: default output; else exact name, unique substring, or index
  int device_rate = 0;           // 0: the device's default rate
  double latency_seconds = 0.0;  // requested output latency; 0: the device's default low latency
  unsigned period_frames = 0;    // frames per callback; 0: let PortAudio choose

  // WAV (written at input_rate, mono)
  std::string path;
  WavFormat wav_format = WavFormat::float32;
};

struct SinkStats {
  uint64_t frames_written = 0;  // input-rate samples accepted by write()
  uint64_t frames_played = 0;   // output-rate samples of audio delivered (silence not counted)
  uint64_t underruns = 0;       // times the device ran dry in the middle of an utterance
  uint64_t xruns = 0;           // backend-reported: JACK xrun callback, PortAudio output-underflow flags
  uint64_t callbacks = 0;       // device periods processed
  uint64_t worst_callback_ns = 0;  // longest time spent in one callback
  uint64_t flushes = 0;         // flush() requests applied by the callback
  int output_rate = 0;          // device rate (input rate for WAV and null)
  int period_frames = 0;        // current device period, 0 if not known
  std::string error;            // non-empty once the device has failed (e.g. JACK server shut down)
};

class AudioSink {
 public:
  virtual ~AudioSink() = default;

  // Producer thread. Queues mono samples at input_rate(); blocks while the device buffer is full. Returns
  // how many samples were taken: all of them, or fewer only after interrupt(). Throws kokoro::Error if the
  // device has failed or stalled (no progress for stall_timeout_seconds).
  virtual std::size_t write(const float* samples, std::size_t n) = 0;
  std::size_t write(const std::vector<float>& samples) { return write(samples.data(), samples.size()); }
  // Producer thread. The audio written so far completes an utterance (flushes the resampler's tail).
  virtual void end_utterance() = 0;
  // Producer thread. The audio written so far may be followed by a pause within the utterance: the producer is
  // waiting for input it does not have yet (the next sentence of text that streams in). The device running out
  // of audio right here is a pause in the speech, not an underrun; running out anywhere after the next write
  // is one again. Devices also play out the resampler's tail here (a sentence ends in silence, so restarting
  // the filter at the next sentence is inaudible). Files and the null sink have nothing to mark.
  virtual void mark_pause() {}
  // Producer thread. Drops everything queued but not yet played (see barge-in above) and re-arms write().
  virtual void flush() = 0;
  // Producer thread. Waits until everything written has been played (taken by the callback, then the
  // device's output latency), so the sink can be closed right after; throws on failure, stall or timeout.
  virtual void drain(double timeout_seconds) = 0;

  // Any thread. Makes a blocked write() return early; cleared by flush().
  virtual void interrupt() = 0;
  virtual SinkStats stats() const = 0;
  // One line for logs and status output, e.g. "JACK client kokoro on server default, 48000 Hz, 256 frames".
  virtual std::string describe() const = 0;
  virtual int input_rate() const = 0;
  // True for sinks that consume audio at playback speed (devices): the engine then plans its work against
  // the audio really queued in them. False for files and the null sink, which take audio as fast as it comes.
  virtual bool plays_in_real_time() const { return false; }
};

// Opens and starts a sink. Throws kokoro::Error naming the device, server or file on failure.
std::unique_ptr<AudioSink> open_sink(const SinkOptions& options);

// Parsers for command-line values; throw kokoro::Error listing the accepted values.
SinkKind parse_sink_kind(const std::string& name);              // jack | portaudio | wav | null
ResampleQuality parse_resample_quality(const std::string& name);  // best | medium | fastest | linear
WavFormat parse_wav_format(const std::string& name);            // float | pcm16
const char* to_string(SinkKind kind);
const char* to_string(ResampleQuality quality);

struct AudioDeviceInfo {
  int index = -1;
  std::string name;
  std::string host_api;
  int max_output_channels = 0;
  double default_rate = 0;
  double default_low_latency = 0;  // seconds
  bool is_default = false;
};
// PortAudio output devices (for --list-devices).
std::vector<AudioDeviceInfo> list_output_devices();

}  // namespace kokoro
