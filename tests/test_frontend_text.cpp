// Building blocks of the frontend: UTF-8 decoding, number names, misaki's sub-token splitting and
// stress rules. Expected values are misaki's / num2words' outputs for the same inputs.
#include <gtest/gtest.h>

#include "frontend/number_words.h"
#include "frontend/stress.h"
#include "frontend/subtokenize.h"
#include "frontend/utf8.h"

using namespace kokoro;

namespace {

std::string join(const en::Words& w) {
  std::string s;
  for (const auto& x : w) s += (s.empty() ? "" : " ") + x;
  return s;
}

std::vector<std::u32string> pieces(std::u32string_view w) {
  std::vector<std::u32string> out;
  for (const auto& p : en::subtokenize(w)) out.emplace_back(w.substr(p.begin, p.end - p.begin));
  return out;
}

}  // namespace

TEST(Utf8, DecodesValidTextWithOffsets) {
  const auto cps = utf8::decode("aé€😀");
  ASSERT_EQ(cps.size(), 4u);
  EXPECT_EQ(cps[1].cp, U'é');
  EXPECT_EQ(cps[1].begin, 1u);
  EXPECT_EQ(cps[1].end, 3u);
  EXPECT_EQ(cps[3].cp, U'😀');
  EXPECT_EQ(cps[3].end, 10u);
  EXPECT_TRUE(utf8::is_valid("aé€😀"));
}

TEST(Utf8, InvalidBytesBecomeReplacementCharactersOneByteEach) {
  // stray continuation, truncated 2-byte, overlong '/', surrogate, above U+10FFFF
  const std::string bad = "\x80" "\xC3" "x" "\xC0\xAF" "\xED\xA0\x80" "\xF4\x90\x80\x80";
  EXPECT_FALSE(utf8::is_valid(bad));
  const auto cps = utf8::decode(bad);
  size_t replacements = 0;
  for (const auto& c : cps) {
    if (c.cp == utf8::kReplacement) {
      ++replacements;
      EXPECT_EQ(c.end - c.begin, 1u);
    }
  }
  EXPECT_EQ(cps.size(), bad.size());  // every byte on its own
  EXPECT_EQ(replacements, bad.size() - 1);
  EXPECT_EQ(cps[2].cp, U'x');
  EXPECT_TRUE(utf8::is_valid(utf8::encode(utf8::to_u32(bad))));
  EXPECT_TRUE(utf8::is_valid("\xEF\xBF\xBD"));  // a real U+FFFD is valid
}

TEST(NumberWords, CardinalsAsNum2words) {
  EXPECT_EQ(join(en::cardinal_words("0")), "zero");
  EXPECT_EQ(join(en::cardinal_words("7")), "seven");
  EXPECT_EQ(join(en::cardinal_words("42")), "forty two");
  EXPECT_EQ(join(en::cardinal_words("100")), "one hundred");
  EXPECT_EQ(join(en::cardinal_words("1234")), "one thousand two hundred thirty four");
  EXPECT_EQ(join(en::cardinal_words("8336817")),
            "eight million three hundred thirty six thousand eight hundred seventeen");
  EXPECT_EQ(join(en::cardinal_words("1000000000")), "one billion");
  EXPECT_EQ(join(en::cardinal_words("007")), "seven");
  // Beyond decillions: digit by digit.
  EXPECT_EQ(en::cardinal_words(std::string(40, '9')).size(), 40u);
}

TEST(NumberWords, OrdinalsYearsDecimals) {
  EXPECT_EQ(join(en::ordinal_words("1")), "first");
  EXPECT_EQ(join(en::ordinal_words("21")), "twenty first");
  EXPECT_EQ(join(en::ordinal_words("100")), "one hundredth");
  EXPECT_EQ(join(en::ordinal_words("12")), "twelfth");
  EXPECT_EQ(join(en::ordinal_words("30")), "thirtieth");
  EXPECT_EQ(join(en::year_words("1999")), "nineteen ninety nine");
  EXPECT_EQ(join(en::year_words("1905")), "nineteen oh five");
  EXPECT_EQ(join(en::year_words("1600")), "sixteen hundred");
  EXPECT_EQ(join(en::year_words("2000")), "two thousand");
  EXPECT_EQ(join(en::year_words("2008")), "two thousand eight");
  EXPECT_EQ(join(en::year_words("2024")), "twenty twenty four");
  EXPECT_EQ(join(en::decimal_words("3", "14159")), "three point one four one five nine");
  EXPECT_EQ(join(en::decimal_words("2", "50")), "two point five");
  EXPECT_EQ(join(en::decimal_words("2", "0")), "two");  // num2words reads integral floats as integers
  EXPECT_EQ(join(en::decimal_words("0", "25")), "zero point two five");
}

TEST(Subtokenize, SplitsAsMisakisRegex) {
  using V = std::vector<std::u32string>;
  EXPECT_EQ(pieces(U"don't"), (V{U"don't"}));
  EXPECT_EQ(pieces(U"10km"), (V{U"10", U"km"}));
  EXPECT_EQ(pieces(U"3:45"), (V{U"3", U":", U"45"}));
  EXPECT_EQ(pieces(U"1,234,567.89"), (V{U"1,234,567.89"}));
  EXPECT_EQ(pieces(U"-5"), (V{U"-5"}));
  EXPECT_EQ(pieces(U"win-win"), (V{U"win", U"-", U"win"}));
  EXPECT_EQ(pieces(U"iPhone"), (V{U"i", U"Phone"}));
  EXPECT_EQ(pieces(U"McDonald's"), (V{U"Mc", U"Donald's"}));
  EXPECT_EQ(pieces(U"HTTPServer"), (V{U"HTTPServer"}));  // the letter run wins at position 0
  EXPECT_EQ(pieces(U"ABCdef"), (V{U"ABCdef"}));
  EXPECT_EQ(pieces(U"aBC"), (V{U"a", U"BC"}));
  EXPECT_EQ(pieces(U"x--y"), (V{U"x", U"--", U"y"}));
  EXPECT_EQ(pieces(U"''quoted''"), (V{U"''", U"quoted", U"''"}));
  EXPECT_EQ(pieces(U"'98"), (V{U"'", U"98"}));
  EXPECT_EQ(pieces(U"dogs'"), (V{U"dogs", U"'"}));
  EXPECT_EQ(pieces(U"e.g."), (V{U"e", U".", U"g", U"."}));
  EXPECT_TRUE(pieces(U"").empty());
}

TEST(Stress, LevelsAsMisaki) {
  EXPECT_EQ(en::apply_stress(U"ˈɪntəɹˌɛst", std::nullopt), U"ˈɪntəɹˌɛst");
  EXPECT_EQ(en::apply_stress(U"ˈɪntəɹˌɛst", -2), U"ɪntəɹɛst");
  EXPECT_EQ(en::apply_stress(U"ˈɪntəɹˌɛst", -1), U"ˌɪntəɹɛst");
  EXPECT_EQ(en::apply_stress(U"hmm", 0), U"hmm");  // no vowel: unchanged
  EXPECT_EQ(en::apply_stress(U"pYnt", 0.5), U"pˌYnt");  // secondary stress moves before the vowel
  EXPECT_EQ(en::apply_stress(U"pYnt", 2), U"pˈYnt");
  EXPECT_EQ(en::apply_stress(U"ˌæn", 1), U"ˈæn");
  EXPECT_EQ(en::stress_weight(U"ʤˈOk"), 6);
}
