// Japanese G2P: text -> Kokoro's Japanese phonemes the way misaki 0.9.4's JAG2P does in its default
// "cutlet" version, the one KPipeline(lang_code='j') uses with Kokoro-82M v1.0:
//   normalize (ja_normalize.h: NFKC, numbers -> kana) -> MeCab with UniDic (ja_dictionary.h) -> each
//   token's pronunciation in hiragana (pron, else kana, else the surface) -> consecutive tokens that
//   misaki's word list writes as one word are joined -> per word: ASCII as written (misaki leaves Latin
//   text to the model), symbols through the punctuation table, unknown non-kana words silent, kana
//   readings through ja_kana.h -> words joined with spaces (none before closing punctuation, none
//   after opening quotes, none around ʔ).
// Output has no accent or pitch marks (the cutlet path emits none).
#pragma once
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "frontend/chunker.h"
#include "frontend/utf8.h"
#include "frontend/vocab.h"

namespace kokoro::ja {

class Dictionary;

// Phonemes for a Latin word in Japanese text ("iPhone"), or "" to leave it as misaki does.
using LatinReader = std::function<std::u32string(const std::u32string& word)>;

class G2P {
 public:
  // dir: the Japanese data directory; empty: find_data_dir(). Throws kokoro::Error.
  // With `symbols`, phonemize_line keeps only the model's symbols: misaki passes Latin text through as
  // written ("iPhone"), and letters the vocabulary lacks (B, C, g, ...) would otherwise be dropped only at
  // tokenization, after word spans were counted in code points. The model receives the same tokens.
  // With `latin`, Latin words other than acronyms are read by it (the frontend passes the English G2P)
  // instead of going through as written.
  explicit G2P(const std::string& dir = "", std::optional<Vocab> symbols = std::nullopt, LatinReader latin = {});
  ~G2P();
  // Units of one line (text offsets are the code points' own), for the Chunker.
  std::vector<Unit> phonemize_line(const std::vector<utf8::CodePoint>& line) const;
  // The whole line's phonemes as misaki writes them.
  std::u32string phonemize(std::string_view text) const;

  // MeCab reads the normalized line in pieces cut after sentence marks, and at most this many code
  // points (at a change of character class where possible), so that a 10,000-character line costs
  // linear time and bounded memory.
  static constexpr size_t kMaxPieceChars = 512;

 private:
  std::shared_ptr<const Dictionary> dict_;
  std::optional<Vocab> symbols_;
  LatinReader latin_;
};

}  // namespace kokoro::ja
