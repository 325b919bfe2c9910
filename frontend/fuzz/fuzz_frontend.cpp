// libFuzzer target: Frontend::segment on arbitrary bytes. The first byte picks the language (mostly
// American English, some British, Japanese, Spanish and Mandarin), the streaming option, or SSML (bytes >= 248: the SSML
// parser alone, then the frontend with SSML forced on); the rest is the text. Every result must satisfy
// the contract (segments of 1..max_phonemes code points of valid UTF-8 or pause-only, offsets inside the input, spans
// inside their segment; SSML pieces map every byte back into the input); malformed SSML may only be a
// kokoro::Error; anything else traps.
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <memory>
#include <string_view>
#include <vector>

#include "core/error.h"
#include "frontend/frontend.h"
#include "frontend/ssml.h"
#include "frontend/utf8.h"

namespace {

std::unique_ptr<kokoro::Frontend> make(const char* lang, size_t first_words,
                                       kokoro::FrontendOptions::Ssml ssml = kokoro::FrontendOptions::Ssml::automatic) {
  kokoro::FrontendOptions opt;
  opt.language = lang;
  opt.first_segment_max_words = first_words;
  opt.ssml = ssml;
  return std::make_unique<kokoro::Frontend>(opt);
}

void check(bool ok) {
  if (!ok) __builtin_trap();
}

struct Frontends {
  std::unique_ptr<kokoro::Frontend> us = make("en-us", 0);
  std::unique_ptr<kokoro::Frontend> us_streaming = make("en-us", 3);
  std::unique_ptr<kokoro::Frontend> gb = make("en-gb", 0);
  std::unique_ptr<kokoro::Frontend> es = make("es", 0);
  std::unique_ptr<kokoro::Frontend> ssml = make("en-us", 4, kokoro::FrontendOptions::Ssml::on);
  std::unique_ptr<kokoro::Frontend> ja = make_japanese();
  std::unique_ptr<kokoro::Frontend> zh = make_mandarin();

  // Mandarin needs zh.kozh (scripts/fuzz-frontend.sh builds it); without it those inputs go to Spanish.
  static std::unique_ptr<kokoro::Frontend> make_mandarin() {
    try {
      return make("zh", 2);
    } catch (const kokoro::Error& e) {
      std::fprintf(stderr, "fuzz_frontend: no Mandarin (%s)\n", e.what());
      return nullptr;
    }
  }
  // Japanese needs models/ja (scripts/fetch-assets); without it those inputs go to the British frontend.
  static std::unique_ptr<kokoro::Frontend> make_japanese() {
    try {
      return make("ja", 5);
    } catch (const kokoro::Error& e) {
      std::fprintf(stderr, "fuzz_frontend: no Japanese (%s)\n", e.what());
      return nullptr;
    }
  }
};

const Frontends& frontends() {
  static const Frontends f;
  return f;
}

}  // namespace

// Made before the first input, outside libFuzzer's per-input timeout: in a tree without the build's binary
// lexicons (this fuzz tree) the first start compiles them from the JSON, which takes seconds under ASan.
extern "C" int LLVMFuzzerInitialize(int*, char***) {
  frontends();
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const auto& [us, us_streaming, gb, es, ssml, ja, zh] = frontends();
  if (size == 0) return 0;
  const uint8_t selector = data[0];
  const std::string_view text(reinterpret_cast<const char*>(data + 1), size - 1);
  if (selector >= 248) {
    try {
      const auto doc = kokoro::ssml::parse(text);
      for (const auto& p : doc.pieces) {
        check(p.begin_of.size() == p.text.size() && p.end_of.size() == p.text.size());
        for (size_t i = 0; i < p.text.size(); ++i) check(p.begin_of[i] < p.end_of[i] && p.end_of[i] <= text.size());
      }
    } catch (const kokoro::Error&) {
    }
  }
  const kokoro::Frontend& fe = selector >= 248 ? *ssml
                               : selector < 160 ? *us
                               : selector < 200 ? *us_streaming
                               : selector < 230 ? *gb
                               : selector < 240 ? (ja ? *ja : *gb)
                               : selector < 244 ? *es
                                                : (zh ? *zh : *es);
  std::vector<kokoro::Segment> segs;
  try {
    segs = fe.segment(text);
  } catch (const kokoro::Error&) {
    return 0;  // malformed SSML with SSML forced on: a clear error is the contract
  }
  for (const auto& seg : segs) {
    const size_t n = kokoro::utf8::count_code_points(seg.phonemes);
    // A pause-only segment (nothing speakable) has no phonemes, no words and a pause.
    check(n >= 1 ? n <= 510 : seg.words.empty() && seg.pause_before > 0);
    check(kokoro::utf8::is_valid(seg.phonemes) && kokoro::utf8::is_valid(seg.text));
    check(seg.text_begin <= seg.text_end && seg.text_end <= text.size());
    for (const auto& w : seg.words) {
      check(seg.text_begin <= w.text_begin && w.text_begin <= w.text_end && w.text_end <= seg.text_end);
      check(w.phoneme_begin < w.phoneme_end && w.phoneme_end <= seg.phonemes.size());
    }
  }
  return 0;
}
