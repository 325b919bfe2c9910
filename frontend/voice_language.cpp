#include "frontend/voice_language.h"

namespace kokoro {

std::string language_of_voice(std::string_view voice) {
  voice = voice.substr(0, voice.find(','));
  voice = voice.substr(0, voice.find(':'));
  if (const size_t slash = voice.find_last_of('/'); slash != std::string_view::npos) voice.remove_prefix(slash + 1);
  if (voice.size() < 4 || voice[2] != '_' || (voice[1] != 'f' && voice[1] != 'm')) return "";
  switch (voice[0]) {
    case 'a': return "en-us";
    case 'b': return "en-gb";
    case 'e': return "es";
    case 'f': return "fr-fr";
    case 'h': return "hi";
    case 'i': return "it";
    case 'j': return "ja";
    case 'p': return "pt-br";
    case 'z': return "zh";
    default: return "";
  }
}

std::string language_for(std::string_view explicit_language, std::string_view voice, std::string_view fallback) {
  if (!explicit_language.empty()) return std::string(explicit_language);
  std::string lang = language_of_voice(voice);
  return lang.empty() ? std::string(fallback) : lang;
}

}  // namespace kokoro
