// Latin words in Japanese text ("iPhone", "Google") read by the English G2P, as a reader who knows the
// word says it, instead of misaki's pass-through (the model has no symbol for most letters, so "iPhone"
// came out as "ihone"). The English lexicons are loaded on the first Latin word, so Japanese text
// without any costs nothing.
#pragma once
#include <string>

#include "frontend/ja_g2p.h"

namespace kokoro::ja {

// assets_dir holds lexicons/; espeak_fallback as FrontendOptions::espeak_fallback.
LatinReader english_reader(const std::string& assets_dir, bool espeak_fallback);

}  // namespace kokoro::ja
