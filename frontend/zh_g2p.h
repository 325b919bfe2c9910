// Mandarin G2P: a line of text -> Kokoro's Mandarin phonemes, as misaki's ZHG2P does for Kokoro-82M v1.0
// (KPipeline 0.9.4 with lang_code 'z' builds ZHG2P(version=None), its "legacy" path): numbers and
// punctuation normalised (zh_normalize.h), runs of CJK ideographs (U+4E00..U+9FFF) cut into words by
// jieba and read by pypinyin (zh_segment.h, zh_dict.h), each syllable written in IPA with tone arrows
// (zh_pinyin.h), words separated by spaces. That path applies no tone sandhi or erhua beyond what
// pypinyin's phrase readings contain ("一个" is yi2 ge4 there), so neither do we.
//
// Everything else (punctuation, other scripts) is passed on as written, as misaki does; symbols the model's
// vocabulary lacks (emoji, digits cn2an cannot read) are dropped, so they are silent. Latin words go
// through as written too (misaki: "iPhone" becomes "ihone", the model has no P), unless a LatinReader is
// given: the Frontend passes the English G2P, as for Japanese (ja_latin.h), so "iPhone" is said in English.
#pragma once
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "frontend/chunker.h"
#include "frontend/utf8.h"
#include "frontend/vocab.h"
#include "frontend/zh_dict.h"

namespace kokoro::zh {

// Phonemes for an ASCII word with letters ("iPhone"), or "" to pass it on as written.
using LatinReader = std::function<std::u32string(const std::u32string& word)>;

class G2P {
 public:
  // Throws kokoro::Error when the dictionary cannot be found or opened.
  G2P(std::shared_ptr<const Dict> dict, Vocab vocab, LatinReader latin = {});
  static std::unique_ptr<G2P> load(const std::string& assets_dir, LatinReader latin = {});

  // Units (words and punctuation) of one line, ready for the Chunker.
  std::vector<Unit> phonemize_line(const std::vector<utf8::CodePoint>& line) const;
  // The phoneme string of one line (units joined), as misaki's ZHG2P returns it after vocab filtering.
  std::string phonemize(std::string_view text) const;
  // The line as it is read: numbers as characters, punctuation mapped (zh_normalize.h).
  std::string normalize_line(const std::vector<utf8::CodePoint>& line) const;
  // Each ideograph of the normalised text with its reading (for agreement per character in tests).
  std::vector<std::pair<char32_t, std::u32string>> character_readings(std::string_view text) const;

  const Dict& dict() const { return *dict_; }

 private:
  std::shared_ptr<const Dict> dict_;
  Vocab vocab_;
  LatinReader latin_;
};

}  // namespace kokoro::zh
