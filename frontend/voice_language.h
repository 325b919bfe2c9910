// The language a voice speaks, from its name as the official pipeline's lang codes read it: the first
// letter of "zf_xiaobei" is KPipeline's lang_code ('a' en-us, 'b' en-gb, 'e' es, 'f' fr-fr, 'h' hi,
// 'i' it, 'j' ja, 'p' pt-br, 'z' zh). Used when no language is given.
#pragma once
#include <string>
#include <string_view>

namespace kokoro {

// For a voice name, a .bin path or a blend ("af_heart:0.6,zf_xiaobei:0.4": its first voice). Empty when
// the name does not start with a known code followed by f_ or m_ (a custom voice file).
std::string language_of_voice(std::string_view voice);

// language_of_voice, or `fallback` when that is empty.
std::string language_for(std::string_view explicit_language, std::string_view voice,
                         std::string_view fallback = "en-us");

}  // namespace kokoro
