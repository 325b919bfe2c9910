// libespeak-ng, used the way misaki uses it through the phonemizer package: IPA with stress marks,
// multi-letter phonemes tied with '^', punctuation marks kept in place, language-switch flags removed.
// espeak-ng keeps global state, so every call goes through one process-wide lock. libespeak-ng 1.51 leaks
// about 1.3 kB whenever it switches language (frontend/fuzz/lsan.supp); one language per process never
// switches. Characters of the blocks where it reads freed memory (kEspeakUnsafeBlocks, espeak.cpp) never reach it.
#pragma once
#include <string>
#include <string_view>

namespace kokoro {

class Espeak {
 public:
  // The shared engine; throws kokoro::Error (naming the data path) when espeak-ng cannot start.
  static Espeak& instance();

  // IPA for `text` read in `voice` ("en-us", "fr-fr"...). Punctuation marks ;:,.!?¡¿—…"«»“”(){}[] are
  // not sent to espeak but put back between the phonemized pieces. Throws kokoro::Error for an unknown
  // voice.
  std::string phonemize(const std::string& voice, const std::string& text);

 private:
  Espeak();
  std::string phonemize_piece(const std::string& text);  // lock held, voice set
  std::string current_voice_;
};

// The punctuation marks phonemize() keeps out of espeak and puts back in place.
inline bool is_espeak_mark(char32_t c) {
  constexpr std::u32string_view kMarks = U";:,.!?¡¿—…\"«»“”(){}[]";
  return kMarks.find(c) != std::u32string_view::npos;
}

// Kokoro's phoneme set from espeak's IPA, as misaki's EspeakFallback (English words not in the
// dictionaries) and EspeakG2P (other languages) map it.
std::u32string espeak_to_misaki_english(std::u32string ipa, bool british);
std::u32string espeak_to_misaki_other(std::u32string ipa);

}  // namespace kokoro
