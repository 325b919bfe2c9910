#include "frontend/espeak.h"

#include <espeak-ng/speak_lib.h>
#include <spdlog/spdlog.h>

#include <array>
#include <mutex>
#include <string_view>
#include <utility>

#include "core/error.h"
#include "frontend/unicode_text.h"
#include "frontend/utf8.h"

namespace kokoro {

namespace {

std::mutex& espeak_mutex() {
  static std::mutex mu;
  return mu;
}

// "(fr)" / "(en)" markers espeak inserts around words it reads in another language.
std::string remove_language_flags(const std::string& s) {
  std::string out;
  out.reserve(s.size());
  for (size_t i = 0; i < s.size(); ++i) {
    if (s[i] == '(') {
      size_t j = i + 1;
      while (j < s.size() && ((s[j] >= 'a' && s[j] <= 'z') || s[j] == '-' || s[j] == '^')) ++j;
      if (j < s.size() && s[j] == ')' && j > i + 1) {
        i = j;
        continue;
      }
    }
    out.push_back(s[i]);
  }
  return out;
}

// Unicode blocks whose characters libespeak-ng 1.51 (Debian bookworm) reads through another language's
// tables with a heap-use-after-free: alone (Bengali digits, Hangul jamo...) or before a symbol it names
// ("\u058B%"). Found by our fuzzer and reproduced with espeak_TextToPhonemes alone under ASan; every code
// point up to U+1FAFF was scanned alone, before "%", "$", "\u20AC", " a" and "5" with the en-us voice, and
// only these blocks failed. Their characters are replaced by a space (a word break) before espeak sees the
// text, so such a character is not read at all instead of being read by a broken path.
struct CodeRange {
  char32_t first, last;
};
constexpr std::array<CodeRange, 11> kEspeakUnsafeBlocks{{
    {0x0530, 0x058F},  // Armenian
    {0x0970, 0x0970},  // Devanagari abbreviation sign (the rest of Devanagari is read natively by "hi")
    {0x0980, 0x09FF},  // Bengali
    {0x0A00, 0x0A7F},  // Gurmukhi
    {0x0A80, 0x0AFF},  // Gujarati
    {0x0B80, 0x0BFF},  // Tamil
    {0x0C80, 0x0CFF},  // Kannada
    {0x0D00, 0x0D7F},  // Malayalam
    {0x0D80, 0x0DFF},  // Sinhala
    {0x10A0, 0x10FF},  // Georgian
    {0x1100, 0x11FF},  // Hangul Jamo
}};

std::u32string without_espeak_unsafe(std::u32string u) {
  size_t replaced = 0;
  for (char32_t& c : u)
    for (const CodeRange& r : kEspeakUnsafeBlocks)
      if (c >= r.first && c <= r.last) {
        c = U' ';
        ++replaced;
        break;
      }
  if (replaced) spdlog::debug("espeak: {} character(s) of scripts espeak-ng 1.51 mishandles left unread", replaced);
  return u;
}

std::string collapse_spaces(const std::string& s) {
  std::string out;
  for (char c : s) {
    if (c == '\n' || c == '\t') c = ' ';
    if (c == ' ' && (out.empty() || out.back() == ' ')) continue;
    out.push_back(c);
  }
  while (!out.empty() && out.back() == ' ') out.pop_back();
  return out;
}

}  // namespace

Espeak& Espeak::instance() {
  static auto* engine = new Espeak;  // never destroyed: sessions' threads may phonemize at exit
  return *engine;
}

Espeak::Espeak() {
  std::lock_guard<std::mutex> lock(espeak_mutex());
  const int rate = espeak_Initialize(AUDIO_OUTPUT_RETRIEVAL, 0, nullptr, espeakINITIALIZE_DONT_EXIT);
  if (rate <= 0)
    throw Error("espeak-ng failed to initialize (is espeak-ng-data installed? ESPEAK_DATA_PATH="
                + std::string(std::getenv("ESPEAK_DATA_PATH") ? std::getenv("ESPEAK_DATA_PATH") : "unset") + ")");
}

std::string Espeak::phonemize_piece(const std::string& text) {
  std::string result;
  const char* ptr = text.c_str();
  const void* vp = ptr;
  const int mode = espeakPHONEMES_IPA | espeakPHONEMES_TIE | ('^' << 8);
  // espeak returns one clause per call and advances the pointer; a bounded loop guards against a
  // pointer that stops moving.
  for (size_t guard = 0; vp != nullptr && guard < text.size() + 16; ++guard) {
    const char* ps = espeak_TextToPhonemes(&vp, espeakCHARS_UTF8, mode);
    if (ps && *ps) {
      if (!result.empty()) result.push_back(' ');
      result += ps;
    }
  }
  return collapse_spaces(remove_language_flags(result));
}

std::string Espeak::phonemize(const std::string& voice, const std::string& text) {
  std::lock_guard<std::mutex> lock(espeak_mutex());
  if (voice != current_voice_) {
    // Language names ("en-gb", "fr-fr") select a voice by language, as phonemizer does; voice file names
    // ("en-us") also work by name.
    espeak_VOICE wanted{};
    wanted.languages = voice.c_str();
    if (espeak_SetVoiceByProperties(&wanted) != EE_OK && espeak_SetVoiceByName(voice.c_str()) != EE_OK)
      throw Error("espeak-ng has no voice for language '" + voice + "'");
    current_voice_ = voice;
  }
  // Split at punctuation marks as phonemizer does, phonemize the text between them, put marks back.
  const std::u32string u = without_espeak_unsafe(utf8::to_u32(text));
  std::string out;
  size_t i = 0;
  while (i < u.size()) {
    size_t j = i;
    if (is_espeak_mark(u[i])) {
      while (j < u.size() && is_espeak_mark(u[j])) ++j;
      // Marks keep the spacing they had: none before "word," but one before "¿" or "(" after a space.
      const bool spaced_before = i > 0 && text::is_space(u[i - 1]);
      while (!spaced_before && !out.empty() && out.back() == ' ') out.pop_back();
      if (spaced_before && !out.empty() && out.back() != ' ') out.push_back(' ');
      out += utf8::encode(u.substr(i, j - i));
      if (j < u.size() && text::is_space(u[j])) out.push_back(' ');
    } else {
      while (j < u.size() && !is_espeak_mark(u[j])) ++j;
      std::u32string piece = u.substr(i, j - i);
      bool blank = true;
      for (char32_t c : piece) blank &= text::is_space(c);
      if (!blank) {
        out += phonemize_piece(utf8::encode(piece));
        if (j < u.size() && j > i && text::is_space(u[j - 1])) out.push_back(' ');
      }
    }
    i = j;
  }
  while (!out.empty() && out.back() == ' ') out.pop_back();
  size_t start = 0;
  while (start < out.size() && out[start] == ' ') ++start;
  return out.substr(start);
}

std::u32string espeak_to_misaki_english(std::u32string ps, bool british) {
  using text::replace_all;
  // Longest patterns first, in misaki's order.
  static const std::array<std::pair<std::u32string_view, std::u32string_view>, 20> kE2M = {{
      {U"ʔˌn\u0329", U"ʔn"}, {U"ʔn\u0329", U"ʔn"}, {U"a^ɪ", U"I"}, {U"a^ʊ", U"W"}, {U"d^ʒ", U"ʤ"},
      {U"e^ɪ", U"A"}, {U"t^ʃ", U"ʧ"}, {U"ɔ^ɪ", U"Y"}, {U"ə^l", U"ᵊl"}, {U"ʲo", U"jo"}, {U"ʲə", U"jə"},
      {U"e", U"A"}, {U"ʲ", U""}, {U"ɚ", U"əɹ"}, {U"r", U"ɹ"}, {U"x", U"k"}, {U"ç", U"k"}, {U"ɐ", U"ə"},
      {U"ɬ", U"l"}, {U"\u0303", U""}}};
  for (const auto& [from, to] : kE2M) replace_all(ps, from, to);
  // A syllabic consonant (C + U+0329) becomes ᵊC.
  std::u32string out;
  for (size_t i = 0; i < ps.size(); ++i) {
    if (i + 1 < ps.size() && ps[i + 1] == 0x0329 && !text::is_space(ps[i])) {
      out.push_back(U'ᵊ');
      out.push_back(ps[i]);
      ++i;
    } else if (ps[i] != 0x0329) {
      out.push_back(ps[i]);
    }
  }
  ps = std::move(out);
  if (british) {
    replace_all(ps, U"e^ə", U"ɛː");
    replace_all(ps, U"iə", U"ɪə");
    replace_all(ps, U"ə^ʊ", U"Q");
  } else {
    replace_all(ps, U"o^ʊ", U"O");
    replace_all(ps, U"ɜːɹ", U"ɜɹ");
    replace_all(ps, U"ɜː", U"ɜɹ");
    replace_all(ps, U"ɪə", U"iə");
    replace_all(ps, U"ː", U"");
  }
  replace_all(ps, U"o", U"ɔ");  // espeak < 1.52 writes o for ɔ
  replace_all(ps, U"ɾ", U"T");
  replace_all(ps, U"ʔ", U"t");
  replace_all(ps, U"^", U"");
  return ps;
}

std::u32string espeak_to_misaki_other(std::u32string ps) {
  using text::replace_all;
  static const std::array<std::pair<std::u32string_view, std::u32string_view>, 11> kE2M = {{
      {U"a^ɪ", U"I"}, {U"a^ʊ", U"W"}, {U"d^z", U"ʣ"}, {U"d^ʒ", U"ʤ"}, {U"e^ɪ", U"A"}, {U"o^ʊ", U"O"},
      {U"s^s", U"S"}, {U"t^s", U"ʦ"}, {U"t^ʃ", U"ʧ"}, {U"ɔ^ɪ", U"Y"}, {U"ə^ʊ", U"Q"}}};
  for (const auto& [from, to] : kE2M) replace_all(ps, from, to);
  replace_all(ps, U"^", U"");
  replace_all(ps, U"-", U"");
  return ps;
}

}  // namespace kokoro
