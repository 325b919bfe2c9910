#include "frontend/en_heteronyms.h"

#include <algorithm>
#include <optional>
#include <string_view>
#include <unordered_set>

#include "frontend/unicode_text.h"

namespace kokoro::en {

namespace {

using Set = std::unordered_set<std::u32string>;

// "lead" the metal: the words it is found with.
const Set kLeadMetalNext = {U"pipe",   U"pipes",   U"paint",     U"poisoning", U"levels",  U"level",
                            U"exposure", U"bullet", U"bullets",  U"shot",      U"weight",  U"weights",
                            U"pencil", U"pencils", U"balloon",   U"ore",       U"mine",    U"mines",
                            U"oxide",  U"acid",    U"crystal",   U"glass",     U"sheet",   U"sheets",
                            U"roof",   U"solder",  U"free",      U"contamination", U"dust", U"sinker",
                            U"sinkers", U"apron",  U"service",   U"lines",     U"pollution", U"content"};
const Set kMetals = {U"tin", U"zinc", U"copper", U"iron", U"mercury", U"arsenic", U"cadmium", U"silver", U"gold"};
// "wound" past of "wind" before a path-like continuation.
const Set kAfterWindingVerb = {U"through", U"its",   U"their", U"his",   U"her",    U"around", U"round",
                               U"down",    U"up",    U"along", U"past",  U"back",   U"toward", U"towards",
                               U"into",    U"across", U"the",  U"a",     U"itself", U"between", U"over"};
// Adjective "minute" (tiny) before these nouns; "minute hand" and "a minute ago" stay the noun.
const Set kTinyThings = {U"details",   U"detail",    U"amount",     U"amounts",   U"quantities", U"quantity",
                         U"traces",    U"trace",     U"particles",  U"particle",  U"differences", U"difference",
                         U"changes",   U"fraction",  U"portion",    U"organisms", U"creatures",  U"fragments",
                         U"crack",     U"cracks",    U"variations", U"scale",     U"size",       U"holes",
                         U"hole",      U"droplets",  U"grains",     U"doses",     U"dose"};
// Adjective "close" (near, tight) before these nouns; "the close of day" stays the noun.
const Set kCloseThings = {U"call",    U"friend",  U"friends",  U"friendship", U"relative", U"relatives", U"contact",
                          U"attention", U"range", U"game",     U"race",       U"look",     U"eye",       U"second",
                          U"relationship", U"ties", U"proximity", U"quarters", U"shave",  U"match",     U"vote",
                          U"family",  U"ally",    U"allies",   U"encounter",  U"inspection", U"watch",   U"up"};
const Set kIntensifiers = {U"very", U"so", U"too", U"quite", U"really", U"pretty", U"fairly", U"extremely",
                           U"stay", U"stayed", U"stays", U"come", U"came", U"get", U"got", U"keep", U"kept",
                           U"sit", U"sat", U"hold", U"held", U"stand", U"stood", U"draw", U"drew", U"how"};
const Set kPlaceWords = {U"in",   U"on",    U"at",     U"near",    U"with",   U"together", U"here", U"there",
                         U"alone", U"abroad", U"off", U"by",      U"under",  U"without",  U"among", U"longer",
                         U"happily", U"like", U"for",  U"until",   U"up",     U"next",     U"close", U"nearby"};
// "bass" the fish near these words; anywhere else it is the low voice or instrument.
const Set kFishWords = {U"caught", U"catch", U"catching", U"fishing", U"fish",  U"fished", U"lake",  U"pond",
                        U"river",  U"fillet", U"grilled", U"sea",    U"striped", U"largemouth", U"smallmouth",
                        U"dinner", U"lunch", U"ate",     U"eat",     U"cooked", U"baked",  U"boat",  U"bait"};
// Time words that make "read" after a subject present or past.
const Set kPresentCues = {U"every", U"always", U"usually", U"often", U"now", U"today", U"tomorrow", U"each",
                          U"sometimes", U"never", U"daily", U"nightly", U"weekly", U"tonight"};
const Set kPastCues = {U"yesterday", U"last", U"ago", U"earlier", U"once", U"already", U"previously"};
const Set kTakeForms = {U"take", U"takes", U"took", U"taken", U"taking"};
// Noun/verb pairs read as verbs after a subject ("Factories produce steel").
const Set kNounVerbPairs = {U"estimate", U"estimates", U"produce",  U"produces", U"uses",     U"use",
                            U"record",   U"records",   U"present",  U"presents", U"object",   U"objects",
                            U"permit",   U"permits",   U"project",  U"projects", U"conduct",  U"conducts",
                            U"contract", U"increase",  U"increases", U"house",   U"houses",   U"abuse",
                            U"excuse",   U"refuse",    U"refuses",  U"separate", U"suspect",  U"progress",
                            U"desert",   U"subject",   U"graduate", U"tear",     U"tears",    U"wind",
                            U"winds",    U"lives",     U"close",    U"closes"};
// Every word a rule here is about.
const Set kTargets = [] {
  Set s = kNounVerbPairs;
  for (const char32_t* w : {U"lead", U"wound", U"read", U"live", U"close", U"bow", U"bows", U"bass", U"object",
                            U"objects", U"minute"})
    s.insert(w);
  return s;
}();

bool is_noun_tag(const std::string& t) { return t.rfind("NN", 0) == 0; }

}  // namespace

void refine_heteronyms(std::vector<Token>& toks) {
  // Lower-case text, made only for the tokens a rule looks at (this runs on every line).
  std::vector<std::optional<std::u32string>> low(toks.size());
  auto word = [&](size_t i, int d) -> const std::u32string& {
    static const std::u32string kNone;
    const long k = static_cast<long>(i) + d;
    if (k < 0 || k >= static_cast<long>(toks.size())) return kNone;
    auto& l = low[static_cast<size_t>(k)];
    if (!l) {
      const Token& t = toks[static_cast<size_t>(k)];
      l = text::lower(t.alias ? *t.alias : t.text);
    }
    return *l;
  };
  auto tok = [&](size_t i, int d) -> const Token* {
    const long k = static_cast<long>(i) + d;
    return k >= 0 && k < static_cast<long>(toks.size()) ? &toks[static_cast<size_t>(k)] : nullptr;
  };
  auto near_any = [&](size_t i, const Set& s, int radius) {
    for (int d = -radius; d <= radius; ++d)
      if (d != 0 && s.count(word(i, d))) return true;
    return false;
  };
  // Whether the line has a past or a present time word: looked up once per line, when a "read" needs it.
  std::optional<bool> has_past, has_present;
  auto line_has = [&](const Set& s) {
    std::optional<bool>& cached = &s == &kPastCues ? has_past : has_present;
    if (!cached) {
      cached = false;
      for (size_t k = 0; k < toks.size() && !*cached; ++k) *cached = s.count(word(k, 0)) > 0;
    }
    return *cached;
  };

  for (size_t i = 0; i < toks.size(); ++i) {
    Token& t = toks[i];
    if (t.alias || t.phonemes || t.text.size() < 3 || t.text.size() > 9) continue;
    const std::u32string& w = word(i, 0);
    if (!kTargets.count(w)) continue;
    const Token* prev = tok(i, -1);
    const Token* next = tok(i, 1);
    const std::string pt = prev ? prev->tag : "", nt = next ? next->tag : "";
    const std::u32string& pw = word(i, -1);
    const std::u32string& nw = word(i, 1);
    const bool det_before = pt == "DT" || pt == "PRP$" || pt == "JJ" || pt == "POS";
    if (w == U"lead") {
      // The metal: "lead pipes", "as heavy as lead", "tin and lead".
      const bool metal = kLeadMetalNext.count(nw) || kMetals.count(pw) || kMetals.count(word(i, 2)) ||
                         ((pw == U"as" || pw == U"of") && is_pause(next));
      if (metal) {
        t.phonemes = U"lˈɛd";
        t.rating = 4;
      }
    } else if (w == U"wound") {
      // "The path wound through", "He wound the clock": the past of "wind" after a subject.
      if (!det_before && prev && (is_noun_tag(pt) || pt == "PRP" || pt == "VBZ") && kAfterWindingVerb.count(nw))
        t.tag = "VBD";
    } else if (w == U"read") {
      if (t.tag == "VBD" || t.tag == "VBP") {
        if (line_has(kPastCues)) {
          t.tag = "VBD";
        } else if (line_has(kPresentCues)) {
          t.tag = "VB";  // the default reading, present
        }
      }
    } else if (w == U"live") {
      // "the Johnsons live on Elm Street": a subject, then a place.
      if (prev && (is_noun_tag(pt) || pt == "PRP" || pt == "WP" || pt == "WDT") && !det_before && kPlaceWords.count(nw))
        t.tag = "VBP";
    } else if (w == U"close") {
      const bool verb_context = pt == "MD" || pw == U"to" || pw == U"please" || pw == U"will" || pw == U"not";
      if (!verb_context && (nw == U"to" || kIntensifiers.count(pw) || kCloseThings.count(nw))) t.tag = "JJ";
    } else if (w == U"bow" || w == U"bows") {
      // "bow to the audience", "bow their heads", "take a bow".
      if ((nw == U"to" || nw == U"down" || nw == U"before" || nw == U"their" || nw == U"his" || nw == U"her" ||
           nw == U"out") && !det_before)
        t.tag = "VBP";
      if (pw == U"a" && kTakeForms.count(word(i, -2))) t.tag = "VB";
    } else if (w == U"bass") {
      t.tag = near_any(i, kFishWords, 3) ? "NN" : "JJ";
    } else if (w == U"object" || w == U"objects") {
      if (nw == U"to" && !det_before && pt != "IN") t.tag = "VBP";
    } else if (w == U"minute") {
      if (kTinyThings.count(nw)) t.tag = "JJ";
    }
    // A subject, a heteronym and then what it does something to: "Officials estimate that",
    // "Factories produce steel", "The website uses cookies".
    const bool plural_subject = prev && is_noun_tag(pt) && pw.size() > 3 && text::ends_with(pw, U"s") &&
                                !text::ends_with(pw, U"ss") && !text::ends_with(w, U"s");
    const bool singular_subject = prev && is_noun_tag(pt) && !text::ends_with(pw, U"s") && text::ends_with(w, U"s") &&
                                  !text::ends_with(w, U"ss");
    const bool object_follows = nw == U"that" || nt == "NN" || nt == "NNS" || nt == "DT" || nt == "PRP$" || nt == "JJ";
    const bool noun_guess = t.tag == "NN" || t.tag == "NNS";
    if (noun_guess && (plural_subject || singular_subject) && object_follows && i >= 1 &&
        !(tok(i, -2) && (tok(i, -2)->tag == "IN")) && kNounVerbPairs.count(w))
      t.tag = singular_subject ? "VBZ" : "VBP";
  }
}

}  // namespace kokoro::en
