#include "frontend/ja_g2p.h"

#include <mecab.h>

#include <algorithm>

#include "core/error.h"
#include "frontend/ja_dictionary.h"
#include "frontend/ja_kana.h"
#include "frontend/ja_normalize.h"

namespace kokoro::ja {

namespace {

// MeCab's character classes in UniDic's char.def, as MeCab reports them per token.
constexpr int kSymbol = 3;
constexpr int kHiragana = 6;
constexpr int kKatakana = 7;

struct Word {
  std::u32string surface;
  std::u32string hira;  // reading in hiragana
  int char_type = 0;    // kHiragana for every known word (misaki's rule), else MeCab's class
  uint32_t begin = 0, end = 0;
  int32_t number = -1;  // the number (ja_normalize.h) whose reading this token is part of
};

// Field `index` of MeCab's CSV feature string ("" when absent); fields may be quoted.
std::string_view csv_field(std::string_view csv, size_t index) {
  size_t field = 0, pos = 0;
  while (pos <= csv.size()) {
    size_t end;
    std::string_view value;
    if (pos < csv.size() && csv[pos] == '"') {
      end = pos + 1;
      while (end < csv.size() && !(csv[end] == '"' && (end + 1 == csv.size() || csv[end + 1] == ','))) ++end;
      value = csv.substr(pos + 1, end - pos - 1);
      ++end;  // past the closing quote
    } else {
      end = csv.find(',', pos);
      if (end == std::string_view::npos) end = csv.size();
      value = csv.substr(pos, end - pos);
    }
    if (field == index) return value;
    ++field;
    pos = end + 1;
  }
  return {};
}

size_t field_count(std::string_view csv) {
  size_t n = 1;
  bool quoted = false;
  for (char c : csv) {
    if (c == '"') quoted = !quoted;
    else if (c == ',' && !quoted) ++n;
  }
  return n;
}

bool is_ascii(std::u32string_view s) {
  return std::all_of(s.begin(), s.end(), [](char32_t c) { return c < 0x80; });
}

bool in(std::u32string_view haystack, std::u32string_view needle) {  // Python's `needle in haystack`
  return haystack.find(needle) != std::u32string_view::npos;
}

size_t utf8_length(char32_t c) { return c < 0x80 ? 1 : c < 0x800 ? 2 : c < 0x10000 ? 3 : 4; }

bool is_sentence_end(char32_t c) { return c == U'。' || c == U'!' || c == U'?' || c == U'！' || c == U'？'; }

// Where to cut the normalized line into pieces MeCab reads one at a time.
// A number's kana as pronounced (the dictionary's pron form): じゅう, きゅう are long vowels (ʥɨː, kʲɨː).
std::u32string number_pronunciation(const std::u32string& kana) {
  std::u32string h = katakana_to_hiragana(kana);
  for (size_t i = 1; i < h.size(); ++i)
    if (h[i] == U'う' && h[i - 1] == U'ゅ') h[i] = U'ー';
  return h;
}

std::vector<std::pair<size_t, size_t>> pieces_of(const std::vector<NormChar>& s) {
  std::vector<std::pair<size_t, size_t>> out;
  size_t b = 0;
  for (size_t i = 0; i < s.size(); ++i) {
    const bool end_here = is_sentence_end(s[i].cp) && (i + 1 == s.size() || !is_sentence_end(s[i + 1].cp));
    if (end_here) {
      out.push_back({b, i + 1});
      b = i + 1;
    } else if (i + 1 - b >= G2P::kMaxPieceChars) {
      // Too long without a sentence end: cut after the last comma or space in its second half.
      size_t cut = i + 1;
      for (size_t k = i + 1; k > b + G2P::kMaxPieceChars / 2; --k) {
        const char32_t c = s[k - 1].cp;
        if (c == U'、' || c == U',' || c == U' ') {
          cut = k;
          break;
        }
      }
      out.push_back({b, cut});
      b = cut;
    }
  }
  if (b < s.size()) out.push_back({b, s.size()});
  return out;
}

void tag_piece(MeCab::Model& model, const std::vector<NormChar>& s, size_t b, size_t e, std::vector<Word>& words) {
  std::string text;
  std::vector<uint32_t> index_at;  // byte in `text` -> index in s
  for (size_t i = b; i < e; ++i) {
    const size_t before = text.size();
    utf8::append(text, s[i].cp);
    index_at.insert(index_at.end(), text.size() - before, static_cast<uint32_t>(i));
  }
  index_at.push_back(static_cast<uint32_t>(e));
  if (text.find_first_not_of(' ') == std::string::npos) return;
  std::unique_ptr<MeCab::Tagger> tagger(model.createTagger());
  std::unique_ptr<MeCab::Lattice> lattice(model.createLattice());
  if (!tagger || !lattice) throw Error("MeCab: cannot create a tagger");
  lattice->set_sentence(text.c_str(), text.size());
  // A number's reading starts and ends a token (no token joins its kana with the text around it).
  size_t byte = 0;
  for (size_t i = b; i < e; ++i) {
    const bool starts = s[i].number >= 0 && (i == b || s[i - 1].number != s[i].number);
    const bool ends_before = i > b && s[i - 1].number >= 0 && s[i - 1].number != s[i].number;
    if ((starts || ends_before) && byte > 0) lattice->set_boundary_constraint(byte, MECAB_TOKEN_BOUNDARY);
    byte += utf8_length(s[i].cp);
  }
  if (!tagger->parse(lattice.get())) throw Error(std::string("MeCab: ") + lattice->what());
  for (const MeCab::Node* n = lattice->bos_node(); n; n = n->next) {
    if (n->stat == MECAB_BOS_NODE || n->stat == MECAB_EOS_NODE || n->length == 0) continue;
    const size_t off = static_cast<size_t>(n->surface - lattice->sentence());
    const size_t first = index_at[off], last = index_at[off + n->length - 1];
    Word w;
    for (size_t i = first; i <= last; ++i) w.surface.push_back(s[i].cp);
    w.begin = s[first].begin;
    w.end = s[last].end;
    for (size_t i = first; i <= last; ++i) {
      w.begin = std::min(w.begin, s[i].begin);
      w.end = std::max(w.end, s[i].end);
    }
    const bool unknown = n->stat == MECAB_UNK_NODE;
    const std::string_view feature(n->feature);
    const size_t fields = field_count(feature);
    std::string_view reading = fields > 9 ? csv_field(feature, 9) : std::string_view();    // pron
    if (reading.empty() && fields > 17) reading = csv_field(feature, 17);                 // kana
    w.hira = katakana_to_hiragana(reading.empty() ? w.surface : utf8::to_u32(reading));
    w.char_type = (n->char_type == kKatakana || !unknown) ? kHiragana : n->char_type;
    w.number = s[first].number;
    for (size_t i = first; i <= last; ++i)
      if (s[i].number != w.number) w.number = -1;
    words.push_back(std::move(w));
  }
}

// A number's tokens are kept as MeCab cut them (misaki's reading) when their pronunciations spell the
// number's reading; otherwise MeCab has cut the kana badly (さんびゃくさんじゅうさん as さん/びゃ/くさ/ん/...,
// read "saɴ bʲija kɯsa ɴ") and the number becomes one word read as written out.
std::vector<Word> settle_numbers(std::vector<Word> words) {
  std::vector<Word> out;
  out.reserve(words.size());
  for (size_t i = 0; i < words.size();) {
    if (words[i].number < 0) {
      out.push_back(std::move(words[i++]));
      continue;
    }
    size_t j = i;
    std::u32string kana, spoken;
    while (j < words.size() && words[j].number == words[i].number) {
      kana += words[j].surface;
      spoken += words[j].hira;
      ++j;
    }
    const std::u32string reading = number_pronunciation(kana);
    if (spoken == reading) {
      for (size_t k = i; k < j; ++k) out.push_back(std::move(words[k]));
    } else {
      Word w = std::move(words[i]);
      for (size_t k = i + 1; k < j; ++k) w.end = std::max(w.end, words[k].end);
      w.surface = kana;
      w.hira = reading;
      w.char_type = kHiragana;
      out.push_back(std::move(w));
    }
    i = j;
  }
  return out;
}

// misaki's word list joins runs of tokens of one character class into one word.
std::vector<Word> group(std::vector<Word> words, const WordList& list) {
  std::vector<Word> out;
  size_t i = 0;
  while (i < words.size()) {
    size_t z = i + 1;
    while (z < words.size() && words[z].char_type == words[i].char_type) ++z;
    // The longest run words[i..j) whose text is a listed word (no listed word is longer than
    // list.longest() characters, which bounds the search).
    size_t j = 0;
    std::u32string joined;
    std::vector<size_t> candidates;
    for (size_t k = i; k < z; ++k) {
      joined += words[k].surface;
      if (joined.size() > list.longest()) break;
      if (list.contains(utf8::encode(joined))) j = k + 1;
    }
    if (j <= i + 1) {
      out.push_back(std::move(words[i]));
      ++i;
      continue;
    }
    Word g = std::move(words[i]);
    for (size_t k = i + 1; k < j; ++k) {
      g.surface += words[k].surface;
      g.hira += words[k].hira;
      g.begin = std::min(g.begin, words[k].begin);
      g.end = std::max(g.end, words[k].end);
    }
    out.push_back(std::move(g));
    i = j;
  }
  return out;
}

// An acronym: 1 to 5 capital letters (NHK, USB, AI, the T of Tシャツ).
bool is_acronym(std::u32string_view s) {
  return !s.empty() && s.size() <= 5 && std::all_of(s.begin(), s.end(), [](char32_t c) { return c >= U'A' && c <= U'Z'; });
}

bool has_latin_letter(std::u32string_view s) {
  return std::any_of(s.begin(), s.end(), [](char32_t c) { return (c >= U'a' && c <= U'z') || (c >= U'A' && c <= U'Z'); });
}

std::u32string word_phonemes(const Word& w, const LatinReader& latin) {
  // Acronyms are spelled with the letters' Japanese names, as a Japanese reader says them (misaki passes
  // them through as written, and the model has no symbol for most capitals: "NHK" became silent).
  if (is_acronym(w.surface)) return reading_to_phonemes(katakana_to_hiragana(latin_letter_names(w.surface)));
  if (latin && is_ascii(w.surface) && has_latin_letter(w.surface)) {
    std::u32string ps = latin(w.surface);
    if (!ps.empty()) return ps;
  }
  if (is_ascii(w.surface)) return w.surface;  // other Latin text and ASCII punctuation go through as written
  if (w.char_type == kSymbol) return symbol_to_phonemes(w.surface);
  if (w.char_type != kHiragana) return U"";  // unknown kanji, letters of other scripts, emoji
  return reading_to_phonemes(w.hira);
}

struct Token {
  std::u32string phonemes;
  bool space = false;
  uint32_t begin = 0, end = 0;
};

std::vector<Token> tokens_of(const std::vector<Word>& words, const LatinReader& latin) {
  std::vector<Token> out;
  out.reserve(words.size());
  for (const Word& w : words) {
    Token t{word_phonemes(w, latin), false, w.begin, w.end};
    Token* prev = out.empty() ? nullptr : &out.back();
    if (in(U"「『«", w.surface) || in(U"([", t.phonemes)) {  // opening (and, as in misaki, silent words)
      if (prev) prev->space = true;
    } else if (in(U"」』»", w.surface) || in(U"]).,?!:", t.phonemes)) {  // closing
      if (prev) prev->space = false;
      t.space = true;
    } else {
      t.space = t.phonemes != U" ";
    }
    out.push_back(std::move(t));
  }
  for (auto& t : out) t.phonemes.erase(std::remove(t.phonemes.begin(), t.phonemes.end(), U'っ'), t.phonemes.end());
  return out;
}

bool is_py_space(char32_t c) {
  return c == U' ' || (c >= 0x09 && c <= 0x0D) || (c >= 0x1C && c <= 0x1F) || c == 0x85 || c == 0xA0 ||
         c == 0x1680 || (c >= 0x2000 && c <= 0x200A) || c == 0x2028 || c == 0x2029 || c == 0x202F ||
         c == 0x205F || c == 0x3000;
}

struct Tagged {
  char32_t c;
  int token;  // -1: a space between tokens
};

// misaki's final string: tokens joined, whitespace collapsed and stripped, ( ) -> « », no space next to ʔ
// (except after punctuation or before an opening quote). Each character keeps its token.
std::vector<Tagged> final_string(const std::vector<Token>& tokens) {
  std::vector<Tagged> raw;
  for (size_t i = 0; i < tokens.size(); ++i) {
    for (char32_t c : tokens[i].phonemes) raw.push_back({c, static_cast<int>(i)});
    if (tokens[i].space) raw.push_back({U' ', -1});
  }
  std::vector<Tagged> s;
  s.reserve(raw.size());
  for (const auto& t : raw) {
    if (is_py_space(t.c)) {
      if (!s.empty() && s.back().c != U' ') s.push_back({U' ', -1});
    } else {
      s.push_back({t.c == U'(' ? U'«' : t.c == U')' ? U'»' : t.c, t.token});
    }
  }
  if (!s.empty() && s.back().c == U' ') s.pop_back();
  std::vector<Tagged> out;
  out.reserve(s.size());
  for (size_t i = 0; i < s.size(); ++i) {
    if (s[i].c == U' ') {
      const char32_t prev = i > 0 ? s[i - 1].c : 0, next = i + 1 < s.size() ? s[i + 1].c : 0;
      const bool before_stop = next == U'ʔ' && !in(U"!\",.:;?»—…”", std::u32string(1, prev));
      const bool after_stop = prev == U'ʔ' && !in(U"\"«“", std::u32string(1, next));
      if (before_stop || after_stop) continue;
    }
    out.push_back(s[i]);
  }
  return out;
}

bool is_spoken(const std::u32string& ps) {
  static constexpr std::u32string_view kPunct = U";:,.!?—…\"“”()«»[] ";
  return std::any_of(ps.begin(), ps.end(), [](char32_t c) { return kPunct.find(c) == std::u32string_view::npos; });
}

}  // namespace

G2P::G2P(const std::string& dir, std::optional<Vocab> symbols, LatinReader latin)
    : dict_(std::make_shared<Dictionary>(dir.empty() ? find_data_dir() : dir)),
      symbols_(std::move(symbols)),
      latin_(std::move(latin)) {}

G2P::~G2P() = default;

std::vector<Unit> G2P::phonemize_line(const std::vector<utf8::CodePoint>& line) const {
  const std::vector<NormChar> norm = normalize(line);
  std::vector<Word> words;
  for (auto [b, e] : pieces_of(norm)) tag_piece(dict_->model(), norm, b, e, words);
  dict_->line_done();  // bounds the dictionary's resident pages over long sessions (Dictionary::line_done)
  const std::vector<Token> tokens = tokens_of(group(settle_numbers(std::move(words)), dict_->words()), latin_);
  const std::vector<Tagged> s = final_string(tokens);
  // Units: the space-separated pieces, split further where the token changes (so that punctuation is a
  // unit of its own for the Chunker).
  std::vector<Unit> units;
  int current = -2;
  for (const auto& t : s) {
    if (t.c == U' ') {
      if (!units.empty()) units.back().space_after = true;
      current = -2;
      continue;
    }
    if (t.token != current) {
      Unit u;
      u.text_begin = tokens[static_cast<size_t>(t.token)].begin;
      u.text_end = tokens[static_cast<size_t>(t.token)].end;
      units.push_back(std::move(u));
      current = t.token;
    }
    units.back().phonemes.push_back(t.c);
  }
  // Words read from one written form (a number: "2024" -> ɲi seɴ ɲiʥɨːjoɴ) are one word for timestamps.
  std::vector<Unit> merged;
  for (auto& u : units) {
    if (symbols_) {
      std::erase_if(u.phonemes, [&](char32_t c) { return c != U' ' && !symbols_->id(c); });
      if (u.phonemes.empty()) {
        if (!merged.empty()) merged.back().space_after = merged.back().space_after || u.space_after;
        continue;
      }
    }
    u.is_word = is_spoken(u.phonemes);
    Unit* prev = merged.empty() ? nullptr : &merged.back();
    if (prev && prev->is_word && u.is_word && prev->text_begin == u.text_begin && prev->text_end == u.text_end) {
      if (prev->space_after) prev->phonemes.push_back(U' ');
      prev->phonemes += u.phonemes;
      prev->space_after = u.space_after;
      continue;
    }
    merged.push_back(std::move(u));
  }
  return merged;
}

std::u32string G2P::phonemize(std::string_view text) const {
  std::u32string out;
  for (const Unit& u : phonemize_line(utf8::decode(text))) {
    out += u.phonemes;
    if (u.space_after) out.push_back(U' ');
  }
  return out;
}

}  // namespace kokoro::ja
