// libFuzzer target: Frontend::segment on arbitrary bytes. The first byte picks the language (mostly
// American English, some British and Spanish) and the streaming option; the rest is the text. Every
// result must satisfy the contract (segments of 1..max_phonemes code points of valid UTF-8, offsets
// inside the input, spans inside their segment); anything else traps.
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string_view>

#include "frontend/frontend.h"
#include "frontend/utf8.h"

namespace {

std::unique_ptr<kokoro::Frontend> make(const char* lang, size_t first_words) {
  kokoro::FrontendOptions opt;
  opt.language = lang;
  opt.first_segment_max_words = first_words;
  return std::make_unique<kokoro::Frontend>(opt);
}

void check(bool ok) {
  if (!ok) __builtin_trap();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const auto us = make("en-us", 0);
  static const auto us_streaming = make("en-us", 3);
  static const auto gb = make("en-gb", 0);
  static const auto es = make("es", 0);
  if (size == 0) return 0;
  const uint8_t selector = data[0];
  const std::string_view text(reinterpret_cast<const char*>(data + 1), size - 1);
  const kokoro::Frontend& fe = selector < 160 ? *us : selector < 200 ? *us_streaming : selector < 240 ? *gb : *es;
  for (const auto& seg : fe.segment(text)) {
    const size_t n = kokoro::utf8::count_code_points(seg.phonemes);
    check(n >= 1 && n <= 510);
    check(kokoro::utf8::is_valid(seg.phonemes) && kokoro::utf8::is_valid(seg.text));
    check(seg.text_begin <= seg.text_end && seg.text_end <= text.size());
    for (const auto& w : seg.words) {
      check(seg.text_begin <= w.text_begin && w.text_begin <= w.text_end && w.text_end <= seg.text_end);
      check(w.phoneme_begin < w.phoneme_end && w.phoneme_end <= seg.phonemes.size());
    }
  }
  return 0;
}
