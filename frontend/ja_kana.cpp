#include "frontend/ja_kana.h"

#include <unordered_map>

namespace kokoro::ja {

namespace {

using Table = std::unordered_map<std::u32string, std::u32string>;

// Adds one row of the syllabary: `kana` holds the row's characters, `ps` their phonemes separated by
// spaces (same order).
void add_row(Table& t, std::u32string_view kana, std::u32string_view ps) {
  size_t pos = 0;
  for (char32_t k : kana) {
    size_t end = ps.find(U' ', pos);
    if (end == std::u32string_view::npos) end = ps.size();
    t[std::u32string(1, k)] = std::u32string(ps.substr(pos, end - pos));
    pos = end + 1;
  }
}

// Kana followed by a small kana that form one syllable (pairs whose reading is not simply the first
// kana's consonant + the small kana's vowel, plus the regular palatal rows).
void add_pairs(Table& t, char32_t first, std::u32string_view seconds, std::u32string_view ps) {
  size_t pos = 0;
  for (char32_t s : seconds) {
    size_t end = ps.find(U' ', pos);
    if (end == std::u32string_view::npos) end = ps.size();
    t[std::u32string{first, s}] = std::u32string(ps.substr(pos, end - pos));
    pos = end + 1;
  }
}

Table build_table() {
  Table t;
  // Plain syllables. u-column vowels are ɯ (ɨ after s, z, ts and in palatal contractions).
  add_row(t, U"ぁあぃいぅうぇえぉお", U"a a i i ɯ ɯ e e o o");
  add_row(t, U"かきくけこ", U"ka kʲi kɯ ke ko");
  add_row(t, U"がぎぐげご", U"ɡa ɡʲi ɡɯ ɡe ɡo");
  add_row(t, U"さしすせそ", U"sa ɕi sɨ se so");
  add_row(t, U"ざじずぜぞ", U"ʣa ʥi zɨ ʣe ʣo");
  add_row(t, U"たちつてと", U"ta ʨi ʦɨ te to");
  add_row(t, U"だぢづでど", U"da ʥi zɨ de do");
  add_row(t, U"なにぬねの", U"na ɲi nɯ ne no");
  add_row(t, U"はひふへほ", U"ha çi ɸɯ he ho");
  add_row(t, U"ばびぶべぼ", U"ba bʲi bɯ be bo");
  add_row(t, U"ぱぴぷぺぽ", U"pa pʲi pɯ pe po");
  add_row(t, U"まみむめも", U"ma mʲi mɯ me mo");
  add_row(t, U"ゃやゅゆょよ", U"ja ja jɯ jɯ jo jo");
  add_row(t, U"らりるれろ", U"ɾa ɾʲi ɾɯ ɾe ɾo");
  add_row(t, U"ゎわゐゑを", U"βa βa i e o");
  add_row(t, U"ゔゕゖ", U"vɯ ka ke");
  add_row(t, U"ヷヸヹヺ", U"va vʲi ve vo");  // katakana only (no hiragana forms)

  // Contracted syllables.
  add_pairs(t, U'い', U"ぇ", U"je");
  add_pairs(t, U'う', U"ぃぇぉ", U"βi βe βo");
  add_pairs(t, U'き', U"ぇゃゅょ", U"kʲe kʲa kʲɨ kʲo");
  add_pairs(t, U'ぎ', U"ゃゅょ", U"ɡʲa ɡʲɨ ɡʲo");
  add_pairs(t, U'く', U"ぁぃぇぉ", U"kᵝa kᵝi kᵝe kᵝo");
  add_pairs(t, U'ぐ', U"ぁぃぇぉ", U"ɡᵝa ɡᵝi ɡᵝe ɡᵝo");
  add_pairs(t, U'し', U"ぇゃゅょ", U"ɕe ɕa ɕɨ ɕo");
  add_pairs(t, U'じ', U"ぇゃゅょ", U"ʥe ʥa ʥɨ ʥo");
  add_pairs(t, U'ち', U"ぇゃゅょ", U"ʨe ʨa ʨɨ ʨo");
  add_pairs(t, U'ぢ', U"ゃゅょ", U"ʥa ʥɨ ʥo");
  add_pairs(t, U'つ', U"ぁぃぇぉ", U"ʦa ʦʲi ʦe ʦo");
  add_pairs(t, U'て', U"ぃゅ", U"tʲi tʲɨ");
  add_pairs(t, U'で', U"ぃゅ", U"dʲi dʲɨ");
  add_pairs(t, U'と', U"ぅ", U"tɯ");
  add_pairs(t, U'ど', U"ぅ", U"dɯ");
  add_pairs(t, U'に', U"ぇゃゅょ", U"ɲe ɲa ɲɨ ɲo");
  add_pairs(t, U'ひ', U"ぇゃゅょ", U"çe ça çɨ ço");
  add_pairs(t, U'び', U"ゃゅょ", U"bʲa bʲɨ bʲo");
  add_pairs(t, U'ぴ', U"ゃゅょ", U"pʲa pʲɨ pʲo");
  add_pairs(t, U'ふ', U"ぁぃぇぉゅょ", U"ɸa ɸʲi ɸe ɸo ɸʲɨ ɸʲo");
  add_pairs(t, U'み', U"ゃゅょ", U"mʲa mʲɨ mʲo");
  add_pairs(t, U'り', U"ゃゅょ", U"ɾʲa ɾʲɨ ɾʲo");
  add_pairs(t, U'ゔ', U"ぁぃぇぉゅょ", U"va vʲi ve vo bʲɨ bʲo");

  // Punctuation and symbols as misaki reads them (after NFKC, which has already turned full-width
  // ASCII forms into ASCII).
  add_row(t, U"。、？！「」『』：；（）《》【】，～〜—«»", U". , ? ! “ ” “ ” : ; ( ) ( ) [ ] , — — — “ ”");
  t[U"・"] = U" ";
  t[U"\u309A"] = U"";  // a combining (han)dakuten on its own is dropped
  t[U"\u3099"] = U"";
  return t;
}

const Table& table() {
  static const Table t = build_table();
  return t;
}

const std::u32string* lookup(std::u32string_view key) {
  const auto& t = table();
  auto it = t.find(std::u32string(key));
  return it == t.end() ? nullptr : &it->second;
}

bool is_small_kana(char32_t c) { return std::u32string_view(U"ゃゅょぁぃぅぇぉ").find(c) != std::u32string_view::npos; }

// ゞ: the previous kana with a dakuten.
char32_t voiced(char32_t c) {
  static constexpr std::u32string_view plain = U"かきくけこさしすせそたちつてとはひふへほ";
  static constexpr std::u32string_view with = U"がぎぐげござじずぜぞだぢづでどばびぶべぼ";
  const size_t i = plain.find(c);
  return i == std::u32string_view::npos ? 0 : with[i];
}

bool starts_with_any(const std::u32string& s, std::u32string_view chars) {
  return !s.empty() && chars.find(s[0]) != std::u32string_view::npos;
}

// One kana with its neighbours (0 when there is none), as misaki's Cutlet._get_single_mapping.
std::u32string map_one(char32_t prev, char32_t kana, char32_t next) {
  // Iteration marks: ゝ repeats the previous kana (misaki returns the kana itself, which no
  // vocabulary symbol matches: silent), ゞ repeats it voiced; 々 and 〃 are left unread.
  if (kana == U'〃' || kana == U'々' || kana == U'ゝ' || kana == U'ゞ' || kana == U'ヽ') {
    if (kana == U'ゝ' || kana == U'ヽ') return prev ? std::u32string(1, prev) : U"";
    if (kana == U'ゞ') {
      const char32_t v = prev ? voiced(prev) : 0;
      const std::u32string* ps = v ? lookup(std::u32string(1, v)) : nullptr;
      return ps ? *ps : U"";
    }
    return U"";
  }
  if (prev) {
    if (const std::u32string* ps = lookup(std::u32string{prev, kana})) return *ps;
  }
  if (next) {
    if (lookup(std::u32string{kana, next})) return U"";  // the pair is read at its second kana
    if (is_small_kana(next)) {
      if (kana == U'っ') return U"";
      const std::u32string* first = lookup(std::u32string(1, kana));
      const std::u32string* second = lookup(std::u32string(1, next));
      // The kana's consonant with the small kana's syllable (misaki fails on kana outside its table
      // here, e.g. ん before a small kana; those are read as usual instead).
      if (first && second) return first->substr(0, first->empty() ? 0 : first->size() - 1) + *second;
    }
  }
  if (is_small_kana(kana)) return U"";
  if (kana == U'ー') return U"ː";
  if (kana == U'っ') return U"ʔ";
  if (kana == U'ん') {
    const std::u32string* n = next ? lookup(std::u32string(1, next)) : nullptr;
    if (n) {
      if (starts_with_any(*n, U"mpb")) return U"m";
      if (starts_with_any(*n, U"kɡ")) return U"ŋ";
      if (starts_with_any(*n, U"ɲʨʥ")) return U"ɲ";
      if (starts_with_any(*n, U"ntdɾz")) return U"n";
    }
    return U"ɴ";
  }
  const std::u32string* ps = lookup(std::u32string(1, kana));
  return ps ? *ps : U"";
}

}  // namespace

std::u32string katakana_to_hiragana(std::u32string_view s) {
  std::u32string out(s);
  for (char32_t& c : out) {
    if (c >= 0x30A1 && c <= 0x30F6) c -= 0x60;
    else if (c == U'ヽ' || c == U'ヾ') c -= 0x60;
  }
  return out;
}

std::u32string reading_to_phonemes(std::u32string_view hira) {
  std::u32string out;
  for (size_t i = 0; i < hira.size(); ++i) {
    const char32_t prev = i > 0 ? hira[i - 1] : 0;
    const char32_t next = i + 1 < hira.size() ? hira[i + 1] : 0;
    out += map_one(prev, hira[i], next);
  }
  return out;
}

std::u32string latin_letter_names(std::u32string_view capitals) {
  static const char32_t* const kNames[26] = {
      U"エー", U"ビー", U"シー", U"ディー", U"イー", U"エフ", U"ジー", U"エイチ", U"アイ", U"ジェー", U"ケー", U"エル", U"エム",
      U"エヌ", U"オー", U"ピー", U"キュー", U"アール", U"エス", U"ティー", U"ユー", U"ブイ", U"ダブリュー", U"エックス", U"ワイ", U"ゼット"};
  std::u32string out;
  for (char32_t c : capitals)
    if (c >= U'A' && c <= U'Z') out += kNames[c - U'A'];
  return out;
}

std::u32string symbol_to_phonemes(std::u32string_view symbols) {
  std::u32string out;
  for (char32_t c : symbols) {
    const std::u32string* ps = lookup(std::u32string(1, c));
    if (ps) out += *ps;
    else out.push_back(c);
  }
  return out;
}

}  // namespace kokoro::ja
