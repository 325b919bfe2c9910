// espeak-ng as a G2P: the English fallback for words no lexicon rule reads (cached, since the same
// unknown names recur), and the whole G2P for the other languages KPipeline hands to espeak-ng.
#pragma once
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "frontend/chunker.h"
#include "frontend/utf8.h"

namespace kokoro {

class EnglishEspeakFallback {
 public:
  explicit EnglishEspeakFallback(bool british);
  std::optional<std::u32string> operator()(const std::u32string& word);

 private:
  bool british_;
  std::string voice_;
  std::mutex mu_;
  std::unordered_map<std::u32string, std::u32string> cache_;
  static constexpr size_t kCacheLimit = 20000;
};

// "es", "fr-fr", "hi", "it", "pt-br" (any espeak-ng language name works).
class EspeakLanguageG2P {
 public:
  explicit EspeakLanguageG2P(std::string language);  // throws kokoro::Error for an unknown language
  // Units (words and punctuation) of one line, ready for the Chunker.
  std::vector<Unit> phonemize_line(const std::vector<utf8::CodePoint>& line) const;

  // Sentences longer than this many code points are phonemized in pieces cut at spaces (KPipeline's
  // 400-character chunks) so that one call stays cheap.
  static constexpr size_t kMaxPieceChars = 400;

 private:
  std::string language_;
};

}  // namespace kokoro
