#include "realtime/audio_sink.h"

#include "core/error.h"
#include "realtime/jack_sink.h"
#include "realtime/null_sink.h"
#include "realtime/portaudio_sink.h"
#include "realtime/wav_sink.h"

namespace kokoro {

std::unique_ptr<AudioSink> open_sink(const SinkOptions& options) {
  if (options.input_rate <= 0) throw Error("audio sink: input rate must be positive");
  switch (options.kind) {
    case SinkKind::jack: {
      auto sink = std::make_unique<JackSink>(options);
      sink->start();
      return sink;
    }
    case SinkKind::portaudio: {
      auto sink = std::make_unique<PortAudioSink>(options);
      sink->start();
      return sink;
    }
    case SinkKind::wav: return std::make_unique<WavSink>(options);
    case SinkKind::null: return std::make_unique<NullSink>(options);
  }
  throw Error("audio sink: unknown kind");
}

SinkKind parse_sink_kind(const std::string& name) {
  if (name == "jack") return SinkKind::jack;
  if (name == "portaudio") return SinkKind::portaudio;
  if (name == "wav") return SinkKind::wav;
  if (name == "null") return SinkKind::null;
  throw Error("unknown audio output '" + name + "' (use jack, portaudio, wav or null)");
}

ResampleQuality parse_resample_quality(const std::string& name) {
  if (name == "best") return ResampleQuality::best;
  if (name == "medium") return ResampleQuality::medium;
  if (name == "fastest") return ResampleQuality::fastest;
  if (name == "linear") return ResampleQuality::linear;
  throw Error("unknown resampling quality '" + name + "' (use best, medium, fastest or linear)");
}

WavFormat parse_wav_format(const std::string& name) {
  if (name == "float" || name == "float32") return WavFormat::float32;
  if (name == "pcm16" || name == "16") return WavFormat::pcm16;
  throw Error("unknown WAV format '" + name + "' (use float or pcm16)");
}

const char* to_string(SinkKind kind) {
  switch (kind) {
    case SinkKind::jack: return "jack";
    case SinkKind::portaudio: return "portaudio";
    case SinkKind::wav: return "wav";
    case SinkKind::null: return "null";
  }
  return "?";
}

const char* to_string(ResampleQuality quality) {
  switch (quality) {
    case ResampleQuality::best: return "best";
    case ResampleQuality::medium: return "medium";
    case ResampleQuality::fastest: return "fastest";
    case ResampleQuality::linear: return "linear";
  }
  return "?";
}

}  // namespace kokoro
