#include "frontend/lexicon.h"

#include <algorithm>
#include <map>

#include "core/error.h"
#include "frontend/lexicon_binary.h"
#include "frontend/number_words.h"
#include "frontend/stress.h"
#include "frontend/unicode_text.h"
#include "frontend/utf8.h"

namespace kokoro::en {

namespace {

using text::contains;
using text::ends_with;

const std::map<char32_t, std::pair<const char32_t*, const char32_t*>>& currencies() {
  static const std::map<char32_t, std::pair<const char32_t*, const char32_t*>> m = {
      {U'$', {U"dollar", U"cent"}}, {U'£', {U"pound", U"pence"}}, {U'€', {U"euro", U"cent"}}};
  return m;
}

const char32_t* symbol_word(const std::u32string& w) {
  if (w == U"%") return U"percent";
  if (w == U"&") return U"and";
  if (w == U"+") return U"plus";
  if (w == U"@") return U"at";
  return nullptr;
}

bool in_lexicon_ords(char32_t c) { return c == U'\'' || c == U'-' || text::is_ascii_letter(c); }
bool all_lexicon_ords(const std::u32string& w) { return std::all_of(w.begin(), w.end(), in_lexicon_ords); }

bool is_ordinal_suffix(const std::u32string& s) {
  return s == U"st" || s == U"nd" || s == U"rd" || s == U"th";
}

constexpr std::u32string_view kUsTaus = U"AIOWYiuæɑəɛɪɹʊʌ";

constexpr BinaryLexicon::Dict kGold = BinaryLexicon::gold;
constexpr BinaryLexicon::Dict kSilver = BinaryLexicon::silver;

std::u32string join_words(const std::vector<Reading>& parts) {
  std::u32string out;
  bool first = true;
  for (const auto& p : parts) {
    if (!p.phonemes) continue;
    if (!first) out.push_back(U' ');
    out += *p.phonemes;
    first = false;
  }
  return out;
}

}  // namespace

std::string parent_tag(const std::string& tag) {
  if (tag.rfind("VB", 0) == 0) return "VERB";
  if (tag.rfind("NN", 0) == 0) return "NOUN";
  if (tag.rfind("ADV", 0) == 0 || tag.rfind("RB", 0) == 0) return "ADV";
  if (tag.rfind("ADJ", 0) == 0 || tag.rfind("JJ", 0) == 0) return "ADJ";
  return tag;
}

bool Lexicon::in_gold(const std::u32string& w) const { return data_->dicts->contains(kGold, w); }

bool Lexicon::is_heteronym(const std::u32string& w) const {
  std::optional<LexiconEntry> e = data_->dicts->find(kGold, w);
  return e && e->is_heteronym();
}

Reading Lexicon::spell_letters(const std::u32string& word) const {
  std::u32string ps;
  for (char32_t c : word) {
    if (!text::is_letter(c)) continue;
    std::optional<LexiconEntry> e = data_->dicts->find(kGold, text::upper(std::u32string(1, c)));
    if (!e) return {};
    if (e->plain) {
      ps += *e->plain;
    } else {
      for (const auto& [tag, v] : e->by_tag)
        if (tag == "DEFAULT" && v) ps += *v;
    }
  }
  ps = apply_stress(ps, 0);
  const size_t last = ps.rfind(kSecondaryStress);
  if (last != std::u32string::npos) ps[last] = kPrimaryStress;
  return {ps, 3};
}

Reading Lexicon::lookup(std::u32string word, std::optional<std::string> tag, std::optional<double> stress,
                        const TokenContext* ctx) const {
  bool is_nnp = false;
  if (word == text::upper(word) && !data_->dicts->contains(kGold, word)) {
    word = text::lower(word);
    is_nnp = tag && *tag == "NNP";
  }
  std::optional<LexiconEntry> e = data_->dicts->find(kGold, word);
  int rating = 4;
  if (!e && !is_nnp) {
    e = data_->dicts->find(kSilver, word);
    rating = 3;
  }
  std::optional<std::u32string> ps;
  if (e && e->plain) {
    ps = e->plain;
  } else if (e) {
    auto has = [&](const std::string& t) {
      return std::any_of(e->by_tag.begin(), e->by_tag.end(), [&](const auto& kv) { return kv.first == t; });
    };
    std::string t = tag.value_or("");
    if (ctx && !ctx->future_vowel && has("None")) {
      t = "None";
    } else if (!tag || !has(t)) {
      t = tag ? parent_tag(*tag) : "";
    }
    if (!has(t)) t = "DEFAULT";
    for (const auto& [k, v] : e->by_tag)
      if (k == t) ps = v;
  }
  if (!ps || (is_nnp && !contains(*ps, kPrimaryStress))) {
    Reading r = spell_letters(word);
    if (r.found()) return r;
  }
  if (!ps) return {std::nullopt, rating};
  return {apply_stress(*ps, stress), rating};
}

Reading Lexicon::special_case(const std::u32string& word, const std::string& tag,
                              std::optional<double> stress, const TokenContext& ctx) const {
  if (tag == "ADD" && (word == U"." || word == U"/"))
    return lookup(word == U"." ? U"dot" : U"slash", std::nullopt, -0.5, &ctx);
  if (const char32_t* sym = symbol_word(word)) return lookup(sym, std::nullopt, std::nullopt, &ctx);
  {
    // Dotted abbreviations of short parts ("e.g.", "U.S.") are spelled out.
    std::u32string stripped = word;
    while (!stripped.empty() && stripped.front() == U'.') stripped.erase(0, 1);
    while (!stripped.empty() && stripped.back() == U'.') stripped.pop_back();
    std::u32string no_dots;
    size_t longest = 0, cur = 0;
    for (char32_t c : word) {
      if (c == U'.') {
        longest = std::max(longest, cur);
        cur = 0;
      } else {
        no_dots.push_back(c);
        ++cur;
      }
    }
    longest = std::max(longest, cur);
    if (contains(stripped, U'.') && text::is_alpha(no_dots) && longest < 3) return spell_letters(word);
  }
  if (word == U"a" || word == U"A") return {tag == "DT" ? U"ɐ" : U"ˈA", 4};
  if (word == U"am" || word == U"Am" || word == U"AM") {
    if (tag.rfind("NN", 0) == 0) return spell_letters(word);
    if (!ctx.future_vowel.has_value() || word != U"am" || (stress && *stress > 0))
      return {data_->dicts->find(kGold, U"am")->plain, 4};
    return {U"ɐm", 4};
  }
  if (word == U"an" || word == U"An" || word == U"AN") {
    if (word == U"AN" && tag.rfind("NN", 0) == 0) return spell_letters(word);
    return {U"ɐn", 4};
  }
  if (word == U"I" && tag == "PRP") return {U"ˌI", 4};
  if ((word == U"by" || word == U"By" || word == U"BY") && parent_tag(tag) == "ADV") return {U"bˈI", 4};
  if (word == U"to" || word == U"To" || (word == U"TO" && (tag == "TO" || tag == "IN"))) {
    if (!ctx.future_vowel) return {data_->dicts->find(kGold, U"to")->plain, 4};
    return {*ctx.future_vowel ? U"tʊ" : U"tə", 4};
  }
  if (word == U"in" || word == U"In" || (word == U"IN" && tag != "NNP")) {
    const bool stressed = !ctx.future_vowel.has_value() || tag != "IN";
    return {stressed ? U"ˈɪn" : U"ɪn", 4};
  }
  if (word == U"the" || word == U"The" || (word == U"THE" && tag == "DT"))
    return {ctx.future_vowel == true ? U"ði" : U"ðə", 4};
  if (tag == "IN") {
    const std::u32string l = text::lower(word);
    if (l == U"vs" || l == U"vs.") return lookup(U"versus", std::nullopt, std::nullopt, &ctx);
  }
  if (word == U"used" || word == U"Used" || word == U"USED") {
    std::optional<LexiconEntry> e = data_->dicts->find(kGold, U"used");
    const std::string want = ((tag == "VBD" || tag == "JJ") && ctx.future_to) ? "VBD" : "DEFAULT";
    for (const auto& [k, v] : e->by_tag)
      if (k == want) return {v, 4};
  }
  return {};
}

bool Lexicon::is_known(const std::u32string& word) const {
  if (data_->dicts->contains(kGold, word) || symbol_word(word) || data_->dicts->contains(kSilver, word)) return true;
  if (!text::is_alpha(word) || !all_lexicon_ords(word)) return false;
  if (word.size() == 1) return true;
  if (word == text::upper(word) && data_->dicts->contains(kGold, text::lower(word))) return true;
  const std::u32string rest = word.substr(1);
  return rest == text::upper(rest);
}

std::optional<std::u32string> Lexicon::add_s(const std::optional<std::u32string>& stem) const {
  if (!stem || stem->empty()) return std::nullopt;
  const char32_t last = stem->back();
  if (std::u32string_view(U"ptkfθ").find(last) != std::u32string_view::npos) return *stem + U"s";
  if (std::u32string_view(U"szʃʒʧʤ").find(last) != std::u32string_view::npos)
    return *stem + (british() ? U"ɪz" : U"ᵻz");
  return *stem + U"z";
}

std::optional<std::u32string> Lexicon::add_ed(const std::optional<std::u32string>& stem) const {
  if (!stem || stem->empty()) return std::nullopt;
  const std::u32string& s = *stem;
  const char32_t last = s.back();
  if (std::u32string_view(U"pkfθʃsʧ").find(last) != std::u32string_view::npos) return s + U"t";
  if (last == U'd') return s + (british() ? U"ɪd" : U"ᵻd");
  if (last != U't') return s + U"d";
  if (british() || s.size() < 2) return s + U"ɪd";
  if (kUsTaus.find(s[s.size() - 2]) != std::u32string_view::npos) return s.substr(0, s.size() - 1) + U"ɾᵻd";
  return s + U"ᵻd";
}

std::optional<std::u32string> Lexicon::add_ing(const std::optional<std::u32string>& stem) const {
  if (!stem || stem->empty()) return std::nullopt;
  const std::u32string& s = *stem;
  if (british()) {
    if (s.back() == U'ə' || s.back() == U'ː') return std::nullopt;
  } else if (s.size() > 1 && s.back() == U't' && kUsTaus.find(s[s.size() - 2]) != std::u32string_view::npos) {
    return s.substr(0, s.size() - 1) + U"ɾɪŋ";
  }
  return s + U"ɪŋ";
}

Reading Lexicon::stem_s(const std::u32string& word, const std::string& tag, std::optional<double> stress,
                        const TokenContext* ctx) const {
  if (word.size() < 3 || word.back() != U's') return {};
  std::u32string stem;
  if (!ends_with(word, U"ss") && is_known(word.substr(0, word.size() - 1))) {
    stem = word.substr(0, word.size() - 1);
  } else if ((ends_with(word, U"'s") || (word.size() > 4 && ends_with(word, U"es") && !ends_with(word, U"ies"))) &&
             is_known(word.substr(0, word.size() - 2))) {
    stem = word.substr(0, word.size() - 2);
  } else if (word.size() > 4 && ends_with(word, U"ies") && is_known(word.substr(0, word.size() - 3) + U"y")) {
    stem = word.substr(0, word.size() - 3) + U"y";
  } else {
    return {};
  }
  Reading r = lookup(stem, tag, stress, ctx);
  return {add_s(r.phonemes), r.rating};
}

Reading Lexicon::stem_ed(const std::u32string& word, const std::string& tag, std::optional<double> stress,
                         const TokenContext* ctx) const {
  if (word.size() < 4 || word.back() != U'd') return {};
  std::u32string stem;
  if (!ends_with(word, U"dd") && is_known(word.substr(0, word.size() - 1))) {
    stem = word.substr(0, word.size() - 1);
  } else if (word.size() > 4 && ends_with(word, U"ed") && !ends_with(word, U"eed") &&
             is_known(word.substr(0, word.size() - 2))) {
    stem = word.substr(0, word.size() - 2);
  } else {
    return {};
  }
  Reading r = lookup(stem, tag, stress, ctx);
  return {add_ed(r.phonemes), r.rating};
}

Reading Lexicon::stem_ing(const std::u32string& word, const std::string& tag, std::optional<double> stress,
                          const TokenContext* ctx) const {
  if (word.size() < 5 || !ends_with(word, U"ing")) return {};
  const std::u32string base = word.substr(0, word.size() - 3);
  std::u32string stem;
  auto doubled_consonant = [&]() {
    // ([bcdgklmnprstvxz])\1ing$ or cking$
    if (ends_with(word, U"cking")) return true;
    if (word.size() < 5) return false;
    const char32_t a = word[word.size() - 5], b = word[word.size() - 4];
    return a == b && std::u32string_view(U"bcdgklmnprstvxz").find(a) != std::u32string_view::npos;
  };
  if (word.size() > 5 && is_known(base)) {
    stem = base;
  } else if (is_known(base + U"e")) {
    stem = base + U"e";
  } else if (word.size() > 5 && doubled_consonant() && is_known(word.substr(0, word.size() - 4))) {
    stem = word.substr(0, word.size() - 4);
  } else {
    return {};
  }
  Reading r = lookup(stem, tag, stress, ctx);
  return {add_ing(r.phonemes), r.rating};
}

Reading Lexicon::get_word(std::u32string word, const std::string& tag, std::optional<double> stress,
                          const TokenContext& ctx) const {
  if (Reading r = special_case(word, tag, stress, ctx); r.found()) return r;
  const std::u32string wl = text::lower(word);
  if (word.size() > 1 && word != wl && (tag != "NNP" || word.size() > 7) && !data_->dicts->contains(kGold, word) &&
      !data_->dicts->contains(kSilver, word)) {
    std::u32string no_apos = word;
    no_apos.erase(std::remove(no_apos.begin(), no_apos.end(), U'\''), no_apos.end());
    const std::u32string rest = word.substr(1);
    if (text::is_alpha(no_apos) && (word == text::upper(word) || rest == text::lower(rest))) {
      auto nonempty = [](const Reading& r) { return r.phonemes && !r.phonemes->empty(); };
      if (data_->dicts->contains(kGold, wl) || data_->dicts->contains(kSilver, wl) || nonempty(stem_s(wl, tag, stress, &ctx)) ||
          nonempty(stem_ed(wl, tag, stress, &ctx)) || nonempty(stem_ing(wl, tag, stress, &ctx)))
        word = wl;
    }
  }
  if (is_known(word)) return lookup(word, tag, stress, &ctx);
  if (ends_with(word, U"s'") && is_known(word.substr(0, word.size() - 2) + U"'s"))
    return lookup(word.substr(0, word.size() - 2) + U"'s", tag, stress, &ctx);
  if (ends_with(word, U"'") && is_known(word.substr(0, word.size() - 1)))
    return lookup(word.substr(0, word.size() - 1), tag, stress, &ctx);
  if (Reading r = stem_s(word, tag, stress, &ctx); r.found()) return r;
  if (Reading r = stem_ed(word, tag, stress, &ctx); r.found()) return r;
  if (Reading r = stem_ing(word, tag, stress ? stress : std::optional<double>(0.5), &ctx); r.found()) return r;
  return {};
}

bool Lexicon::is_number(const std::u32string& word_in, bool is_head) {
  if (!std::any_of(word_in.begin(), word_in.end(), text::is_ascii_digit)) return false;
  std::u32string_view word = word_in;
  for (std::u32string_view s : {U"ing", U"'d", U"ed", U"'s", U"st", U"nd", U"rd", U"th", U"s"}) {
    if (ends_with(word, s)) {
      word.remove_suffix(s.size());
      break;
    }
  }
  for (size_t i = 0; i < word.size(); ++i) {
    const char32_t c = word[i];
    if (!(text::is_ascii_digit(c) || c == U',' || c == U'.' || (is_head && i == 0 && c == U'-'))) return false;
  }
  return true;
}

Reading Lexicon::get_number(std::u32string word, char32_t currency, bool is_head) const {
  // Trailing lower-case letters or apostrophes: an ordinal or a suffix ("3rd", "1990s", "80's").
  size_t cut = word.size();
  while (cut > 0 && ((word[cut - 1] >= U'a' && word[cut - 1] <= U'z') || word[cut - 1] == U'\'')) --cut;
  const std::u32string suffix = word.substr(cut);
  word.resize(cut);
  std::vector<Reading> result;
  auto say = [&](const std::string& w, std::optional<double> stress = std::nullopt) {
    result.push_back(lookup(utf8::to_u32(w), std::nullopt, stress, nullptr));
  };
  auto say_words = [&](const Words& words) {
    for (const auto& w : words) say(w, w == "point" ? std::optional<double>(-2) : std::nullopt);
  };
  auto ascii = [](std::u32string_view s) {
    std::string out;
    for (char32_t c : s) out.push_back(static_cast<char>(c));
    return out;
  };
  auto without_commas = [](std::u32string s) {
    s.erase(std::remove(s.begin(), s.end(), U','), s.end());
    return s;
  };
  if (!word.empty() && word[0] == U'-') {
    say("minus");
    word.erase(0, 1);
  }
  const bool digits_only = text::is_all_ascii_digits(word);
  const bool has_dot = contains(word, U'.');
  const auto cur = currencies().find(currency);
  if (digits_only && is_ordinal_suffix(suffix)) {
    say_words(ordinal_words(ascii(word)));
  } else if (result.empty() && word.size() == 4 && cur == currencies().end() && digits_only) {
    say_words(year_words(ascii(word)));
  } else if (!is_head && !has_dot) {
    const std::string num = ascii(without_commas(word));
    if (num.empty()) return {};
    if (num[0] == '0' || num.size() > 3) {
      say_words(digit_words(num));
    } else if (num.size() == 3 && num.substr(1) != "00") {
      say_words(cardinal_words(num.substr(0, 1)));
      if (num[1] == '0') {
        result.push_back(lookup(U"O", std::nullopt, -2, nullptr));
        say_words(digit_words(num.substr(2)));
      } else {
        say_words(cardinal_words(num.substr(1)));
      }
    } else {
      say_words(cardinal_words(num));
    }
  } else if (std::count(word.begin(), word.end(), U'.') > 1 || !is_head) {
    const std::string all = ascii(without_commas(word));
    size_t start = 0;
    while (start <= all.size()) {
      size_t dot = all.find('.', start);
      if (dot == std::string::npos) dot = all.size();
      const std::string part = all.substr(start, dot - start);
      if (!part.empty()) {
        const bool nonzero_tail = part.find_first_not_of('0', 1) != std::string::npos;
        if (part[0] == '0' || (part.size() != 2 && nonzero_tail)) {
          say_words(digit_words(part));
        } else {
          say_words(cardinal_words(part));
        }
      }
      start = dot + 1;
    }
  } else if (cur != currencies().end() &&
             (!has_dot || word.size() - word.find(U'.') - 1 < 3)) {
    const std::string num = ascii(without_commas(word));
    const size_t dot = num.find('.');
    std::vector<std::pair<std::string, const char32_t*>> pairs;
    pairs.emplace_back(num.substr(0, dot), cur->second.first);
    if (dot != std::string::npos) pairs.emplace_back(num.substr(dot + 1), cur->second.second);
    auto is_zero = [](const std::string& s) { return s.find_first_not_of('0') == std::string::npos; };
    if (pairs.size() > 1) {
      if (is_zero(pairs[1].first)) {
        pairs.resize(1);
      } else if (is_zero(pairs[0].first)) {
        pairs.erase(pairs.begin());
      }
    }
    for (size_t i = 0; i < pairs.size(); ++i) {
      const auto& [digits, unit] = pairs[i];
      if (i > 0) say("and");
      say_words(is_zero(digits) ? Words{"zero"} : cardinal_words(digits));
      const bool one = digits.find_first_not_of('0') != std::string::npos &&
                       digits.substr(digits.find_first_not_of('0')) == "1";
      const std::u32string u = unit;
      if (!one && u != U"pence") {
        result.push_back(stem_s(u + U"s", "", std::nullopt, nullptr));
      } else {
        result.push_back(lookup(u, std::nullopt, std::nullopt, nullptr));
      }
    }
  } else {
    const std::string num = ascii(without_commas(word));
    if (digits_only) {
      say_words(cardinal_words(num));
    } else if (!has_dot) {
      if (num.empty()) return {};
      say_words(is_ordinal_suffix(suffix) ? ordinal_words(num) : cardinal_words(num));
    } else if (num[0] == '.') {
      say("point", -2);
      say_words(digit_words(num.substr(1)));
    } else {
      const size_t dot = num.find('.');
      const std::string int_part = num.substr(0, dot), frac = num.substr(dot + 1);
      if (int_part.size() > kMaxNamedDigits) {
        say_words(digit_words(int_part));
        if (frac.find_first_not_of('0') != std::string::npos) {
          say("point", -2);
          say_words(digit_words(frac));
        }
      } else {
        say_words(decimal_words(int_part, frac));
      }
    }
  }
  if (result.empty()) return {};
  int rating = 5;
  for (const auto& r : result) rating = std::min(rating, r.rating);
  std::optional<std::u32string> ps = join_words(result);
  if (suffix == U"s" || suffix == U"'s") return {add_s(ps), rating};
  if (suffix == U"ed" || suffix == U"'d") return {add_ed(ps), rating};
  if (suffix == U"ing") return {add_ing(ps), rating};
  return {ps, rating};
}

std::u32string Lexicon::append_currency(std::u32string ps, char32_t currency) const {
  if (!currency) return ps;
  const auto cur = currencies().find(currency);
  if (cur == currencies().end()) return ps;
  Reading unit = stem_s(std::u32string(cur->second.first) + U"s", "", std::nullopt, nullptr);
  if (!unit.phonemes || unit.phonemes->empty()) return ps;
  return ps + U" " + *unit.phonemes;
}

Reading Lexicon::operator()(const Token& tk, const TokenContext& ctx) const {
  std::u32string word = tk.alias ? *tk.alias : tk.text;
  for (auto& c : word)
    if (c == U'‘' || c == U'’') c = U'\'';
  word = text::nfkc(word);
  for (auto& c : word) {
    if (c >= 0x80 && text::is_decimal_digit(c)) {
      std::string s;
      utf8::append(s, c);
      // Any Unicode decimal digit reads as its ASCII value.
      static const std::u32string_view kZeros = U"0٠۰߀०০੦૦୦௦౦೦൦෦๐໐༠၀႐០᠐᥆᧐᪀᪐᭐᮰᱀᱐꘠꣐꤀꧐꧰꩐꯰０";
      for (char32_t z : kZeros)
        if (c >= z && c <= z + 9) c = U'0' + (c - z);
    }
  }
  std::optional<double> stress;
  if (word != text::lower(word)) stress = word == text::upper(word) ? 2.0 : 0.5;
  Reading r = get_word(word, tk.tag, stress, ctx);
  if (r.found()) return {apply_stress(append_currency(*r.phonemes, tk.currency), tk.stress), r.rating};
  if (is_number(word, tk.is_head)) {
    Reading n = get_number(word, tk.currency, tk.is_head);
    if (!n.found()) return {};
    return {apply_stress(*n.phonemes, tk.stress), n.rating};
  }
  return {};
}

}  // namespace kokoro::en
