#include "realtime/wav_sink.h"

#include <sndfile.h>
#include <spdlog/spdlog.h>

#include "core/error.h"

namespace kokoro {

WavSink::WavSink(const SinkOptions& options) : path_(options.path), rate_(options.input_rate), format_(options.wav_format) {
  if (path_.empty()) throw Error("WAV sink: no output path given");
  if (rate_ <= 0) throw Error("WAV sink " + path_ + ": sample rate must be positive");
  SF_INFO info{};
  info.samplerate = rate_;
  info.channels = 1;
  // Float goes into WAVE_FORMAT_EXTENSIBLE (WAVEX): readers such as sox expect the extensible header for
  // anything but integer PCM and warn about a plain float fmt chunk. 16-bit PCM stays the canonical header.
  info.format = format_ == WavFormat::pcm16 ? (SF_FORMAT_WAV | SF_FORMAT_PCM_16) : (SF_FORMAT_WAVEX | SF_FORMAT_FLOAT);
  file_ = sf_open(path_.c_str(), SFM_WRITE, &info);
  if (!file_) throw Error("WAV sink: cannot create " + path_ + ": " + sf_strerror(nullptr));
  // Out-of-range samples clip to full scale in 16-bit files instead of wrapping around.
  sf_command(file_, SFC_SET_CLIPPING, nullptr, SF_TRUE);
}

WavSink::~WavSink() {
  try {
    close();
  } catch (const std::exception& e) {
    spdlog::error("{}", e.what());
  }
}

void WavSink::close() {
  if (!file_) return;
  SNDFILE* f = file_;
  file_ = nullptr;
  if (sf_close(f) != 0) throw Error("WAV sink: cannot finish " + path_ + ": " + sf_strerror(f));
}

std::size_t WavSink::write(const float* samples, std::size_t n) {
  if (!file_) throw Error("WAV sink " + path_ + ": write after close");
  const sf_count_t done = sf_writef_float(file_, samples, static_cast<sf_count_t>(n));
  if (done != static_cast<sf_count_t>(n))
    throw Error("WAV sink: cannot write to " + path_ + ": " + sf_strerror(file_));
  frames_ += n;
  return n;
}

void WavSink::drain(double) {
  if (file_) sf_write_sync(file_);
}

SinkStats WavSink::stats() const {
  SinkStats s;
  s.frames_written = frames_;
  s.frames_played = frames_;
  s.output_rate = rate_;
  return s;
}

std::string WavSink::describe() const {
  return "WAV file " + path_ + ", " + std::to_string(rate_) + " Hz mono " +
         (format_ == WavFormat::pcm16 ? "16-bit PCM" : "float32");
}

}  // namespace kokoro
