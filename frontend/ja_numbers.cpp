#include "frontend/ja_numbers.h"

namespace kokoro::ja {

namespace {

// Readings of single digits, 十, 百, 千, 万, 億 and the sound-changed hundreds and thousands.
const char32_t* digit_reading(char d) {
  static const char32_t* const kDigits[] = {U"ゼロ", U"いち", U"に", U"さん", U"よん",
                                            U"ご",   U"ろく", U"なな", U"はち", U"きゅう"};
  return kDigits[d - '0'];
}

std::u32string one(char d) { return digit_reading(d); }

std::u32string two(std::string_view s) {
  if (s[0] == '0') return one(s[1]);
  if (s == "10") return U"じゅう";
  if (s[0] == '1') return U"じゅう" + one(s[1]);
  if (s[1] == '0') return one(s[0]) + U"じゅう";
  return one(s[0]) + U"じゅう" + one(s[1]);
}

std::u32string three(std::string_view s) {
  std::u32string out;
  switch (s[0]) {
    case '1': out = U"ひゃく"; break;
    case '3': out = U"さんびゃく"; break;
    case '6': out = U"ろっぴゃく"; break;
    case '8': out = U"はっぴゃく"; break;
    default: out = one(s[0]) + U"ひゃく";
  }
  if (s.substr(1) == "00") return out;
  return out + (s[1] == '0' ? one(s[2]) : two(s.substr(1)));
}

// `alone`: the number is just these four digits (千 is せん), not the upper part of a larger one (いっせん).
std::u32string four(std::string_view s, bool alone) {
  if (s == "0000") return U"";
  while (s[0] == '0') s.remove_prefix(1);
  if (s.size() == 1) return one(s[0]);
  if (s.size() == 2) return two(s);
  if (s.size() == 3) return three(s);
  std::u32string out;
  switch (s[0]) {
    case '1': out = alone ? U"せん" : U"いっせん"; break;
    case '3': out = U"さんぜん"; break;
    case '8': out = U"はっせん"; break;
    default: out = one(s[0]) + U"せん";
  }
  if (s.substr(1) == "000") return out;
  return out + (s[1] == '0' ? two(s.substr(2)) : three(s.substr(1)));
}

// 5 to 9 digits: 万 and 億 groups.
std::u32string large(std::string_view s) {
  const std::string_view upper = s.substr(0, s.size() - 4);
  std::u32string out;
  switch (upper.size()) {
    case 1: out = one(upper[0]) + U"まん"; break;
    case 2: out = two(upper) + U"まん"; break;
    case 3: out = three(upper) + U"まん"; break;
    case 4: out = four(upper, false) + U"まん"; break;
    default:  // 5: 億 then the 万 group
      out = one(s[0]) + U"おく" + four(s.substr(1, 4), false);
      if (s.substr(1, 4) != "0000") out += U"まん";
  }
  return out + four(s.substr(s.size() - 4), false);
}

}  // namespace

std::u32string number_to_kana(std::string_view s) {
  if (s.size() > 9) {
    std::u32string out;
    for (char d : s) out += one(d);
    return out;
  }
  while (s.size() > 1 && s[0] == '0') s.remove_prefix(1);
  switch (s.size()) {
    case 1: return one(s[0]);
    case 2: return two(s);
    case 3: return three(s);
    case 4: return four(s, true);
    default: return large(s);
  }
}

}  // namespace kokoro::ja
