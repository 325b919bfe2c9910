// The body of POST /v1/audio/speech (OpenAI's shape, with Kokoro-FastAPI's extensions), parsed and checked
// before any engine work: every mistake a client can make becomes a 400 naming the field. Pure (no I/O, no
// engine), so that the fuzz target and the unit tests run it directly.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "apps/kokoro_server/api_error.h"

namespace kokoro::server {

enum class AudioFormat { wav, pcm, mp3, opus, flac, aac };

// "wav" -> wav ...; false for a name we do not serve.
bool parse_audio_format(std::string_view name, AudioFormat& out);
const char* format_name(AudioFormat f);
const char* content_type(AudioFormat f);

struct SpeechLimits {
  size_t max_input_chars = 50000;  // Unicode code points of `input` (docs/server.md: about 55 min of speech)
};

struct SpeechRequest {
  std::string model = "kokoro";
  std::string input;
  std::string voice;     // the engine's spec: "af_heart" or a blend "af_bella:2,af_sky:1" of known voices only
  std::string language;  // the engine's code ("en-us", ...), "" for the voice's own
  float speed = 1.0f;
  AudioFormat format = AudioFormat::mp3;  // OpenAI's default
  bool stream = true;                     // Kokoro-FastAPI's default
  bool return_timestamps = true;          // /dev/captioned_speech only
};

// `voices`: the names the model has (sorted or not). Returns the request or the 400 to send.
std::variant<SpeechRequest, ApiError> parse_speech_request(std::string_view body, const std::vector<std::string>& voices,
                                                           const SpeechLimits& limits);

// A voice as clients name it -> the engine's spec, using only names in `voices` (never a path):
//   "af_heart"; our blend "af_heart:0.6,af_bella:0.4"; Kokoro-FastAPI's "af_bella(2)+af_sky(1)" and
//   "af_bella+af_sky"; OpenAI's voice names (alloy, echo, fable, onyx, nova, shimmer) as Kokoro's.
// On failure returns "" and sets *error.
std::string engine_voice_spec(std::string_view voice, const std::vector<std::string>& voices, std::string* error);

// A language as clients name it -> the engine's code: Kokoro-FastAPI's lang_code letters (a b e f h i p j z),
// the engine's codes ("en-us", "pt-br", ...) and a few aliases ("en", "fr", "pt", case and '_' ignored).
// "" when unknown.
std::string engine_language(std::string_view code);

// The languages the engine speaks, in its codes.
const std::vector<std::string>& engine_languages();

// Number of code points if `text` is valid UTF-8 (no overlongs, surrogates or values past U+10FFFF), else -1.
long long utf8_length(std::string_view text);

}  // namespace kokoro::server
