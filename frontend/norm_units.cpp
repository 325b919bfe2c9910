// Units of measurement after a number, with plural agreement ("1 km" -> one kilometer, "1.5 km" ->
// one point five kilometers) and British spelling (metre, litre) for en-gb:
//   5 km, 5km, 200 m, 60 W, 3.5GHz, 100 km/h, 9.8 m/s, 30 mph, 250 mg, 5 min, 1 kWh, 500 ml
// Only after a number: a unit symbol alone ("m", "s", "W") stays a letter. Symbols that are also
// common words or letters after numbers ("in", "A", "K", "t") are not taken. Left to misaki, which reads
// them the way people say them: data sizes as letters ("16 GB" -> sixteen G B) and temperatures
// ("20°C" -> twenty degrees C).
#include <cstring>

#include "frontend/norm_passes.h"
#include "frontend/norm_support.h"
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

}  // namespace

void normalize_units(std::vector<Token>& toks, const Dialect& d) {
  for (size_t i = 0; i < toks.size(); ++i) {
    if (!is_free(toks[i]) || toks[i].text.empty()) continue;
    const char32_t first = toks[i].text[0];
    if (!(first >= U'0' && first <= U'9') && first != U'-' && first != U'.') continue;
    const std::string w = utf8_text(toks[i]);
    std::string num, unit_text;
    size_t end;
    bool sentence_end = false;
    // "5km", "20°C", "-5°F": the number and the unit in one token.
    size_t k = 0;
    while (k < w.size() && (std::isdigit(static_cast<unsigned char>(w[k])) || w[k] == '.' || w[k] == ',' || (k == 0 && w[k] == '-')))
      ++k;
    if (k > 0 && k < w.size() && is_plain_number(w.substr(0, k)) && find_unit(w.substr(k))) {
      num = w.substr(0, k);
      unit_text = w.substr(k);
      end = i + 1;
    } else if (is_plain_number(w) && i + 1 < toks.size() && is_free(toks[i + 1]) && find_unit(utf8_text(toks[i + 1]))) {
      num = w;
      unit_text = utf8_text(toks[i + 1]);
      end = i + 2;
    } else if (is_plain_number(w) && i + 1 < toks.size() && is_free(toks[i + 1]) && toks[i + 1].text.size() >= 2 &&
               toks[i + 1].text.back() == U'.' &&
               find_unit(utf8_text(toks[i + 1]).substr(0, utf8_text(toks[i + 1]).size() - 1))) {
      // "200 m." at the end of a sentence: the tokenizer keeps "m." whole (a single letter with a period).
      num = w;
      unit_text = utf8_text(toks[i + 1]);
      unit_text.pop_back();
      end = i + 2;
      sentence_end = true;
    } else {
      continue;
    }
    const Unit* unit = find_unit(unit_text);
    // A bare "s" after a number is a plural ("the 1990 s"?) only when written apart; "5s" is "fives".
    if (unit_text == "s" && end == i + 1) continue;
    const bool singular = is_singular(num);
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
  }
}

}  // namespace kokoro::en::norm
