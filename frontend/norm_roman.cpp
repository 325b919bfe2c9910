// Roman numerals, only where the context says they are numbers (never "I" the pronoun, never a lone
// capital letter or an initialism elsewhere):
//   Henry VIII, Elizabeth II, Louis XIV, Pope John Paul II -> Henry the eighth ...   (regnal names)
//   World War II, Chapter IV, Part I, Act III, Type II     -> World War two ...      (numbered things)
//   Rocky III, Apollo XIII, Super Bowl LVII                -> Rocky three ...        (numerals of 2+
//                                                             letters after another capitalised word)
// Numerals are I, V, X and L (up to 89); with L they need three letters ("XL" and "LV" are sizes and
// brands). C, D and M are left alone ("CV", "MD", "DC" are initialisms).
#include <cstring>

#include "frontend/norm_passes.h"
#include "frontend/norm_support.h"
#include "frontend/unicode_text.h"

namespace kokoro::en::norm {

namespace {

constexpr const char* kRegnal[] = {
    "Henry",     "Elizabeth", "Charles",   "James",     "George",    "Edward",    "William",   "Richard",
    "John",      "Mary",      "Louis",     "Napoleon",  "Peter",     "Catherine", "Alexander", "Nicholas",
    "Frederick", "Philip",    "Ferdinand", "Leo",       "Pius",      "Paul",      "Benedict",  "Gregory",
    "Innocent",  "Clement",   "Urban",     "Boniface",  "Francis",   "Constantine", "Ivan",    "Wilhelm",
    "Otto",      "Rudolf",    "Harald",    "Olaf",      "Gustav",    "Carl",      "Christian", "Juan",
    "Felipe",    "Alfonso",   "Pedro",     "Manuel",    "David",     "Robert",    "Edmund",
    "Harold",    "Stephen",   "Anne",      "Victoria",  "Ramesses",  "Ptolemy",   "Amenhotep", "Thutmose",
    "Sixtus",    "Julius",    "Honorius",  "Leopold",   "Umberto",   "Haakon",    "Matthias",  "Sigismund"};

constexpr const char* kNumbered[] = {
    "War",     "Chapter", "Part",    "Volume",  "Vol.",    "Book",     "Act",      "Scene",   "Section",
    "Phase",   "Title",   "Article", "Appendix", "Type",   "Class",    "Level",    "Stage",   "Episode",
    "Schedule", "Grade",  "Category", "Round",  "Step",    "Psalm",    "Canto",    "Series",  "Vatican",
    "Bowl",    "Mark",    "Apollo",  "Gemini",  "Division", "Corps",   "Tier",     "Movement", "Annex"};

int value(char c) {
  switch (c) {
    case 'I': return 1;
    case 'V': return 5;
    case 'X': return 10;
    case 'L': return 50;
    default: return 0;
  }
}

// Value of a well-formed numeral in I, V, X, L (1..89), else 0.
int roman_value(const std::string& s) {
  if (s.empty() || s.size() > 7) return 0;
  int total = 0;
  for (size_t i = 0; i < s.size(); ++i) {
    const int v = value(s[i]);
    if (!v) return 0;
    const int next = i + 1 < s.size() ? value(s[i + 1]) : 0;
    total += v < next ? -v : v;
  }
  if (total <= 0 || total > 89) return 0;
  // Well-formed: writing the value back gives the same letters.
  static constexpr std::pair<int, const char*> kParts[] = {{50, "L"}, {40, "XL"}, {10, "X"}, {9, "IX"},
                                                           {5, "V"},  {4, "IV"},  {1, "I"}};
  std::string back;
  int rest = total;
  for (const auto& [v, letters] : kParts)
    while (rest >= v) back += letters, rest -= v;
  return back == s ? total : 0;
}

bool in_list(const std::string& w, const char* const* list, size_t n) {
  for (size_t i = 0; i < n; ++i)
    if (w == list[i]) return true;
  return false;
}

bool is_capitalised_word(const Token& t) {
  return t.text.size() >= 2 && text::is_upper_letter(t.text[0]) && text::is_lower_letter(t.text[1]);
}

}  // namespace

void normalize_roman(std::vector<Token>& toks, const Dialect&) {
  for (size_t i = 1; i < toks.size(); ++i) {
    if (!is_free(toks[i]) || !toks[i - 1].space_after || toks[i].text.empty() || value(static_cast<char>(toks[i].text[0] < 0x80 ? toks[i].text[0] : 0)) == 0)
      continue;
    const std::string a = ascii(toks[i]);
    const int v = roman_value(a);
    if (!v || (a.find('L') != std::string::npos && a.size() < 3)) continue;
    // Followed by more letters or digits ("IV-drip", "II3"): not a numeral.
    if (joined(toks, i) && i + 1 < toks.size() && !toks[i + 1].text.empty() && text::is_letter(toks[i + 1].text[0]))
      continue;
    const std::string prev = ascii(toks[i - 1]);
    const bool regnal = in_list(prev, kRegnal, std::size(kRegnal));
    const bool numbered = in_list(prev, kNumbered, std::size(kNumbered)) ||
                          (!prev.empty() && in_list(std::string(1, static_cast<char>(std::toupper(prev[0]))) + prev.substr(1),
                                                    kNumbered, std::size(kNumbered)) && a.size() >= 2);
    // "I" after a name is the pronoun unless a pause or "of"/"and" follows ("Elizabeth I of England").
    if (a == "I" && regnal && i + 1 < toks.size()) {
      const std::string next = ascii(toks[i + 1]);
      const bool pause = next == "," || next == "." || next == ";" || next == ")" || next == "'s" || next == "!";
      if (!pause && next != "of" && next != "and") continue;
    }
    Words w;
    if (regnal) {
      w = {"the"};
      append(w, ordinal_words(std::to_string(v)));
    } else if (numbered) {
      w = cardinal_words(std::to_string(v));
    } else if (a.size() >= 2 && is_capitalised_word(toks[i - 1])) {
      // "Rocky III", "Apollo XIII": a numeral of two or more letters after a name.
      w = cardinal_words(std::to_string(v));
    } else {
      continue;
    }
    i = replace(toks, i, i + 1, w) - 1;
  }
}

}  // namespace kokoro::en::norm
