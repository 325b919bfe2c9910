// The response formats: 24 kHz mono float samples in, the bytes of the format out, a piece at a time, so that
// each piece can be sent as soon as it is encoded. Every encoder is a Debian library: LAME (mp3), libopusenc
// over libogg (Ogg Opus), libFLAC (flac), VisualOn's vo-aacenc (ADTS AAC); WAV and PCM are written here.
// finish() flushes what the encoder holds back (LAME's and AAC's frames, Opus's last page), so that the
// decoded audio holds the whole utterance.
#pragma once

#include <cstddef>
#include <memory>
#include <optional>
#include <string>

#include "apps/kokoro_server/speech_request.h"

namespace kokoro::server {

class AudioEncoder {
 public:
  virtual ~AudioEncoder() = default;
  // Appends the bytes for these samples (possibly none yet: encoders work in frames) to *out.
  virtual void encode(const float* samples, size_t count, std::string* out) = 0;
  // Appends the rest; no encode() after it.
  virtual void finish(std::string* out) = 0;
};

// `total_samples`: the length when it is known before the first byte (a response that is not streamed), so
// that WAV gets its true sizes; otherwise a streamed WAV says 0xFFFFFFFF (unknown length, read to the end),
// which players accept. Throws std::runtime_error if the library refuses the settings.
std::unique_ptr<AudioEncoder> make_encoder(AudioFormat format, std::optional<size_t> total_samples = std::nullopt);

inline constexpr int kSampleRate = 24000;

}  // namespace kokoro::server
