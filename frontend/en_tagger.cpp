#include "frontend/en_tagger.h"

#include <algorithm>
#include <string_view>
#include <unordered_map>
#include <unordered_set>

#include "frontend/unicode_text.h"

namespace kokoro::en {

namespace {

using Set = std::unordered_set<std::u32string>;

const Set kDeterminers = {U"the", U"a", U"an", U"this", U"these", U"those", U"every", U"each", U"some",
                          U"any", U"no", U"another", U"either", U"neither", U"all", U"both", U"half"};
const Set kPossessives = {U"my", U"your", U"his", U"its", U"our", U"their", U"her"};
const Set kSubjectPronouns = {U"i", U"you", U"he", U"she", U"it", U"we", U"they", U"who"};
const Set kObjectPronouns = {U"me", U"him", U"us", U"them", U"myself", U"yourself", U"himself",
                             U"herself", U"itself", U"ourselves", U"themselves", U"yourselves"};
const Set kPrepositions = {U"of", U"in", U"on", U"at", U"for", U"with", U"by", U"from", U"about", U"into",
                           U"through", U"over", U"under", U"after", U"before", U"between", U"during",
                           U"without", U"within", U"against", U"among", U"across", U"behind", U"beyond",
                           U"near", U"since", U"until", U"toward", U"towards", U"upon", U"via", U"per",
                           U"than", U"as", U"because", U"although", U"though", U"while", U"if", U"whether",
                           U"unless", U"like", U"around", U"despite", U"onto", U"throughout", U"along",
                           U"amid", U"past", U"below", U"above", U"beside", U"besides", U"inside", U"outside"};
const Set kModals = {U"will", U"would", U"can", U"could", U"should", U"shall", U"may", U"might", U"must",
                     U"cannot", U"won't", U"can't", U"couldn't", U"wouldn't", U"shouldn't", U"mustn't",
                     U"'ll", U"i'll", U"you'll", U"we'll", U"they'll", U"he'll", U"she'll", U"it'll",
                     U"i'd", U"you'd", U"we'd", U"they'd", U"he'd", U"she'd"};
const Set kDoForms = {U"do", U"does", U"did", U"don't", U"doesn't", U"didn't", U"please", U"let's", U"let",
                      U"to", U"not", U"never"};
const Set kBeForms = {U"be", U"is", U"are", U"was", U"were", U"been", U"being", U"am", U"'s", U"'re",
                      U"it's", U"he's", U"she's", U"that's", U"i'm", U"you're", U"we're", U"they're",
                      U"isn't", U"aren't", U"wasn't", U"weren't", U"get", U"gets", U"got", U"become",
                      U"became", U"seems", U"seemed", U"looks", U"looked", U"feel", U"feels", U"felt"};
const Set kHaveForms = {U"have", U"has", U"had", U"'ve", U"i've", U"you've", U"we've", U"they've",
                        U"haven't", U"hasn't", U"hadn't"};
const Set kConjunctions = {U"and", U"or", U"but", U"nor", U"yet", U"&"};
const Set kSayVerbs = {U"said", U"say", U"says", U"think", U"thought", U"know", U"knew", U"believe",
                       U"believed", U"hope", U"hoped", U"told", U"tell", U"show", U"showed", U"shows",
                       U"found", U"find", U"so", U"such", U"now", U"ensure", U"sure", U"realize",
                       U"realized", U"warns", U"warned", U"argue", U"argued", U"suggests", U"suggested",
                       U"confirmed", U"announced", U"reported", U"means", U"mean", U"wish", U"guess",
                       U"agree", U"agreed", U"claims", U"claimed", U"felt", U"feel", U"saw", U"see"};

bool is_word_char(char32_t c) { return text::is_letter(c) || c == U'\''; }

bool is_word(const Token& t) {
  return !t.text.empty() && text::is_letter(t.text[0]);
}

bool t_space_after(const std::vector<Token>& toks, size_t i) { return toks[i].space_after; }

std::string punct_tag(const std::u32string& w, const std::vector<Token>& toks, size_t i) {
  const char32_t c = w[0];
  if (w.size() > 1 && c == U'.') return ":";  // ellipsis
  switch (c) {
    case U'.': case U'!': case U'?': return ".";
    case U',': return ",";
    case U':': case U';': case U'…': case U'—': case U'–': return ":";
    case U'-': {
      // A hyphen written between two words or numbers joins them ("win-win", "2-1"); spaced or doubled
      // it is a dash.
      const bool attached = i > 0 && !toks[i - 1].space_after && !t_space_after(toks, i) && i + 1 < toks.size();
      return attached && w.size() == 1 ? "HYPH" : ":";
    }
    case U'(': case U'[': case U'{': return "-LRB-";
    case U')': case U']': case U'}': return "-RRB-";
    case U'“': case U'‘': case U'«': return "``";
    case U'”': case U'»': return "''";
    case U'#': return "#";
    case U'%': return "NN";
    case U'&': return "CC";
    case U'@': return "IN";
    case U'+': return "CC";
    case U'$': case U'£': case U'€': return "$";
    case U'"': case U'\'': case U'’': case U'`': {
      // "analysts' expectations": an apostrophe right after a word ending in s is the possessive.
      if (c != U'"' && i > 0 && !toks[i - 1].space_after && !toks[i - 1].text.empty() &&
          (toks[i - 1].text.back() == U's' || toks[i - 1].text.back() == U'S'))
        return "POS";
      // Opening when nothing (or a space, or an opening bracket) comes before it.
      const bool opening = i == 0 || toks[i - 1].space_after ||
                           toks[i - 1].tag == "-LRB-" || toks[i - 1].tag == "``";
      if (c == U'’' && !opening) return "''";
      return opening ? "``" : "''";
    }
    default: break;
  }
  // U+FFFD stands for bytes that were not text: silent. Pictographs are read by espeak-ng's emoji names
  // ("grinning face"), as in the official pipeline.
  if (c == 0xFFFD) return "NFP";
  if (text::is_symbol_or_emoji(c)) return "NN";
  return "SYM";
}

bool all_digits_or_seps(const std::u32string& w) {
  bool digit = false;
  for (char32_t c : w) {
    if (text::is_decimal_digit(c)) digit = true;
    else if (c != U',' && c != U'.' && c != U'-' && c != U':' && c != U'/') return false;
  }
  return digit;
}

bool starts_with_digit(const std::u32string& w) {
  return !w.empty() && (text::is_decimal_digit(w[0]) || (w.size() > 1 && w[0] == U'-' && text::is_decimal_digit(w[1])));
}

const Set kNumberWords = {U"one", U"two", U"three", U"four", U"five", U"six", U"seven", U"eight", U"nine",
                          U"ten", U"eleven", U"twelve", U"twenty", U"thirty", U"forty", U"fifty", U"hundred",
                          U"thousand", U"million", U"billion", U"dozens", U"hundreds", U"thousands",
                          U"millions"};
const Set kAdverbs = {U"not", U"n't", U"never", U"always", U"often", U"also", U"just", U"very", U"really",
                      U"too", U"quite", U"rather", U"so", U"then", U"now", U"here", U"there", U"already",
                      U"still", U"soon", U"ago", U"again", U"once", U"ever", U"even", U"only", U"almost",
                      U"perhaps", U"maybe", U"away", U"back", U"together", U"later", U"yesterday",
                      U"today", U"tomorrow", U"tonight", U"usually", U"sometimes"};
const Set kInterjections = {U"oh", U"hey", U"wow", U"ouch", U"um", U"hmm", U"ok", U"okay", U"yes", U"hello",
                            U"hi", U"thanks", U"bye", U"goodbye", U"ah", U"uh"};

// A first guess from the word alone.
std::string word_tag(const std::u32string& w, const std::u32string& l, bool sentence_start) {
  if (l == U"to") return "TO";
  if (w == U"I" || kSubjectPronouns.count(l) || kObjectPronouns.count(l)) return "PRP";
  if (kPossessives.count(l)) return "PRP$";
  if (kDeterminers.count(l)) return "DT";
  if (kModals.count(l)) return "MD";
  if (kConjunctions.count(l)) return "CC";
  if (kPrepositions.count(l)) return "IN";
  if (kBeForms.count(l) || kHaveForms.count(l)) return "VBZ";
  if (l == U"which" || l == U"whose") return "WDT";
  if (l == U"what" || l == U"who" || l == U"whom") return "WP";
  if (kAdverbs.count(l)) return "RB";
  if (kInterjections.count(l)) return "UH";
  if (kNumberWords.count(l)) return "CD";
  const bool has_lower = std::any_of(w.begin(), w.end(), text::is_lower_letter);
  const bool has_upper = std::any_of(w.begin(), w.end(), text::is_upper_letter);
  if (has_upper && !has_lower && w.size() >= 2) return "NNP";
  if (has_upper && !sentence_start) return "NNP";
  if (text::ends_with(l, U"ing") && l.size() > 4) return "VBG";
  if (text::ends_with(l, U"ed") && l.size() > 3) return "VBD";
  if (text::ends_with(l, U"ly") && l.size() > 3) return "RB";
  if (text::ends_with(l, U"'s") || text::ends_with(l, U"s'")) return "POS";
  return "NN";
}

bool noun_context(const std::string& prev_tag, const std::u32string& prev) {
  return prev_tag == "DT" || prev_tag == "PRP$" || prev_tag == "POS" || prev_tag == "JJ" || prev_tag == "CD" ||
         (prev_tag == "IN" && prev != U"to");
}

// Chooses between a heteronym's readings: verb after "to", modals and subject pronouns, noun after
// determiners, possessives and prepositions, adjective/participle after forms of "be".
std::string heteronym_tag(const std::u32string& l, const Token* prev_prev, const Token* prev, const Token* next,
                          const std::u32string& pl, const std::u32string& nl) {
  const std::u32string ppl = prev_prev ? text::lower(prev_prev->text) : U"";
  const std::string pt = prev ? prev->tag : "";
  const std::string nt = next ? next->tag : "";
  const bool participle = text::ends_with(l, U"ed") || l == U"read" || l == U"wound" || l == U"done";
  (void)nl;
  if (prev && (kModals.count(pl) || kDoForms.count(pl))) return "VB";
  if (prev && kHaveForms.count(pl)) return "VBN";
  if (prev && kBeForms.count(pl)) return participle ? "VBN" : "JJ";
  if (prev && noun_context(pt, pl)) return "NN";
  if (prev && (pt == "PRP" && kSubjectPronouns.count(pl))) {
    // "could you read": a question puts the modal before the subject.
    if (prev_prev && (kModals.count(ppl) || kDoForms.count(ppl))) return "VB";
    return l == U"read" || l == U"wound" ? "VBD" : "VBP";
  }
  // A noun followed by the heteronym and then a function word or name: subject + verb ("people live in",
  // "the page uses HTML", "the road winds through").
  const bool third_person = text::ends_with(l, U"s") && !text::ends_with(l, U"ss");
  const bool plural_subject = pt == "NNS" || pl == U"people" || pl == U"children" || pl == U"men" || pl == U"women";
  if (prev && ((third_person && (pt == "NN" || pt == "NNP")) || (!third_person && plural_subject)) && next &&
      (nt == "IN" || nt == "DT" || nt == "PRP$" || nt == "RB" || nt == "NNP" || nt == "CD"))
    return l == U"read" || l == U"wound" ? "VBD" : third_person ? "VBZ" : "VBP";
  if (is_pause(prev) && next && (nt == "DT" || nt == "PRP$" || nt == "PRP")) return "VB";
  return "NN";
}

}  // namespace

void tag_tokens(std::vector<Token>& toks) {
  // Pass 1: punctuation, numbers, and a guess for each word from the word alone.
  bool sentence_start = true;
  for (size_t i = 0; i < toks.size(); ++i) {
    Token& t = toks[i];
    if (!t.tag.empty()) {  // set by the tokenizer (URL parts)
      sentence_start = false;
      continue;
    }
    const std::u32string& w = t.text;
    if (w.empty()) {
      t.tag = "SYM";
    } else if (starts_with_digit(w) || (w.size() > 1 && (w[0] == U'.' || w[0] == U'\'' || w[0] == U'’') &&
                                         text::is_decimal_digit(w[1]))) {
      t.tag = all_digits_or_seps(w) ? "CD" : "NN";
      if (w.size() > 2 && text::is_ascii_digit(w[0])) {
        const std::u32string tail = text::lower(w.substr(w.size() - 2));
        if (tail == U"st" || tail == U"nd" || tail == U"rd" || tail == U"th") t.tag = "JJ";
      }
    } else if (is_word_char(w[0]) && std::any_of(w.begin(), w.end(), text::is_letter)) {
      t.tag = word_tag(w, text::lower(w), sentence_start);
    } else {
      t.tag = punct_tag(w, toks, i);
    }
    sentence_start = t.tag == "." || (sentence_start && (t.tag == "``" || t.tag == "-LRB-"));
  }
  // Pass 2: context for the words whose reading depends on it.
  auto prev_word = [&](size_t i) -> const Token* { return i > 0 ? &toks[i - 1] : nullptr; };
  auto next_word = [&](size_t i) -> const Token* { return i + 1 < toks.size() ? &toks[i + 1] : nullptr; };
  for (size_t i = 0; i < toks.size(); ++i) {
    Token& t = toks[i];
    if (!is_word(t) || t.alias) continue;
    const Token* prev = prev_word(i);
    const Token* next = next_word(i);
    const std::u32string l = text::lower(t.text);
    const std::u32string pl = prev ? text::lower(prev->text) : U"";
    const std::u32string nl = next ? text::lower(next->text) : U"";
    if ((t.text == U"$" || t.tag == "$")) continue;
    if (l == U"a") {
      // "Plan A." / "vitamin A" are nouns; everywhere else it is the article.
      t.tag = (t.text == U"A" && prev && is_word(*prev) && is_pause(next)) ? "NN" : "DT";
    } else if (l == U"am") {
      t.tag = (prev && prev->tag == "CD") || t.text == U"AM" ? "NN" : "VBP";
    } else if (l == U"by") {
      t.tag = is_pause(next) ? "RB" : "IN";
    } else if (l == U"in") {
      // A particle ("come in.", "rolled in from") is stressed; the preposition is not.
      static const Set kAfterParticle = {U"from", U"to", U"with", U"at", U"on", U"for"};
      t.tag = is_pause(next) || kAfterParticle.count(nl) ? "RP" : "IN";
    } else if (l == U"that" || text::starts_with(l, U"that'")) {
      // Demonstrative (DT, stressed) before a noun, at a pause, as a pronoun ("that's", "do that if");
      // after verbs of saying and in the middle of a clause, the conjunction or relative (unstressed).
      const std::string nt = next ? next->tag : "";
      const bool clitic = next && !t.space_after && !next->text.empty() && (next->text[0] == U'\'' || next->text[0] == U'’');
      if (l != U"that" || !next || is_pause(next) || clitic) {
        t.tag = "DT";
      } else if (kSayVerbs.count(pl)) {
        t.tag = "IN";
      } else if (prev && prev->tag == "DT") {
        t.tag = "WDT";
      } else if (nt == "NN" || nt == "NNS" || nt == "JJ" || nt == "CD" || nt == "RB" || nt == "IN" ||
                 !prev || is_pause(prev) || kPrepositions.count(pl) || kConjunctions.count(pl)) {
        t.tag = "DT";
      } else {
        t.tag = "IN";
      }
    } else if (l == U"used") {
      t.tag = kBeForms.count(pl) && pl != U"get" && pl != U"got" ? "VBN" : "VBD";
    } else if (l == U"vs" || l == U"vs.") {
      t.tag = "IN";
    } else if (t.tag == "NN" || t.tag == "VBD" || t.tag == "VBG" || t.tag == "RB" || t.tag == "POS") {
      const std::string guess = heteronym_tag(l, i > 1 ? &toks[i - 2] : nullptr, prev, next, pl, nl);
      // Only the readings' classes matter: keep the suffix-based guesses unless context says otherwise.
      if (t.tag == "NN" || guess == "VB" || guess == "VBN" || guess == "VBD" || guess == "VBP" || guess == "VBZ") {
        if (t.tag == "NN" && text::ends_with(l, U"s") && !text::ends_with(l, U"ss") && guess == "NN") {
          t.tag = "NNS";
        } else if (t.tag == "NN" || guess != "NN") {
          t.tag = guess;
        }
      }
    }
  }
}

}  // namespace kokoro::en
