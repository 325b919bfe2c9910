// Units of measurement after a number, with plural agreement ("1 km" -> one kilometer, "1.5 km" ->
// one point five kilometers) and British spelling (metre, litre) for en-gb:
//   5 km, 5km, 200 m, 60 W, 3.5GHz, 100 km/h, 9.8 m/s, 30 mph, 250 mg, 5 min, 1 kWh, 500 ml
// Only after a number: a unit symbol alone ("m", "s", "W") stays a letter. Symbols that are also common
// words or letters after numbers ("A", "K", "t") are not taken, and two only where the words around say
// so: "in" is inches after feet ("6 ft 2 in"), in a dimension ("10 in x 12 in") or before a word of size
// ("55 in screen", "2 in. thick"), never in "1 in 10" or "at 5 in the morning"; "W" is not watts before
// a street name ("500 W Main St" is West). Feet and inches written with marks: 6', 5'6", 12", 5′6″ (a
// quote that closes a quotation is not a mark). A period after a unit that is not a sentence end ("6 ft.
// tall") is the abbreviation's. Left to misaki, which reads them the way people say them: data sizes as
// letters ("16 GB" -> sixteen G B) and degrees Celsius ("20°C" -> twenty degrees C; norm_temperatures.cpp
// has Fahrenheit and Kelvin).
#include <cstring>

#include "frontend/norm_passes.h"
#include "frontend/norm_support.h"
#include "frontend/unicode_text.h"
#include "frontend/utf8.h"

namespace kokoro::en::norm {

namespace {

struct Unit {
  const char* written;
  const char* one;
  const char* many;
};

constexpr Unit kUnits[] = {
    {"km", "kilometer", "kilometers"},     {"m", "meter", "meters"},
    {"cm", "centimeter", "centimeters"},   {"mm", "millimeter", "millimeters"},
    {"\u00b5m", "micrometer", "micrometers"}, {"\u03bcm", "micrometer", "micrometers"},
    {"nm", "nanometer", "nanometers"},     {"mi", "mile", "miles"},
    {"ft", "foot", "feet"},                {"yd", "yard", "yards"},
    {"kg", "kilogram", "kilograms"},       {"g", "gram", "grams"},
    {"mg", "milligram", "milligrams"},     {"\u00b5g", "microgram", "micrograms"},
    {"mcg", "microgram", "micrograms"},    {"lb", "pound", "pounds"},
    {"lbs", "pound", "pounds"},            {"oz", "ounce", "ounces"},
    {"L", "liter", "liters"},              {"l", "liter", "liters"},
    {"ml", "milliliter", "milliliters"},   {"mL", "milliliter", "milliliters"},
    {"cl", "centiliter", "centiliters"},   {"gal", "gallon", "gallons"},
    {"mph", "mile per hour", "miles per hour"}, {"kph", "kilometer per hour", "kilometers per hour"},
    {"kmh", "kilometer per hour", "kilometers per hour"},
    {"W", "watt", "watts"},
    {"kW", "kilowatt", "kilowatts"},       {"MW", "megawatt", "megawatts"},
    {"GW", "gigawatt", "gigawatts"},       {"kWh", "kilowatt hour", "kilowatt hours"},
    {"Wh", "watt hour", "watt hours"},     {"MWh", "megawatt hour", "megawatt hours"},
    {"mAh", "milliamp hour", "milliamp hours"}, {"mA", "milliamp", "milliamps"},
    {"V", "volt", "volts"},                {"kV", "kilovolt", "kilovolts"},
    {"mV", "millivolt", "millivolts"},     {"Hz", "hertz", "hertz"},
    {"kHz", "kilohertz", "kilohertz"},     {"MHz", "megahertz", "megahertz"},
    {"GHz", "gigahertz", "gigahertz"},     {"kbps", "kilobit per second", "kilobits per second"},
    {"Mbps", "megabit per second", "megabits per second"}, {"Gbps", "gigabit per second", "gigabits per second"},
    {"ms", "millisecond", "milliseconds"}, {"\u00b5s", "microsecond", "microseconds"},
    {"ns", "nanosecond", "nanoseconds"},   {"s", "second", "seconds"},
    {"sec", "second", "seconds"},          {"secs", "second", "seconds"},
    {"min", "minute", "minutes"},          {"mins", "minute", "minutes"},
    {"h", "hour", "hours"},                {"hr", "hour", "hours"},
    {"hrs", "hour", "hours"},              {"dB", "decibel", "decibels"},
    {"px", "pixel", "pixels"},             {"kcal", "kilocalorie", "kilocalories"},
    {"cal", "calorie", "calories"},        {"ha", "hectare", "hectares"},
};

// Second units of "per" forms: "km/h", "m/s", "mg/kg".
struct Per {
  const char* written;
  const char* name;
};
constexpr Per kPer[] = {{"h", "hour"},   {"hr", "hour"}, {"s", "second"}, {"sec", "second"}, {"min", "minute"},
                        {"kg", "kilogram"}, {"L", "liter"}, {"l", "liter"}, {"ml", "milliliter"}, {"mL", "milliliter"},
                        {"day", "day"}, {"m", "meter"}, {"km", "kilometer"}, {"gal", "gallon"}};

constexpr Unit kInch = {"in", "inch", "inches"};
constexpr Unit kFoot = {"ft", "foot", "feet"};

const Unit* find_unit(const std::string& w) {
  for (const auto& u : kUnits)
    if (w == u.written) return &u;
  return nullptr;
}

const char* find_per(const std::string& w) {
  for (const auto& p : kPer)
    if (w == p.written) return p.name;
  return nullptr;
}

std::string british_spelling(std::string s) {
  for (const char* from : {"meter", "liter"}) {
    size_t pos;
    while ((pos = s.find(from)) != std::string::npos) s.replace(pos, 5, std::string(from).substr(0, 3) + "re");
  }
  return s;
}

// UTF-8 text of a token (units use µ and °, which ascii() hides).
std::string utf8_text(const Token& t) { return utf8::encode(t.text); }

bool starts_lower_or_digit(const Token& t) {
  return !t.text.empty() && (text::is_lower_letter(t.text[0]) || text::is_decimal_digit(t.text[0]));
}

bool said_as(const Token& t, std::initializer_list<std::u32string_view> words) {
  const std::u32string& w = t.alias ? *t.alias : t.text;
  for (auto x : words)
    if (w == x) return true;
  return false;
}

// Words after a length that say it is one: "55 in screen", "2 in thick".
bool is_size_word(const std::string& w) {
  static constexpr std::string_view kWords[] = {
      "tall", "long", "wide", "high", "deep", "thick", "across", "diameter", "square", "screen", "screens",
      "display", "monitor", "TV", "TVs", "television", "laptop", "tablet", "wheel", "wheels", "rims", "tires",
      "tyres", "pizza", "pipe", "blade", "cube", "x", "\xc3\x97" /* × */};
  for (auto x : kWords)
    if (w == x) return true;
  return false;
}

// "in" after the number at i (token j) means inches: after feet, inside a dimension, before a size word or
// an abbreviation's period ("2 in. thick"; at the end of the line too), "of rain/snow".
bool means_inches(const std::vector<Token>& toks, size_t i, size_t j) {
  if (i > 0 && said_as(toks[i - 1], {U"feet", U"foot", U"ft", U"inches", U"inch"})) return true;
  if (i > 1 && said_as(toks[i - 1], {U"x", U"\u00d7", U"by"}) &&
      (said_as(toks[i - 2], {U"inches", U"inch", U"feet", U"foot"}) || all_digits(ascii(toks[i - 2]))))
    return true;
  const size_t k = j + 1;
  if (k >= toks.size()) return false;
  if (joined(toks, j) && is_one_of(toks, k, {"."})) return k + 1 >= toks.size() || starts_lower_or_digit(toks[k + 1]);
  const std::string next = utf8_text(toks[k]);
  if (is_size_word(next)) return true;
  if ((next == "of") && is_one_of(toks, k + 1, {"rain", "snow", "water"})) return true;
  return (next == "by") && k + 1 < toks.size() && all_digits(ascii(toks[k + 1]));
}

// A compass letter between a house number and a street name is a direction ("500 W Main St": West).
const char* compass_direction(const std::string& w) {
  if (w == "N") return "North";
  if (w == "S") return "South";
  if (w == "E") return "East";
  if (w == "W") return "West";
  return nullptr;
}

// What follows a compass letter after a house number: a street's name or an ordinal street ("500 W Main
// St", "300 W 42nd St": the letter is a direction), or the street type itself ("1500 W St", Washington's W
// Street: the letter is the name).
enum class Street { none, name, type };

Street street_after(const std::vector<Token>& toks, size_t j) {
  if (j + 1 >= toks.size()) return Street::none;
  const std::u32string& next = toks[j + 1].text;
  if (next.empty()) return Street::none;
  for (std::u32string_view type : {U"St", U"St.", U"Street", U"Ave", U"Ave.", U"Avenue", U"Rd", U"Rd.", U"Road",
                                   U"Blvd", U"Blvd.", U"Boulevard", U"Pl", U"Pl.", U"Place"})
    if (next == type) return Street::type;
  if (text::is_upper_letter(next[0])) return Street::name;
  const std::string a = ascii(toks[j + 1]);
  for (const char* suffix : {"st", "nd", "rd", "th"})
    if (a.size() > 2 && a.compare(a.size() - 2, 2, suffix) == 0 && all_digits(a.substr(0, a.size() - 2)))
      return Street::name;
  return Street::none;
}

// The number at i is after an article and its unit (ending before `end`) before a noun: "a 60 W bulb",
// "the 12" record".
bool describes_noun(const std::vector<Token>& toks, size_t i, size_t end) {
  if (i == 0 || end >= toks.size() || !is_one_of(toks, i - 1, {"a", "an", "A", "An", "the", "The"})) return false;
  const Token& next = toks[end];
  if (next.text.empty() || !text::is_letter(next.text[0])) return false;
  static constexpr std::u32string_view kNotNouns[] = {
      U"of", U"or", U"and", U"to", U"in", U"per", U"more", U"less", U"away", U"ago", U"from", U"at", U"a", U"an",
      U"the", U"is", U"are", U"was", U"were", U"be", U"been", U"has", U"have", U"had", U"will", U"would",
      U"could", U"should", U"might", U"must", U"do", U"does", U"did", U"took", U"takes", U"that", U"which"};
  for (auto w : kNotNouns)
    if (next.text == w) return false;
  return true;
}

// The unit written as token j after the number token i, or nullptr.
const Unit* unit_token(const std::vector<Token>& toks, size_t i, size_t j, std::string& written) {
  if (j >= toks.size() || !is_free(toks[j])) return nullptr;
  written = utf8_text(toks[j]);
  if (written == "in") return means_inches(toks, i, j) ? &kInch : nullptr;
  if (compass_direction(written) && street_after(toks, j) != Street::none) return nullptr;
  return find_unit(written);
}

// Whether the quote mark at token j closes a quotation opened before it on the line (then it is no mark
// of feet or inches). Straight quotes open and close in turn, curly ones say which they are. A double
// quote counts wherever it is (ARGS="--mode x"); a single one only as a token of its own, since inside a
// word it is an apostrophe.
bool closes_quotation(const std::vector<Token>& toks, size_t j, bool double_quote) {
  const char32_t straight = double_quote ? U'"' : U'\'';
  const char32_t opening = double_quote ? U'\u201c' : U'\u2018';
  const char32_t closing = double_quote ? U'\u201d' : U'\u2019';
  bool open = false;
  for (size_t k = 0; k < j; ++k) {
    const std::u32string& t = toks[k].text;
    if (!double_quote && t.size() != 1) continue;
    for (char32_t c : t) {
      if (c == straight) open = !open;
      if (c == opening) open = true;
      if (c == closing) open = false;
    }
  }
  return open;
}

enum class Mark { none, feet, inches };

Mark mark_of(char32_t c) {
  if (c == U'\'' || c == U'\u2032' || c == U'\u2019') return Mark::feet;
  if (c == U'"' || c == U'\u2033' || c == U'\u201d') return Mark::inches;
  return Mark::none;
}

// A mark token joined to the number before it at j, that is not a quotation's end.
Mark mark_token(const std::vector<Token>& toks, size_t j) {
  if (j >= toks.size() || !is_free(toks[j]) || toks[j].text.size() != 1 || !joined(toks, j - 1)) return Mark::none;
  const char32_t c = toks[j].text[0];
  const Mark m = mark_of(c);
  const bool prime = c == U'\u2032' || c == U'\u2033';
  if (m != Mark::none && !prime && closes_quotation(toks, j, m == Mark::inches)) return Mark::none;
  return m;
}

// Leading number of a UTF-8 word ("5'6" -> "5"); its length in bytes.
size_t number_prefix(const std::string& w) {
  size_t k = 0;
  while (k < w.size() && (std::isdigit(static_cast<unsigned char>(w[k])) || w[k] == '.')) ++k;
  return k > 0 && is_plain_number(w.substr(0, k)) ? k : 0;
}

Words length_words(const std::string& number, const Unit& unit, bool singular) {
  Words w = number_words(number);
  append(w, split_words(singular || is_singular(number) ? unit.one : unit.many));
  return w;
}

// 6', 5'6", 5' 6", 12", 5′6″, 5’6” (feet and inches written with marks) at token i; returns the index after
// what it replaced, or i when there is none.
size_t feet_and_inches(std::vector<Token>& toks, size_t i) {
  const std::u32string& t = toks[i].text;
  const std::string w = utf8_text(toks[i]);
  const size_t n1 = number_prefix(w);
  if (n1 == 0) return i;
  std::string feet, inches;
  size_t end = i + 1;
  if (n1 == w.size()) {
    // "6" "'" ["5" "\""]  or  "12" "\""
    const Mark m = mark_token(toks, i + 1);
    if (m == Mark::none) return i;
    (m == Mark::feet ? feet : inches) = w;
    end = i + 2;
    if (m == Mark::feet && end < toks.size() && is_free(toks[end]) && all_digits(ascii(toks[end])) &&
        ascii(toks[end]).size() <= 2 && mark_token(toks, end + 1) == Mark::inches) {
      inches = ascii(toks[end]);
      end += 2;
    }
  } else {
    // One token: "5'6", "5′6″", "6′" (a closing '"' may follow as its own token).
    const std::u32string rest = t.substr(n1);
    if (rest.empty() || mark_of(rest[0]) != Mark::feet) return i;
    const std::string after = utf8::encode(rest.substr(1));
    const size_t n2 = number_prefix(after);
    if (n2 != after.size() && !(n2 > 0 && utf8::to_u32(after.substr(n2)).size() == 1 &&
                                mark_of(utf8::to_u32(after.substr(n2))[0]) == Mark::inches))
      return i;
    feet = w.substr(0, n1);
    inches = after.substr(0, n2);
    if (!inches.empty() && n2 == after.size() && mark_token(toks, i + 1) == Mark::inches) end = i + 2;
  }
  const bool before_noun = describes_noun(toks, i, end);  // "a 12" ruler": a twelve inch ruler
  Words words;
  if (!feet.empty()) append(words, length_words(feet, kFoot, before_noun));
  if (!inches.empty()) append(words, length_words(inches, kInch, before_noun));
  return replace(toks, i, end, words);
}

}  // namespace

void normalize_units(std::vector<Token>& toks, const Dialect& d) {
  for (size_t i = 0; i < toks.size(); ++i) {
    if (!is_free(toks[i]) || toks[i].text.empty()) continue;
    const char32_t first = toks[i].text[0];
    if (!(first >= U'0' && first <= U'9') && first != U'-' && first != U'.') continue;
    if (const size_t after = feet_and_inches(toks, i); after != i) {
      i = after - 1;
      continue;
    }
    const std::string w = utf8_text(toks[i]);
    std::string num, unit_text;
    const Unit* unit = nullptr;
    size_t end;
    bool sentence_end = false;
    // "5km", "20°C", "-5°F": the number and the unit in one token.
    size_t k = 0;
    while (k < w.size() && (std::isdigit(static_cast<unsigned char>(w[k])) || w[k] == '.' || w[k] == ',' || (k == 0 && w[k] == '-')))
      ++k;
    if (k > 0 && k < w.size() && is_plain_number(w.substr(0, k)) &&
        (find_unit(w.substr(k)) || w.substr(k) == "in")) {
      num = w.substr(0, k);
      unit_text = w.substr(k);
      unit = unit_text == "in" ? &kInch : find_unit(unit_text);  // "2in" written together is never "in"
      end = i + 1;
    } else if (is_plain_number(w) && (unit = unit_token(toks, i, i + 1, unit_text))) {
      num = w;
      end = i + 2;
      // "6 ft. tall": the abbreviation's period, not a sentence end.
      if (joined(toks, i + 1) && is_one_of(toks, end, {"."}) && end + 1 < toks.size() &&
          starts_lower_or_digit(toks[end + 1]))
        ++end;
    } else if (is_plain_number(w) && i + 1 < toks.size() && is_free(toks[i + 1]) && toks[i + 1].text.size() >= 2 &&
               toks[i + 1].text.back() == U'.' &&
               find_unit(utf8_text(toks[i + 1]).substr(0, utf8_text(toks[i + 1]).size() - 1))) {
      // "200 m." at the end of a sentence: the tokenizer keeps "m." whole (a single letter with a period).
      num = w;
      unit_text = utf8_text(toks[i + 1]);
      unit_text.pop_back();
      unit = find_unit(unit_text);
      end = i + 2;
      sentence_end = i + 2 >= toks.size() || !starts_lower_or_digit(toks[i + 2]);
    } else {
      // "500 W Main St": West, and the number is the house's (misaki reads it).
      if (is_plain_number(w) && i + 1 < toks.size() && is_free(toks[i + 1]) && compass_direction(ascii(toks[i + 1])) &&
          street_after(toks, i + 1) == Street::name)
        read_as(toks, i + 1, compass_direction(ascii(toks[i + 1])));
      continue;
    }
    // A bare "s" after a number is a plural ("the 1990 s"?) only when written apart; "5s" is "fives".
    if (unit_text == "s" && end == i + 1) continue;
    // Before the noun it measures a unit is singular, as in "a 12-inch ruler": "a 60 W bulb", "a 5 km run".
    const bool singular = is_singular(num) || describes_noun(toks, i, end);
    std::string name = singular ? unit->one : unit->many;
    // "km/h": a second unit after a slash makes a rate.
    if (end + 1 < toks.size() && joined(toks, end - 1) && is_one_of(toks, end, {"/"}) && joined(toks, end) &&
        is_free(toks[end + 1])) {
      if (const char* per = find_per(ascii(toks[end + 1]))) {
        name += std::string(" per ") + per;
        end += 2;
      }
    }
    if (d.british) name = british_spelling(name);
    Words words = number_words(num);
    append(words, split_words(name));
    if (sentence_end) words.emplace_back(".");
    i = replace(toks, i, end, words) - 1;
    // "10 in x 12 in", "3 m × 4 m": the sign between two measures is "by".
    if (i + 2 < toks.size() && said_as(toks[i + 1], {U"x", U"\u00d7", U"X"}) && is_free(toks[i + 1]) &&
        !toks[i + 2].text.empty() && text::is_decimal_digit(toks[i + 2].text[0]))
      read_as(toks, i + 1, "by");
  }
}

}  // namespace kokoro::en::norm
