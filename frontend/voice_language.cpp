#include "frontend/voice_language.h"

namespace kokoro {

std::string language_for_voice(std::string_view voice) {
  voice = voice.substr(0, voice.find_first_of(",:"));  // the first voice of a blend
  if (const size_t slash = voice.find_last_of('/'); slash != std::string_view::npos) voice.remove_prefix(slash + 1);
  // Voice names are <language letter><f|m>_<name>.
  if (voice.size() < 3 || voice[2] != '_' || (voice[1] != 'f' && voice[1] != 'm')) return "";
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

}  // namespace kokoro
