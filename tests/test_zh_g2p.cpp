// Mandarin G2P (frontend/zh_*.h) against misaki's ZHG2P as KPipeline 0.9.4 runs it for Kokoro-82M v1.0,
// on tests/data/zh/corpus.txt; the expected phonemes come from tools/reference-zh (PyPI misaki 0.9.4).
//
// Sentence level: the whole phoneme string is identical once both keep only vocabulary symbols and single
// spaces (what the model receives). Character level: each ideograph of the normalised text with its
// reading, aligned with the reference's by longest common subsequence; agreement = matched / reference
// characters. Both numbers are printed; KOKORO_ZH_VERBOSE=1 prints every differing sentence. Needs the
// dictionary zh.kozh (scripts/fetch-assets builds it); fails loudly without it.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <string>
#include <vector>

#include "core/assets.h"
#include "frontend/frontend.h"
#include "frontend/ja_latin.h"
#include "frontend/utf8.h"
#include "frontend/voice_language.h"
#include "frontend/zh_g2p.h"
#include "frontend/zh_normalize.h"
#include "frontend/zh_pinyin.h"
#include "tests/agreement_util.h"

namespace {

using kokoro::test::lcs;

using kokoro::utf8::encode;
using kokoro::utf8::to_u32;

const kokoro::zh::G2P& g2p() {
  static const std::unique_ptr<kokoro::zh::G2P> instance = kokoro::zh::G2P::load("");
  return *instance;
}

// As the Frontend builds it: Latin words read by the English G2P.
const kokoro::zh::G2P& g2p_with_english() {
  static const std::unique_ptr<kokoro::zh::G2P> instance = kokoro::zh::G2P::load(
      kokoro::find_assets_dir(""), kokoro::ja::english_reader(kokoro::find_assets_dir(""), true));
  return *instance;
}

const kokoro::Vocab& vocab() {
  static const kokoro::Vocab v = kokoro::Vocab::load(kokoro::find_assets_dir("") + "/config.json");
  return v;
}

// Vocabulary symbols only, single spaces, no outer spaces.
std::string model_view(const std::string& ps) {
  std::u32string out;
  for (char32_t c : to_u32(ps)) {
    if (c == U' ' || c == U'\t') {
      if (!out.empty() && out.back() != U' ') out.push_back(U' ');
    } else if (vocab().id(c)) {
      out.push_back(c);
    }
  }
  while (!out.empty() && out.back() == U' ') out.pop_back();
  return encode(out);
}

std::vector<std::string> split(const std::string& s, char sep) {
  std::vector<std::string> out;
  size_t i = 0;
  while (i <= s.size()) {
    size_t j = s.find(sep, i);
    if (j == std::string::npos) j = s.size();
    if (j > i) out.push_back(s.substr(i, j - i));
    i = j + 1;
  }
  return out;
}

TEST(ZhG2P, AgreesWithMisakiOnTheCorpus) {
  // KOKORO_ZH_CORPUS_DIR: another directory with corpus.txt and expected.txt (development checks).
  const char* other = std::getenv("KOKORO_ZH_CORPUS_DIR");
  const std::string dir = other ? std::string(other) + "/" : std::string(KOKORO_SOURCE_DIR) + "/tests/data/zh/";
  std::ifstream corpus(dir + "corpus.txt"), expected(dir + "expected.txt");
  ASSERT_TRUE(corpus && expected) << "missing " << dir << "corpus.txt or expected.txt";
  const bool verbose = std::getenv("KOKORO_ZH_VERBOSE") != nullptr;
  size_t sentences = 0, identical = 0, chars = 0, chars_matched = 0, identical_with_english = 0;
  std::string text, ref;
  while (std::getline(corpus, text)) {
    ASSERT_TRUE(std::getline(expected, ref)) << "expected.txt has fewer lines than corpus.txt";
    if (text.empty() || text[0] == '#') continue;
    ASSERT_NE(ref.rfind("!ERROR", 0), 0u) << "misaki failed on a corpus sentence: " << text;
    const size_t tab = ref.find('\t');
    ASSERT_NE(tab, std::string::npos) << "malformed expected line for " << text;
    const std::string want = model_view(ref.substr(0, tab));
    const std::string got = model_view(g2p().phonemize(text));
    ++sentences;
    if (got == want) ++identical;
    else if (verbose) std::cout << text << "\n  want " << want << "\n  got  " << got << "\n";
    if (model_view(g2p_with_english().phonemize(text)) == want) ++identical_with_english;
    std::vector<std::string> want_chars = split(ref.substr(tab + 1), ' '), got_chars;
    for (const auto& [c, ps] : g2p().character_readings(text)) got_chars.push_back(encode(std::u32string(1, c) + U":" + ps));
    chars += want_chars.size();
    chars_matched += lcs(want_chars, got_chars);
  }
  ASSERT_GE(sentences, other ? 1u : 300u);
  const double sentence_rate = double(identical) / double(sentences), char_rate = double(chars_matched) / double(chars);
  std::cout << "zh agreement with misaki: " << identical << "/" << sentences << " sentences ("
            << 100 * sentence_rate << " %), " << chars_matched << "/" << chars << " characters (" << 100 * char_rate
            << " %)\n";
  // What the Frontend gives differs by design where Latin words are read in English.
  const double english_rate = double(identical_with_english) / double(sentences);
  std::cout << "  with Latin words read in English (the Frontend): " << identical_with_english << "/" << sentences
            << " sentences identical (" << 100 * english_rate << " %)\n";
  EXPECT_GE(char_rate, 0.97);
  EXPECT_GE(sentence_rate, 0.85);
  EXPECT_GE(english_rate, 0.85);
}

TEST(ZhG2P, Syllables) {
  using kokoro::zh::numbered_pinyin;
  using kokoro::zh::syllable_ipa;
  EXPECT_EQ(numbered_pinyin(U"zhōng"), "zhong1");
  EXPECT_EQ(numbered_pinyin(U"lǜ"), "lv4");
  EXPECT_EQ(numbered_pinyin(U"de"), "de5");
  EXPECT_EQ(numbered_pinyin(U"ń"), "n2");
  EXPECT_EQ(numbered_pinyin(U"m\u0304"), "m1");
  EXPECT_EQ(numbered_pinyin(U"ā\u0301"), "");  // two tones: not a syllable
  EXPECT_EQ(encode(syllable_ipa("zhong1")), "ꭧʊ→ŋ");
  EXPECT_EQ(encode(syllable_ipa("lv4")), "ly↘");
  EXPECT_EQ(encode(syllable_ipa("ju3")), "ʨy↓");
  EXPECT_EQ(encode(syllable_ipa("yue4")), "ɥe↘");
  EXPECT_EQ(encode(syllable_ipa("you3")), "jou↓");
  EXPECT_EQ(encode(syllable_ipa("gui4")), "kwei↘");
  EXPECT_EQ(encode(syllable_ipa("shi4")), "ʂɨ↘");
  EXPECT_EQ(encode(syllable_ipa("si1")), "sɨ→");
  EXPECT_EQ(encode(syllable_ipa("er4")), "ɚ↘");
  EXPECT_EQ(encode(syllable_ipa("n2")), "n↗");
  EXPECT_EQ(encode(syllable_ipa("bo2")), "pwo↗");
  EXPECT_EQ(encode(syllable_ipa("le5")), "lɤ");
  EXPECT_EQ(encode(syllable_ipa("weng1")), "wə→ŋ");
  EXPECT_EQ(syllable_ipa("xyz1"), U"");
  EXPECT_EQ(syllable_ipa("zhong"), U"");
}

TEST(ZhG2P, NumbersAsCn2an) {
  auto num = [](std::u32string_view s) { return encode(kokoro::zh::number_to_chinese(s).value_or(U"<none>")); };
  EXPECT_EQ(num(U"0"), "零");
  EXPECT_EQ(num(U"10"), "十");
  EXPECT_EQ(num(U"15"), "十五");
  EXPECT_EQ(num(U"2024"), "二千零二十四");
  EXPECT_EQ(num(U"100000"), "十万");
  EXPECT_EQ(num(U"10086"), "一万零八十六");
  EXPECT_EQ(num(U"-3.14"), "负三点一四");
  EXPECT_EQ(num(U"007"), "七");
  EXPECT_EQ(num(U"100000000"), "一亿");
  EXPECT_EQ(num(U"12345678901234567"), "<none>");  // cn2an reads at most 16 integer digits
  auto norm = [](const std::string& s) {
    std::vector<kokoro::zh::Char> t;
    for (const auto& cp : kokoro::utf8::decode(s)) t.push_back({cp.cp, cp.begin, cp.end});
    std::u32string out;
    for (const auto& c : kokoro::zh::normalize(t)) out.push_back(c.c);
    return encode(out);
  };
  EXPECT_EQ(norm("2024年3月15日"), "二零二四年三月十五日");
  EXPECT_EQ(norm("3/4"), "四分之三");
  EXPECT_EQ(norm("12.5%"), "百分之十二点五");
  EXPECT_EQ(norm("30℃"), "三十摄氏度");
  EXPECT_EQ(norm("3-5个"), "三到五个");
  EXPECT_EQ(norm("１２３"), "一百二十三");  // full-width digits
  EXPECT_EQ(norm("你好，世界。"), "你好, 世界.");
}

// Bad input: speech or silence, never a crash, within the phoneme limit, offsets inside the text.
TEST(ZhG2P, OddInputThroughTheFrontend) {
  kokoro::FrontendOptions opt;
  opt.language = "zh";
  const kokoro::Frontend fe(opt);
  std::string long_line;
  for (int i = 0; i < 1000; ++i) long_line += "我们在2024年买了3.5斤苹果，";
  const std::vector<std::string> inputs = {
      "这是😀表情符号🎉。", "這是繁體字。", "ｉＰｈｏｎｅ１５很好用", "12345678901234567890", "\xff\xfe坏的字节",
      "Hello world 你好", "……！？", "𠀀𪚥", "。。。", long_line, std::string(10000, '9'), "ｶﾀｶﾅ"};
  for (const auto& text : inputs) {
    const auto segs = fe.segment(text);
    for (const auto& s : segs) {
      EXPECT_LE(kokoro::utf8::count_code_points(s.phonemes), opt.max_phonemes);
      EXPECT_LE(s.text_end, text.size());
      for (const auto& w : s.words) EXPECT_LE(w.text_end, text.size());
      for (char32_t c : to_u32(s.phonemes)) EXPECT_TRUE(c == U' ' || vocab().id(c)) << text.substr(0, 40);
    }
  }
  const auto segs = fe.segment(long_line);
  EXPECT_GT(segs.size(), 10u);
  EXPECT_EQ(fe.normalize("增长了3.5%，\n2024年"), "增长了百分之三点五,\n二零二四年");
  // Latin words are read in English, not passed on as written ("iPhone" was "ihone" in misaki).
  const auto mixed = fe.segment("我用iPhone拍了一张照片。");
  ASSERT_EQ(mixed.size(), 1u);
  EXPECT_EQ(mixed[0].phonemes.find("ihone"), std::string::npos) << mixed[0].phonemes;
  EXPECT_NE(mixed[0].phonemes.find("ˈIfˌOn"), std::string::npos) << mixed[0].phonemes;
  ASSERT_GE(mixed[0].words.size(), 3u);
  EXPECT_EQ(mixed[0].words[1].text_begin, std::string("我用").size());
  EXPECT_EQ(mixed[0].words[1].text_end, std::string("我用iPhone").size());
  const auto one = fe.segment("你好，世界！");
  ASSERT_EQ(one.size(), 1u);
  EXPECT_EQ(one[0].phonemes, "ni↓xau↓, ʂɨ↘ʨje↘!");
  ASSERT_EQ(one[0].words.size(), 2u);
  EXPECT_EQ(one[0].words[1].text_begin, std::string("你好，").size());
}

TEST(VoiceLanguage, MandarinVoices) {
  EXPECT_EQ(kokoro::language_for_voice("zf_xiaobei"), "zh");
  EXPECT_EQ(kokoro::language_for_voice("zm_yunjian"), "zh");
  EXPECT_EQ(kokoro::language_for_voice("/voices/zf_xiaoni.bin"), "zh");
  EXPECT_EQ(kokoro::language_for_voice("af_heart:0.6,zf_xiaobei:0.4"), "en-us");
}

}  // namespace
