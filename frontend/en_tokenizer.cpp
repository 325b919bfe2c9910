#include "frontend/en_tokenizer.h"

#include <algorithm>
#include <string_view>
#include <unordered_set>

#include "frontend/emoji.h"
#include "frontend/unicode_text.h"

namespace kokoro::en {

namespace {

using CPs = std::vector<utf8::CodePoint>;

bool in(std::u32string_view set, char32_t c) { return set.find(c) != std::u32string_view::npos; }

// Pictographs and other symbols are split off; the degree sign stays with its number ("20°C").
bool is_split_symbol(char32_t c) { return c != U'°' && text::is_symbol_or_emoji(c); }

// Elisions written with a leading apostrophe that stay one word.
bool is_elision(const CPs& cps, size_t b, size_t e) {
  std::u32string rest;
  for (size_t i = b + 1; i < e && text::is_letter(cps[i].cp); ++i) rest.push_back(cps[i].cp);
  rest = text::lower(rest);
  return rest == U"tis" || rest == U"twas" || rest == U"em" || rest == U"cause" || rest == U"til" ||
         rest == U"bout" || rest == U"round" || rest == U"n";
}

// Characters spaCy strips from the front of a word.
bool is_prefix_char(char32_t c, char32_t next) {
  if (in(U"§%=—–,:;!?¿؟¡()[]{}<>_#*&。？！，、；：～·।،۔؛٪'\"”“`‘´’‚„»«「」『』（）〔〕【】《》〈〉⟦⟧$£€¥฿₽₹₩₪₫…", c)) return true;
  if (c == U'+' && !text::is_decimal_digit(next)) return true;
  return is_split_symbol(c);
}

// Characters spaCy strips from the end of a word (the period has its own rule).
bool is_suffix_char(char32_t c) {
  if (in(U",:;!?¿؟¡()[]{}<>_#*&。？！，、；：～·।،۔؛٪'\"”“`‘´’‚„»«「」『』（）〔〕【】《》〈〉⟦⟧…—–", c)) return true;
  return is_split_symbol(c);
}

bool is_quote(char32_t c) { return in(U"'\"”“`‘´’‚„»«", c); }
bool is_punct_class(char32_t c) {
  return in(U",:;!?¿؟¡()[]{}<>_#*&。？！，、；：～·।،۔؛٪…", c) || is_quote(c);
}

// spaCy's tokenizer exceptions that end in a period (case-sensitive).
const std::unordered_set<std::u32string>& dotted_exceptions() {
  static const std::unordered_set<std::u32string> s = {
      U"Adm.", U"Ak.", U"Ala.", U"Apr.", U"Ariz.", U"Ark.", U"Aug.", U"Bros.", U"Calif.", U"Co.", U"Colo.",
      U"Conn.", U"Corp.", U"D.C.", U"Dec.", U"Del.", U"Dr.", U"E.G.", U"E.g.", U"Feb.", U"Fla.", U"Ga.",
      U"Gen.", U"Gov.", U"I.E.", U"I.e.", U"Ia.", U"Id.", U"Ill.", U"Inc.", U"Ind.", U"Jan.", U"Jr.",
      U"Jul.", U"Jun.", U"Kan.", U"Kans.", U"Ky.", U"La.", U"Ltd.", U"Mar.", U"Mass.", U"Md.", U"Messrs.",
      U"Mich.", U"Minn.", U"Miss.", U"Mo.", U"Mont.", U"Mr.", U"Mrs.", U"Ms.", U"Mt.", U"N.C.", U"N.D.",
      U"N.H.", U"N.J.", U"N.M.", U"N.Y.", U"Neb.", U"Nebr.", U"Nev.", U"Nov.", U"Oct.", U"Okla.", U"Ore.",
      U"Pa.", U"Ph.D.", U"Prof.", U"Rep.", U"Rev.", U"S.C.", U"Sen.", U"Sep.", U"Sept.", U"St.", U"Tenn.",
      U"Va.", U"Wash.", U"Wis.", U"a.m.", U"co.", U"e.g.", U"i.e.", U"p.m.", U"v.s.", U"vs.", U"etc.",
      U"Etc.", U"No.", U"Esq.",
      // spaCy keeps "Wed." whole (it is also a spelling of "we'd").
      U"Wed."};
  return s;
}

std::u32string slice(const CPs& cps, size_t b, size_t e) {
  std::u32string s;
  s.reserve(e - b);
  for (size_t i = b; i < e; ++i) s.push_back(cps[i].cp);
  return s;
}

Token make_token(const CPs& cps, size_t b, size_t e) {
  Token t;
  t.text = slice(cps, b, e);
  t.begin = cps[b].begin;
  t.end = cps[e - 1].end;
  return t;
}

bool is_url(const std::u32string& w) {
  if (text::contains(w, U"://") && w.size() > 8) return true;
  if (text::starts_with(text::lower(w), U"www.") && w.size() > 5) return true;
  const size_t at = w.find(U'@');
  if (at != std::u32string::npos && at > 0) {
    const size_t dot = w.find(U'.', at);
    if (dot != std::u32string::npos && dot > at + 1 && dot + 1 < w.size()) return true;
  }
  return false;
}

// URLs and e-mail addresses become words: "https://www.example.com/a-b" ->
// "w w w dot example dot com slash a dash b"; letters-only parts are read by the lexicon or spelled.
void expand_url(const CPs& cps, size_t b, size_t e, std::vector<Token>& out) {
  std::u32string w = slice(cps, b, e);
  size_t start = 0;
  if (size_t scheme = w.find(U"://"); scheme != std::u32string::npos) start = scheme + 3;
  auto separator_word = [](char32_t c) -> const char32_t* {
    switch (c) {
      case U'.': return U"dot";
      case U'/': return U"slash";
      case U'@': return U"at";
      case U'-': return U"dash";
      case U'_': return U"underscore";
      case U':': return U"colon";
      case U'?': return U"question mark";
      case U'=': return U"equals";
      case U'&': return U"and";
      case U'#': return U"hash";
      case U'~': return U"tilde";
      case U'+': return U"plus";
      default: return nullptr;
    }
  };
  size_t i = b + start;
  // A trailing slash is not read.
  while (e > i && cps[e - 1].cp == U'/') --e;
  while (i < e) {
    const char32_t c = cps[i].cp;
    if (const char32_t* sep = separator_word(c)) {
      Token t = make_token(cps, i, i + 1);
      t.alias = sep;
      t.tag = "NN";
      t.space_after = true;
      out.push_back(std::move(t));
      ++i;
      continue;
    }
    size_t j = i;
    while (j < e && !separator_word(cps[j].cp)) ++j;
    Token t = make_token(cps, i, j);
    std::u32string lw = text::lower(t.text);
    if (lw == U"www") {
      t.alias = U"w w w";
    } else {
      t.alias = lw;
    }
    t.tag = "NN";
    t.space_after = true;
    out.push_back(std::move(t));
    i = j;
  }
}

bool is_hyphen(char32_t c) { return c == U'-' || c == U'–' || c == U'—' || c == U'~'; }

// Splits the middle of a word at spaCy's infixes.
void split_infixes(const CPs& cps, size_t b, size_t e, std::vector<Token>& out) {
  size_t start = b;
  auto emit = [&](size_t s, size_t t) {
    if (t > s) out.push_back(make_token(cps, s, t));
  };
  size_t i = b;
  while (i < e) {
    const char32_t c = cps[i].cp;
    const char32_t prev = i > b ? cps[i - 1].cp : 0;
    const char32_t next = i + 1 < e ? cps[i + 1].cp : 0;
    size_t len = 0;
    if (c == U'…' || is_split_symbol(c)) {
      len = 1;
    } else if (c == U'.' && next == U'.') {
      len = 1;
      while (i + len < e && cps[i + len].cp == U'.') ++len;
    } else if (i > b && i + 1 < e) {
      if (text::is_decimal_digit(prev) && in(U"+-*^", c) && (text::is_decimal_digit(next) || next == U'-')) {
        len = 1;
      } else if (c == U'.' && (text::is_lower_letter(prev) || is_quote(prev)) &&
                 (text::is_upper_letter(next) || is_quote(next))) {
        len = 1;
      } else if (c == U',' && text::is_letter(prev) && text::is_letter(next)) {
        len = 1;
      } else if (is_hyphen(c) && text::is_letter(prev)) {
        size_t k = i;
        while (k < e && is_hyphen(cps[k].cp)) ++k;
        if (k < e && text::is_letter(cps[k].cp)) len = k - i;
      } else if (in(U":<>=/", c) && (text::is_letter(prev) || text::is_decimal_digit(prev)) && text::is_letter(next)) {
        len = 1;
      }
    }
    if (len == 0) {
      ++i;
      continue;
    }
    emit(start, i);
    emit(i, i + len);
    i += len;
    start = i;
  }
  emit(start, e);
}

bool is_exception(const CPs& cps, size_t b, size_t e) {
  if (e - b < 2 || cps[e - 1].cp != U'.') return false;
  // "a." ... "z.", as in spaCy's base exceptions.
  if (e - b == 2 && ((cps[b].cp >= U'a' && cps[b].cp <= U'z') || cps[b].cp == U'ä' || cps[b].cp == U'ö' || cps[b].cp == U'ü'))
    return true;
  return dotted_exceptions().count(slice(cps, b, e)) != 0;
}

// Length of a suffix to split off [b, e), or 0.
size_t suffix_length(const CPs& cps, size_t b, size_t e) {
  const size_t n = e - b;
  const char32_t last = cps[e - 1].cp;
  if (n > 2) {
    const char32_t a = cps[e - 2].cp;
    if ((a == U'\'' || a == U'’') && (last == U's' || last == U'S')) return 2;
  }
  if (last == U'.') {
    if (n >= 2 && cps[e - 2].cp == U'.') {
      size_t k = e - 1;
      while (k > b && cps[k - 1].cp == U'.') --k;
      return e - k;
    }
    if (n < 2) return 1;
    const char32_t p = cps[e - 2].cp;
    if (text::is_decimal_digit(p) || text::is_lower_letter(p) || in(U"%²-+", p) || is_punct_class(p)) return 1;
    if (n >= 3 && text::is_upper_letter(p) && text::is_upper_letter(cps[e - 3].cp)) return 1;
    if (n >= 3 && in(U"FfCcKk", p) && cps[e - 3].cp == U'°') return 1;
    return 0;
  }
  if (last == U'+' && n >= 2 && text::is_decimal_digit(cps[e - 2].cp)) return 1;
  if (is_suffix_char(last)) return 1;
  return 0;
}

void split_chunk(const CPs& cps, size_t b, size_t e, std::vector<Token>& out) {
  {
    const std::u32string w = slice(cps, b, e);
    if (is_url(w)) {
      // Punctuation around the address stays punctuation.
      size_t s = b, t = e;
      while (s < t && in(U"(<[\"'“‘", cps[s].cp)) out.push_back(make_token(cps, s, s + 1)), ++s;
      std::vector<Token> tail;
      while (t > s && in(U".,;:!?)>]\"'”’", cps[t - 1].cp)) tail.insert(tail.begin(), make_token(cps, t - 1, t)), --t;
      if (t > s) expand_url(cps, s, t, out);
      for (auto& tk : tail) out.push_back(std::move(tk));
      return;
    }
  }
  std::vector<Token> suffixes;
  while (b < e) {
    if (is_exception(cps, b, e)) break;
    const char32_t next = b + 1 < e ? cps[b + 1].cp : 0;
    if (cps[b].cp == U'.' && next == U'.') {  // leading ellipsis
      size_t k = b;
      while (k < e && cps[k].cp == U'.') ++k;
      out.push_back(make_token(cps, b, k));
      b = k;
      continue;
    }
    const bool apostrophe = cps[b].cp == U'\'' || cps[b].cp == U'’' || cps[b].cp == U'‘';
    const bool keeps_apostrophe = apostrophe && (text::is_decimal_digit(next) || is_elision(cps, b, e));  // '98, 'Tis
    if (!keeps_apostrophe && is_prefix_char(cps[b].cp, next)) {
      size_t k = b + 1;
      // "--" and "---" stay one token.
      if (cps[b].cp == U'-' || cps[b].cp == U'—' || cps[b].cp == U'–')
        while (k < e && cps[k].cp == cps[b].cp) ++k;
      out.push_back(make_token(cps, b, k));
      b = k;
      continue;
    }
    const size_t s = suffix_length(cps, b, e);
    if (s > 0 && s < e - b) {
      suffixes.push_back(make_token(cps, e - s, e));
      e -= s;
      continue;
    }
    break;
  }
  if (b < e) {
    if (is_exception(cps, b, e) || (e - b == 1)) {
      out.push_back(make_token(cps, b, e));
    } else {
      split_infixes(cps, b, e, out);
    }
  }
  for (auto it = suffixes.rbegin(); it != suffixes.rend(); ++it) out.push_back(std::move(*it));
}

// The emoji sequence at i ("👩‍🚒", "👍🏽", "🇯🇵", "1️⃣"), which is one token whatever surrounds it.
size_t emoji_length(const CPs& line, size_t i) {
  const char32_t c = line[i].cp;
  if (c < 0x80 && !(text::is_ascii_digit(c) || c == U'#' || c == U'*')) return 0;
  return emoji::sequence_length(line, i);
}

}  // namespace

std::vector<Token> tokenize_line(const std::vector<utf8::CodePoint>& line) {
  std::vector<Token> out;
  size_t i = 0;
  const size_t n = line.size();
  while (i < n) {
    while (i < n && text::is_space(line[i].cp)) ++i;
    if (i >= n) break;
    const size_t before = out.size();
    // Up to the next space; emoji sequences are cut out whole (a zero-width joiner inside one is no gap).
    size_t j = i, start = i;
    while (j < n) {
      if (const size_t len = emoji_length(line, j)) {
        if (j > start) split_chunk(line, start, j, out);
        out.push_back(make_token(line, j, j + len));
        j += len;
        start = j;
        continue;
      }
      if (text::is_space(line[j].cp)) break;
      ++j;
    }
    if (j > start) split_chunk(line, start, j, out);
    if (out.size() > before) out.back().space_after = j < n;
    i = j;
  }
  return out;
}

}  // namespace kokoro::en
