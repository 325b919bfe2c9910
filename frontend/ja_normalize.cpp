#include "frontend/ja_normalize.h"

#include <unicode/normalizer2.h>
#include <unicode/uchar.h>
#include <unicode/unistr.h>

#include <string>

#include "core/error.h"
#include "frontend/ja_numbers.h"

namespace kokoro::ja {

namespace {

bool is_wave_dash(char32_t c) { return c == U'〜' || c == U'～'; }

// misaki tests for a digit after the dash before NFKC: any Unicode decimal digit.
bool is_digit(char32_t c) { return u_isdigit(static_cast<UChar32>(c)); }

char32_t phonetic_extension(char32_t c) {
  // U+31F0..U+31FF: small katakana for Ainu; read as the full-size kana.
  static constexpr char32_t kFull[] = {U'ク', U'シ', U'ス', U'ト', U'ヌ', U'ハ', U'ヒ', U'フ',
                                       U'ヘ', U'ホ', U'ム', U'ラ', U'リ', U'ル', U'レ', U'ロ'};
  return c >= 0x31F0 && c <= 0x31FF ? kFull[c - 0x31F0] : c;
}

const icu::Normalizer2& nfkc() {
  UErrorCode status = U_ZERO_ERROR;
  const icu::Normalizer2* n = icu::Normalizer2::getNFKCInstance(status);
  if (U_FAILURE(status) || !n) throw Error("ICU: no NFKC normalizer");
  return *n;
}

// NFKC of a run of characters that normalizes independently of its neighbours.
void append_nfkc(const icu::Normalizer2& n, const std::vector<NormChar>& run, std::vector<NormChar>& out) {
  if (run.empty()) return;
  if (run.size() == 1 && run[0].cp < 0x80) {
    out.push_back(run[0]);
    return;
  }
  icu::UnicodeString s;
  for (const auto& c : run) s.append(static_cast<UChar32>(c.cp));
  UErrorCode status = U_ZERO_ERROR;
  const icu::UnicodeString r = n.normalize(s, status);
  const uint32_t b = run.front().begin, e = run.back().end;
  if (U_FAILURE(status)) {
    out.insert(out.end(), run.begin(), run.end());
    return;
  }
  for (int32_t i = 0; i < r.length();) {
    const UChar32 c = r.char32At(i);
    out.push_back({static_cast<char32_t>(c), b, e});
    i += U16_LENGTH(c);
  }
}

}  // namespace

std::vector<NormChar> normalize(const std::vector<utf8::CodePoint>& line) {
  // 1. Ranges written with a wave dash, phonetic extensions, control characters.
  std::vector<NormChar> pre;
  pre.reserve(line.size() + 8);
  for (size_t i = 0; i < line.size(); ++i) {
    const auto& c = line[i];
    if (is_wave_dash(c.cp) && i + 1 < line.size() && is_digit(line[i + 1].cp)) {
      pre.push_back({U'か', c.begin, c.end});
      pre.push_back({U'ら', c.begin, c.end});
      continue;
    }
    char32_t cp = phonetic_extension(c.cp);
    if (cp < 0x20 || (cp >= 0x7F && cp < 0xA0)) cp = U' ';
    pre.push_back({cp, c.begin, c.end});
  }
  // 2. NFKC, run by run between normalization boundaries so that each output character keeps its source.
  const icu::Normalizer2& n = nfkc();
  std::vector<NormChar> norm;
  norm.reserve(pre.size() + 8);
  std::vector<NormChar> run;
  for (const auto& c : pre) {
    if (!run.empty() && n.hasBoundaryBefore(static_cast<UChar32>(c.cp))) {
      append_nfkc(n, run, norm);
      run.clear();
    }
    run.push_back(c);
  }
  append_nfkc(n, run, norm);
  // 3. mojimoji's full-width -> half-width pass changes only these after NFKC.
  for (auto& c : norm) {
    if (c.cp == U'‘') c.cp = U'`';
    else if (c.cp == U'’') c.cp = U'\'';
    else if (c.cp == U'”') c.cp = U'"';
  }
  // 4. Digit runs -> " " + kana reading (ASCII digits: NFKC has mapped the full-width ones).
  std::vector<NormChar> out;
  out.reserve(norm.size() + 16);
  int32_t numbers = 0;
  for (size_t i = 0; i < norm.size();) {
    if (norm[i].cp < U'0' || norm[i].cp > U'9') {
      out.push_back(norm[i++]);
      continue;
    }
    size_t j = i;
    std::string digits;
    while (j < norm.size() && norm[j].cp >= U'0' && norm[j].cp <= U'9') digits.push_back(static_cast<char>(norm[j++].cp));
    const uint32_t b = norm[i].begin, e = norm[j - 1].end;
    out.push_back({U' ', b, b});
    for (char32_t k : number_to_kana(digits)) out.push_back({k, b, e, numbers});
    ++numbers;
    i = j;
  }
  return out;
}

}  // namespace kokoro::ja
