// Abbreviations written with a full stop, and titles, that misaki reads as letters or as a clipped word
// ("Prof." -> "prof", "Apt." -> "apt", "Mt." -> "M T"). The ones it reads well ("Dr. Smith" doctor,
// "Mr.", "Mrs.", "Ms.", "vs.", "etc.", "No. 10", "St. Petersburg" saint) are left to it.
//   Prof. Lee -> Professor Lee      Mt. Everest, Mt Fuji -> Mount ...     Capt./Lt./Sgt./Col./Gen. ...
//   Main St. -> Main Street (after a name and not before one)   Elm Dr. -> Elm Drive
//   Apt. 4 -> apartment four   no. 5 -> number five   Fig. 3, Vol. 2, pp. 10, ch. 4
//   approx. -> approximately   w/ -> with   w/o -> without   a.k.a. -> also known as
// ("e.g." and "i.e." stay letters, as misaki and most readers say them.)
// British English writes most of these without the full stop ("Mt Fuji", "Prof Lee"): titles before a
// name are taken with or without it.
#include <cstring>

#include "frontend/norm_passes.h"
#include "frontend/norm_support.h"
#include "frontend/unicode_text.h"

namespace kokoro::en::norm {

namespace {

enum class Where {
  kBeforeName,    // a title: the next word is capitalised (full stop optional)
  kAfterName,     // a street type: after a capitalised word, not before one (full stop required)
  kBeforeNumber,  // "Apt. 4", "Fig. 3" (full stop required)
  kAnywhere,      // full stop required
};

struct Abbreviation {
  std::string_view written;  // without the full stop
  std::string_view said;
  Where where;
};

constexpr Abbreviation kAbbreviations[] = {
    {"Prof", "Professor", Where::kBeforeName},   {"Mt", "Mount", Where::kBeforeName},
    {"Capt", "Captain", Where::kBeforeName},     {"Lt", "Lieutenant", Where::kBeforeName},
    {"Sgt", "Sergeant", Where::kBeforeName},     {"Col", "Colonel", Where::kBeforeName},
    {"Gen", "General", Where::kBeforeName},      {"Gov", "Governor", Where::kBeforeName},
    {"Sen", "Senator", Where::kBeforeName},      {"Rep", "Representative", Where::kBeforeName},
    {"Rev", "Reverend", Where::kBeforeName},     {"Hon", "Honorable", Where::kBeforeName},
    {"Pres", "President", Where::kBeforeName},   {"Supt", "Superintendent", Where::kBeforeName},
    {"Cmdr", "Commander", Where::kBeforeName},   {"Adm", "Admiral", Where::kBeforeName},
    {"Ft", "Fort", Where::kBeforeName},          {"Pt", "Point", Where::kBeforeName},
    {"St", "Street", Where::kAfterName},         {"Dr", "Drive", Where::kAfterName},
    {"Ave", "Avenue", Where::kAfterName},        {"Rd", "Road", Where::kAfterName},
    {"Blvd", "Boulevard", Where::kAfterName},    {"Ln", "Lane", Where::kAfterName},
    {"Hwy", "Highway", Where::kAfterName},       {"Sq", "Square", Where::kAfterName},
    {"Pl", "Place", Where::kAfterName},          {"Pkwy", "Parkway", Where::kAfterName},
    {"Jr", "Junior", Where::kAfterName},         {"Sr", "Senior", Where::kAfterName},
    {"Inc", "Incorporated", Where::kAfterName},  {"Corp", "Corporation", Where::kAfterName},
    {"Bros", "Brothers", Where::kAfterName},
    {"Apt", "apartment", Where::kBeforeNumber},  {"apt", "apartment", Where::kBeforeNumber},
    {"no", "number", Where::kBeforeNumber},      {"Nos", "numbers", Where::kBeforeNumber},
    {"Fig", "figure", Where::kBeforeNumber},     {"fig", "figure", Where::kBeforeNumber},
    {"Vol", "volume", Where::kBeforeNumber},     {"vol", "volume", Where::kBeforeNumber},
    {"pp", "pages", Where::kBeforeNumber},       {"p", "page", Where::kBeforeNumber},
    {"ch", "chapter", Where::kBeforeNumber},     {"Ch", "chapter", Where::kBeforeNumber},
    {"Rm", "room", Where::kBeforeNumber},        {"Ste", "suite", Where::kBeforeNumber},
    {"Tel", "telephone", Where::kBeforeNumber},  {"tel", "telephone", Where::kBeforeNumber},
    {"approx", "approximately", Where::kAnywhere}, {"Approx", "approximately", Where::kAnywhere},
    {"Dept", "department", Where::kAnywhere},    {"dept", "department", Where::kAnywhere},
    {"Univ", "university", Where::kAnywhere},    {"cf", "compare", Where::kAnywhere},
    {"ca", "circa", Where::kBeforeNumber},       {"est", "established", Where::kBeforeNumber},
    {"Est", "established", Where::kBeforeNumber},
};

// Written with inner full stops: one token from the tokenizer ("e.g.") or pieces.
struct Dotted {
  std::string_view written;
  std::string_view said;
};
constexpr Dotted kDotted[] = {{"a.k.a.", "also known as"}, {"A.K.A.", "also known as"},
                              {"w/o", "without"},      {"w/", "with"},            {"W/", "with"}};

bool is_capitalised_word(const Token& t) {
  return t.text.size() >= 2 && text::is_upper_letter(t.text[0]) && text::is_letter(t.text[1]);
}

bool starts_with_digit(const Token& t) { return !t.text.empty() && text::is_ascii_digit(t.text[0]); }

// Tokens from i whose concatenated text (no spaces between) is `written`; 0 if none.
size_t spelled_at(const std::vector<Token>& toks, size_t i, std::string_view written) {
  std::string acc;
  for (size_t k = i; k < toks.size() && is_free(toks[k]); ++k) {
    acc += ascii(toks[k]);
    if (acc == written) return k - i + 1;
    if (acc.size() >= written.size() || written.substr(0, acc.size()) != acc || !joined(toks, k)) return 0;
  }
  return 0;
}

}  // namespace

void normalize_abbreviations(std::vector<Token>& toks, const Dialect&) {
  for (size_t i = 0; i < toks.size(); ++i) {
    if (!is_free(toks[i]) || toks[i].text.empty() || toks[i].text.size() > 7 || !text::is_ascii_letter(toks[i].text[0]))
      continue;
    bool done = false;
    for (const auto& d : kDotted) {
      if (size_t n = spelled_at(toks, i, d.written)) {
        // "w/" must stand alone or before a word: "w/o", not "w/2".
        i = replace(toks, i, i + n, split_words(d.said)) - 1;
        done = true;
        break;
      }
    }
    if (done) continue;
    for (const auto& ab : kAbbreviations) {
      const bool title = ab.where == Where::kBeforeName;
      const size_t n = abbreviation_at(toks, i, ab.written, title);
      if (!n) continue;
      const bool has_stop = n == 2 || ascii(toks[i]).back() == '.';
      const Token* prev = i > 0 ? &toks[i - 1] : nullptr;
      const Token* next = i + n < toks.size() ? &toks[i + n] : nullptr;
      bool ok = false;
      switch (ab.where) {
        case Where::kBeforeName:
          ok = next && is_capitalised_word(*next) && (has_stop || toks[i + n - 1].space_after);
          break;
        case Where::kAfterName: {
          // "Main St." but not "St. Mark's"; "42nd St." too. Before another capitalised word it is a
          // street only when the word before is a name inside the sentence ("on Main St. Apt. 4"), not
          // a capitalised first word ("Visit St. Mark's").
          const bool after_name = prev && (is_capitalised_word(*prev) || starts_with_digit(*prev));
          const bool prev_inside = i >= 2 && toks[i - 2].tag != "." && ascii(toks[i - 2]) != "." &&
                                   ascii(toks[i - 2]) != "!" && ascii(toks[i - 2]) != "?";
          const bool suffix = ab.written == "Jr" || ab.written == "Sr" ||
                              ab.written == "Inc";
          ok = has_stop && after_name && (!(next && is_capitalised_word(*next)) || prev_inside || suffix);
          break;
        }
        case Where::kBeforeNumber:
          // (The number may already be words: "Tel. 555-0100" after the phone pass.)
          ok = has_stop && next && (starts_with_digit(*next) || next->group != 0);
          break;
        case Where::kAnywhere:
          ok = has_stop;
          break;
      }
      if (!ok) break;
      Words words = split_words(ab.said);
      // An abbreviation that ends the line also ends its sentence.
      if (has_stop && !next) words.emplace_back(".");
      i = replace(toks, i, i + n, words) - 1;
      break;
    }
  }
}

}  // namespace kokoro::en::norm
