// The language a voice speaks, from its name, as the official pipeline's lang codes read it: the first
// letter of the voice name (af_heart -> a -> en-us, jf_alpha -> j -> ja). For a blend
// ("jf_alpha:0.6,jm_kumo:0.4") the first voice decides; for a .bin path, its file name.
#pragma once
#include <string>
#include <string_view>

namespace kokoro {

// "en-us", "en-gb", "es", "fr-fr", "hi", "it", "ja", "pt-br", "zh"; "" when the name has no known prefix.
std::string language_for_voice(std::string_view voice);

}  // namespace kokoro
