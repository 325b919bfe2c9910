#include "apps/kokoro_server/speech_request.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdlib>
#include <nlohmann/json.hpp>

namespace kokoro::server {

namespace {

using nlohmann::json;

std::string_view trim(std::string_view s) {
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.front()))) s.remove_prefix(1);
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.remove_suffix(1);
  return s;
}

bool known_voice(std::string_view name, const std::vector<std::string>& voices) {
  return std::find(voices.begin(), voices.end(), name) != voices.end();
}

// A positive finite weight, the whole string being the number.
bool parse_weight(std::string_view text, double& out) {
  const std::string s(trim(text));
  if (s.empty() || s.size() > 32) return false;
  char* end = nullptr;
  const double v = std::strtod(s.c_str(), &end);
  if (end != s.c_str() + s.size() || !std::isfinite(v) || !(v > 0) || v > 1e6) return false;
  out = v;
  return true;
}

// OpenAI's six original voices, as the Kokoro voices that carry their names (Kokoro-FastAPI does the same).
const char* openai_voice(std::string_view name) {
  if (name == "alloy") return "af_alloy";
  if (name == "echo") return "am_echo";
  if (name == "fable") return "bm_fable";
  if (name == "onyx") return "am_onyx";
  if (name == "nova") return "af_nova";
  if (name == "shimmer") return "af_bella";
  return nullptr;
}

std::string weight_text(double w) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.6g", w);
  return buf;
}

constexpr size_t kMaxBlendParts = 16;

}  // namespace

bool parse_audio_format(std::string_view name, AudioFormat& out) {
  static const std::pair<const char*, AudioFormat> names[] = {{"wav", AudioFormat::wav},   {"pcm", AudioFormat::pcm},
                                                              {"mp3", AudioFormat::mp3},   {"opus", AudioFormat::opus},
                                                              {"flac", AudioFormat::flac}, {"aac", AudioFormat::aac}};
  for (const auto& [n, f] : names)
    if (name == n) {
      out = f;
      return true;
    }
  return false;
}

const char* format_name(AudioFormat f) {
  switch (f) {
    case AudioFormat::wav: return "wav";
    case AudioFormat::pcm: return "pcm";
    case AudioFormat::mp3: return "mp3";
    case AudioFormat::opus: return "opus";
    case AudioFormat::flac: return "flac";
    case AudioFormat::aac: return "aac";
  }
  return "?";
}

const char* content_type(AudioFormat f) {
  switch (f) {
    case AudioFormat::wav: return "audio/wav";
    case AudioFormat::pcm: return "audio/pcm";  // as OpenAI and Kokoro-FastAPI label raw s16le 24 kHz mono
    case AudioFormat::mp3: return "audio/mpeg";
    case AudioFormat::opus: return "audio/ogg";
    case AudioFormat::flac: return "audio/flac";
    case AudioFormat::aac: return "audio/aac";
  }
  return "application/octet-stream";
}

long long utf8_length(std::string_view text) {
  long long count = 0;
  const auto* p = reinterpret_cast<const unsigned char*>(text.data());
  const auto* end = p + text.size();
  while (p < end) {
    const unsigned char c = *p;
    int extra;
    uint32_t cp;
    if (c < 0x80) {
      extra = 0;
      cp = c;
    } else if (c >= 0xC2 && c <= 0xDF) {
      extra = 1;
      cp = c & 0x1F;
    } else if (c >= 0xE0 && c <= 0xEF) {
      extra = 2;
      cp = c & 0x0F;
    } else if (c >= 0xF0 && c <= 0xF4) {
      extra = 3;
      cp = c & 0x07;
    } else {
      return -1;
    }
    if (end - p <= extra) return -1;
    for (int i = 1; i <= extra; ++i) {
      if ((p[i] & 0xC0) != 0x80) return -1;
      cp = (cp << 6) | (p[i] & 0x3F);
    }
    if ((extra == 2 && (cp < 0x800 || (cp >= 0xD800 && cp <= 0xDFFF))) || (extra == 3 && (cp < 0x10000 || cp > 0x10FFFF)))
      return -1;
    p += extra + 1;
    ++count;
  }
  return count;
}

const std::vector<std::string>& engine_languages() {
  static const std::vector<std::string> codes = {"en-us", "en-gb", "es", "fr-fr", "hi", "it", "pt-br", "ja", "zh"};
  return codes;
}

std::string engine_language(std::string_view code) {
  std::string c(trim(code));
  for (char& ch : c) ch = ch == '_' ? '-' : static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
  static const std::pair<const char*, const char*> aliases[] = {
      {"a", "en-us"}, {"b", "en-gb"}, {"e", "es"},    {"f", "fr-fr"}, {"h", "hi"},    {"i", "it"},
      {"p", "pt-br"}, {"j", "ja"},    {"z", "zh"},    {"en", "en-us"}, {"fr", "fr-fr"}, {"pt", "pt-br"},
      {"zh-cn", "zh"}, {"cmn", "zh"}, {"es-es", "es"}, {"it-it", "it"}, {"hi-in", "hi"}, {"ja-jp", "ja"}};
  for (const auto& [alias, target] : aliases)
    if (c == alias) return target;
  for (const auto& known : engine_languages())
    if (c == known) return known;
  return "";
}

std::string engine_voice_spec(std::string_view voice, const std::vector<std::string>& voices, std::string* error) {
  const std::string_view v = trim(voice);
  auto fail = [&](std::string message) {
    if (error) *error = std::move(message);
    return std::string();
  };
  if (v.empty()) return fail("voice is empty");
  if (v.size() > 1024) return fail("voice is longer than 1024 bytes");
  if (known_voice(v, voices)) return std::string(v);
  if (const char* mapped = openai_voice(v); mapped && known_voice(mapped, voices)) return mapped;

  // Kokoro-FastAPI's "a(2)+b(1)" / "a+b", or our "a:2,b:1". Never '-' (FastAPI's subtraction): refused below
  // as an unknown name.
  const bool fastapi = v.find('+') != std::string_view::npos || v.find('(') != std::string_view::npos;
  const char separator = fastapi ? '+' : ',';
  std::vector<std::pair<std::string, double>> parts;
  size_t start = 0;
  while (start <= v.size()) {
    size_t end = v.find(separator, start);
    if (end == std::string_view::npos) end = v.size();
    std::string_view item = trim(v.substr(start, end - start));
    double weight = 1.0;
    std::string_view name = item;
    if (fastapi) {
      if (auto open = item.find('('); open != std::string_view::npos) {
        if (item.back() != ')') return fail("voice '" + std::string(v) + "': expected name(weight) in '" + std::string(item) + "'");
        if (!parse_weight(item.substr(open + 1, item.size() - open - 2), weight))
          return fail("voice '" + std::string(v) + "': weight in '" + std::string(item) + "' is not a positive number");
        name = trim(item.substr(0, open));
      }
    } else if (auto colon = item.find(':'); colon != std::string_view::npos) {
      if (!parse_weight(item.substr(colon + 1), weight))
        return fail("voice '" + std::string(v) + "': weight in '" + std::string(item) + "' is not a positive number");
      name = trim(item.substr(0, colon));
    }
    if (name.empty()) return fail("voice '" + std::string(v) + "': empty voice name in the blend");
    if (!known_voice(name, voices)) {
      const char* mapped = openai_voice(name);
      if (!mapped || !known_voice(mapped, voices))
        return fail("voice '" + std::string(name) + "' not found (GET /v1/audio/voices lists the voices)");
      name = mapped;
    }
    parts.emplace_back(std::string(name), weight);
    if (parts.size() > kMaxBlendParts) return fail("voice blends at most " + std::to_string(kMaxBlendParts) + " voices");
    start = end + 1;
  }
  if (parts.size() == 1) return parts[0].first;
  std::string spec;
  for (const auto& [name, weight] : parts) {
    if (!spec.empty()) spec += ',';
    spec += name + ":" + weight_text(weight);
  }
  return spec;
}

std::variant<SpeechRequest, ApiError> parse_speech_request(std::string_view body, const std::vector<std::string>& voices,
                                                           const SpeechLimits& limits) {
  json j;
  try {
    j = json::parse(body.begin(), body.end());
  } catch (const json::parse_error& e) {
    // The position only: nlohmann's message quotes the bytes it read, which may be the invalid ones.
    if (std::string_view(e.what()).find("UTF-8") != std::string_view::npos)
      return bad_request("input is not valid UTF-8 (byte " + std::to_string(e.byte) + " of the body)", "input", "invalid_utf8");
    return bad_request("request body is not valid JSON (byte " + std::to_string(e.byte) + ")", "", "invalid_json");
  } catch (const json::exception&) {
    return bad_request("request body is not valid JSON", "", "invalid_json");
  }
  if (!j.is_object()) return bad_request("request body must be a JSON object", "", "invalid_json");
  SpeechRequest r;

  if (auto it = j.find("model"); it != j.end() && !it->is_null()) {
    if (!it->is_string()) return bad_request("model must be a string", "model");
    const auto& m = it->get_ref<const std::string&>();
    if (m != "kokoro" && m != "tts-1" && m != "tts-1-hd")
      return bad_request("model '" + m + "' is not served here (use kokoro, tts-1 or tts-1-hd)", "model", "model_not_found");
    r.model = m;
  }

  auto input = j.find("input");
  if (input == j.end() || input->is_null()) return bad_request("input is required", "input");
  if (!input->is_string()) return bad_request("input must be a string", "input");
  r.input = input->get<std::string>();
  const long long chars = utf8_length(r.input);
  if (chars < 0) return bad_request("input is not valid UTF-8", "input", "invalid_utf8");
  if (trim(r.input).empty()) return bad_request("input is empty", "input", "empty_input");
  if (static_cast<unsigned long long>(chars) > limits.max_input_chars)
    return bad_request("input is " + std::to_string(chars) + " characters, more than this server's limit of " +
                           std::to_string(limits.max_input_chars) + " (split the text into several requests)",
                       "input", "input_too_long");

  std::string voice = "af_heart";  // Kokoro-FastAPI's default; OpenAI requires the field
  if (auto it = j.find("voice"); it != j.end() && !it->is_null()) {
    if (!it->is_string()) return bad_request("voice must be a string", "voice");
    voice = it->get<std::string>();
  }
  std::string why;
  r.voice = engine_voice_spec(voice, voices, &why);
  if (r.voice.empty()) return bad_request(why, "voice", "voice_not_found");

  if (auto it = j.find("response_format"); it != j.end() && !it->is_null()) {
    if (!it->is_string()) return bad_request("response_format must be a string", "response_format");
    const auto& f = it->get_ref<const std::string&>();
    if (!parse_audio_format(f, r.format))
      return bad_request("response_format '" + f + "' is not supported (wav, pcm, mp3, opus, flac, aac)",
                         "response_format", "unsupported_format");
  }

  if (auto it = j.find("speed"); it != j.end() && !it->is_null()) {
    if (!it->is_number()) return bad_request("speed must be a number", "speed");
    const double s = it->get<double>();
    if (!(s >= 0.25 && s <= 4.0)) return bad_request("speed must be between 0.25 and 4", "speed", "invalid_speed");
    r.speed = static_cast<float>(s);
  }

  if (auto it = j.find("stream"); it != j.end() && !it->is_null()) {
    if (!it->is_boolean()) return bad_request("stream must be true or false", "stream");
    r.stream = it->get<bool>();
  }

  if (auto it = j.find("return_timestamps"); it != j.end() && !it->is_null()) {
    if (!it->is_boolean()) return bad_request("return_timestamps must be true or false", "return_timestamps");
    r.return_timestamps = it->get<bool>();
  }

  if (auto it = j.find("lang_code"); it != j.end() && !it->is_null()) {
    if (!it->is_string()) return bad_request("lang_code must be a string", "lang_code");
    const auto& code = it->get_ref<const std::string&>();
    if (!trim(code).empty()) {
      r.language = engine_language(code);
      if (r.language.empty())
        return bad_request("lang_code '" + code + "' is not supported (a b e f h i p j z, or en-us en-gb es fr-fr hi it pt-br ja zh)",
                           "lang_code", "unsupported_language");
    }
  }
  return r;
}

}  // namespace kokoro::server
