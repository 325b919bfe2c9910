#include "frontend/ja_latin.h"

#include <spdlog/spdlog.h>

#include <memory>
#include <mutex>

#include "core/error.h"
#include "frontend/en_g2p.h"
#include "frontend/espeak_g2p.h"

namespace kokoro::ja {

namespace {

struct LazyEnglish {
  std::string lexicons;
  bool espeak_fallback = true;
  std::once_flag once;
  std::shared_ptr<EnglishEspeakFallback> fallback;
  std::unique_ptr<en::G2P> g2p;  // null if the lexicons could not be loaded (words stay as misaki has them)

  void load() {
    try {
      auto data = en::LexiconData::load(lexicons, /*british=*/false);
      en::Fallback fb;
      if (espeak_fallback) {
        fallback = std::make_shared<EnglishEspeakFallback>(false);
        fb = [f = fallback](const std::u32string& w) { return (*f)(w); };
      }
      g2p = std::make_unique<en::G2P>(std::move(data), std::move(fb));
    } catch (const Error& e) {
      spdlog::warn("Latin words in Japanese text are left as written: {}", e.what());
    }
  }
};

}  // namespace

LatinReader english_reader(const std::string& assets_dir, bool espeak_fallback) {
  auto state = std::make_shared<LazyEnglish>();
  state->lexicons = assets_dir + "/lexicons";
  state->espeak_fallback = espeak_fallback;
  return [state](const std::u32string& word) -> std::u32string {
    std::call_once(state->once, [&] { state->load(); });
    if (!state->g2p) return U"";
    std::vector<utf8::CodePoint> cps;
    for (size_t i = 0; i < word.size(); ++i) cps.push_back({word[i], static_cast<uint32_t>(i), static_cast<uint32_t>(i + 1)});
    std::u32string out;
    for (const auto& tk : state->g2p->phonemize_line(cps)) {
      if (!tk.phonemes || tk.phonemes->empty()) continue;
      if (!out.empty()) out.push_back(U' ');
      out += *tk.phonemes;
    }
    return out;
  };
}

}  // namespace kokoro::ja
