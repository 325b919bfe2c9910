// The Frontend end to end: segments, offsets, streaming policy, other languages, and bad input (every
// case must return promptly with a clear result; timing itself is measured in bench/).
#include <gtest/gtest.h>

#include <random>
#include <string>

#include "core/error.h"
#include "frontend/frontend.h"
#include "frontend/utf8.h"

using namespace kokoro;

namespace {

const Frontend& english() {
  static const Frontend fe(FrontendOptions{});
  return fe;
}

std::string all_phonemes(const std::vector<Segment>& segs) {
  std::string s;
  for (const auto& seg : segs) s += (s.empty() ? "" : " | ") + seg.phonemes;
  return s;
}

// Invariants every segmentation must satisfy, whatever the input.
void check_segments(std::string_view text, const std::vector<Segment>& segs, size_t max_phonemes = 510) {
  size_t last_end = 0;
  for (const auto& seg : segs) {
    if (seg.phonemes.empty()) {  // a pause-only segment (text with nothing speakable)
      EXPECT_GT(seg.pause_before, 0.0);
      EXPECT_TRUE(seg.words.empty());
      continue;
    }
    EXPECT_LE(utf8::count_code_points(seg.phonemes), max_phonemes);
    EXPECT_TRUE(utf8::is_valid(seg.phonemes));
    EXPECT_TRUE(utf8::is_valid(seg.text));
    EXPECT_NE(seg.phonemes.front(), ' ');
    EXPECT_NE(seg.phonemes.back(), ' ');
    EXPECT_LE(seg.text_begin, seg.text_end);
    EXPECT_LE(seg.text_end, text.size());
    EXPECT_GE(seg.text_begin, last_end > 0 ? 0 : 0);
    for (const auto& w : seg.words) {
      EXPECT_LE(w.text_begin, w.text_end);
      EXPECT_GE(w.text_begin, seg.text_begin);
      EXPECT_LE(w.text_end, seg.text_end);
      EXPECT_LT(w.phoneme_begin, w.phoneme_end);
      EXPECT_LE(w.phoneme_end, seg.phonemes.size());
    }
    last_end = seg.text_end;
  }
}

}  // namespace

TEST(Frontend, SentenceWithWordSpans) {
  const std::string text = "Hello world! Dr. Smith paid $5.";
  const auto segs = english().segment(text);
  ASSERT_EQ(segs.size(), 1u);
  const Segment& s = segs[0];
  EXPECT_EQ(s.phonemes, "həlˈO wˈɜɹld! dˈɑktəɹ smˈɪθ pˈAd fˈIv dˈɑləɹz.");
  EXPECT_EQ(s.text, text);
  EXPECT_EQ(s.text_begin, 0u);
  EXPECT_EQ(s.text_end, text.size());
  ASSERT_EQ(s.words.size(), 6u);
  auto word = [&](size_t i) { return text.substr(s.words[i].text_begin, s.words[i].text_end - s.words[i].text_begin); };
  auto ps = [&](size_t i) {
    return s.phonemes.substr(s.words[i].phoneme_begin, s.words[i].phoneme_end - s.words[i].phoneme_begin);
  };
  EXPECT_EQ(word(0), "Hello");
  EXPECT_EQ(ps(0), "həlˈO");
  EXPECT_EQ(word(2), "Dr.");
  EXPECT_EQ(ps(2), "dˈɑktəɹ");
  EXPECT_EQ(word(5), "5");
  EXPECT_EQ(ps(5), "fˈIv dˈɑləɹz");
}

TEST(Frontend, NormalizesNumbersCurrencyAndSymbols) {
  auto ps = [](const std::string& t) { return all_phonemes(english().segment(t)); };
  EXPECT_EQ(ps("It rose 12.5% to 1,234 units."), "ˌɪt ɹˈOz twˈɛlv pYnt fˈIv pəɹsˈɛnt tə wˈʌn θˈWzᵊnd tˈu hˈʌndɹəd θˈɜɹTi fˈɔɹ jˈunəts.");
  EXPECT_EQ(ps("the 3rd time in 1999"), "ðə θˈɜɹd tˈIm ɪn nˌIntˈin nˈIndi nˈIn");
  EXPECT_EQ(ps("£3.50"), "θɹˈi pˈWndz ænd fˈɪfti pˈɛns");
  EXPECT_EQ(ps("rock & roll"), "ɹˈɑk ænd ɹˈOl");
  EXPECT_EQ(ps("-5"), "mˈInəs fˈIv");
  EXPECT_EQ(ps("Wait... what -- really?"), "wˈAt... wˌʌt — ɹˈiᵊli?");
  EXPECT_EQ(ps("mail me@example.com"), "mˈAl mˌi æt ɪɡzˈæmpəl dˈɑt kˈɑm");
}

TEST(Frontend, NewlinesSeparateSegmentsAndOffsetsPointIntoTheInput) {
  const std::string text = "  First line.\n\nSecond line here.\n";
  const auto segs = english().segment(text);
  ASSERT_EQ(segs.size(), 2u);
  EXPECT_EQ(segs[0].text, "First line.");
  EXPECT_EQ(text.substr(segs[1].text_begin, segs[1].text_end - segs[1].text_begin), "Second line here.");
  check_segments(text, segs);
}

TEST(Frontend, LongTextIsChunkedAtSentenceEnds) {
  std::string text;
  for (int i = 0; i < 40; ++i) text += "The committee will publish its final report at the end of the year. ";
  const auto segs = english().segment(text);
  ASSERT_GT(segs.size(), 1u);
  check_segments(text, segs);
  for (const auto& s : segs) EXPECT_EQ(s.phonemes.back(), '.') << s.phonemes;
}

TEST(Frontend, FirstSegmentIsShortForStreaming) {
  FrontendOptions opt;
  opt.first_segment_max_words = 4;
  const Frontend fe(opt);
  const std::string text = "By Tuesday, the storm had knocked out power to thousands of homes, officials said.";
  const auto segs = fe.segment(text);
  ASSERT_GE(segs.size(), 2u);
  EXPECT_EQ(segs[0].text, "By Tuesday,");  // cut at the clause boundary within the first four words
  EXPECT_LE(segs[0].words.size(), 4u);
  check_segments(text, segs);
  // A clause boundary that keeps less than half of the words is passed over: so short a first segment
  // would play out before the rest of its sentence is synthesized.
  const auto well = fe.segment("Well, the storm knocked out power to thousands of homes.");
  ASSERT_GE(well.size(), 2u);
  EXPECT_EQ(well[0].text, "Well, the storm knocked");
  // Without a clause boundary the first segment ends at a word boundary.
  const auto plain = fe.segment("one two three four five six seven eight nine ten");
  ASSERT_EQ(plain.size(), 2u);
  EXPECT_EQ(plain[0].text, "one two three four");
  EXPECT_EQ(plain[1].text, "five six seven eight nine ten");
}

// Slice mode's segmentation: the first sentence is a segment of its own, the rest packed as the reference
// packs it (up to 510 phonemes), a closing quote stays with its sentence, the phonemes are the same, and a
// first sentence longer than the limit is still cut there. Without the flag the reference's segments.
TEST(Frontend, FirstSentenceAloneThenTheReferencesPacking) {
  const std::string text =
      "The storm had passed by morning. \u201cFishermen counted the boats.\u201d The pier lost planks. A lamp fell.";
  const auto reference = english().segment(text);
  ASSERT_EQ(reference.size(), 1u) << "fits in one segment";
  const auto alone = english().segment(text, true);
  ASSERT_EQ(alone.size(), 2u) << all_phonemes(alone);
  EXPECT_EQ(alone[0].text, "The storm had passed by morning.");
  EXPECT_EQ(alone[1].text, "\u201cFishermen counted the boats.\u201d The pier lost planks. A lamp fell.");
  EXPECT_EQ(alone[0].phonemes + " " + alone[1].phonemes, reference[0].phonemes);
  check_segments(text, alone);
  // A quoted question that the sentence goes on after ("... asked Maria") is not cut there, nor a quotation
  // before its attribution ("... Tom asked.").
  const auto quoted = english().segment("\"Is this the address?\" Tom asked. The driver nodded.", true);
  ASSERT_EQ(quoted.size(), 2u) << all_phonemes(quoted);
  EXPECT_EQ(quoted[0].text, "\"Is this the address?\" Tom asked.");
  const auto dialogue = english().segment("\"Where are the keys?\" asked Maria. She looked everywhere.", true);
  ASSERT_EQ(dialogue.size(), 2u) << all_phonemes(dialogue);
  EXPECT_EQ(dialogue[0].text, "\"Where are the keys?\" asked Maria.");
  // One sentence, or none ended: as the reference.
  EXPECT_EQ(all_phonemes(english().segment("Just one sentence here.", true)),
            all_phonemes(english().segment("Just one sentence here.")));
  EXPECT_EQ(english().segment("no end mark at all", true).size(), 1u);
  // Only the first line's first sentence (each line is its own segment anyway).
  const auto lines = english().segment("One. Two.\nThree. Four.", true);
  ASSERT_EQ(lines.size(), 3u) << all_phonemes(lines);
  EXPECT_EQ(lines[0].text, "One.");
  EXPECT_EQ(lines[2].text, "Three. Four.");
  // A first sentence beyond 510 phonemes is cut by the limit, then packing goes on as the reference's.
  std::string long_first;
  for (int i = 0; i < 30; ++i) long_first += "the committee will publish its report, ";
  long_first += "finally. Short one.";
  const auto cut = english().segment(long_first, true);
  check_segments(long_first, cut);
  EXPECT_EQ(all_phonemes(cut), all_phonemes(english().segment(long_first)));
}

// After a cut, the segments that follow end at sentence ends while the next sentence would make them hold
// more than segment_growth_after_cut times the phonemes before them, and keep a sentence whole when it
// alone is longer (issue 16's paragraph: 6 words, the rest of that sentence, then one sentence each).
// Without the growth rule they are grouped up to max_phonemes as the reference groups them; without a cut
// the rule changes nothing. The phonemes are the same in every case.
TEST(Frontend, AfterACutLaterSegmentsAreWholeSentencesThatGrow) {
  const std::string text =
      "The storm had passed by morning, and the village slowly woke to a bright and quiet sky. Fishermen walked "
      "down to the harbor to count the boats, and they found that every one of them had held its mooring "
      "through the night, although the old wooden pier had lost several planks and a lamp post lay across the "
      "path. By noon the children were already playing on the wet sand, the baker had opened his shop with the "
      "windows wide, and the mayor stood on the steps of the town hall explaining, to anyone who would listen, "
      "that the new sea wall had paid for itself ten times over, even if nobody had believed him when he first "
      "asked the council for the money three long years ago.";
  const auto segment = [&](size_t first_words, double growth) {
    FrontendOptions opt;
    opt.first_segment_max_words = first_words;
    opt.segment_growth_after_cut = growth;
    const auto segs = Frontend(opt).segment(text);
    check_segments(text, segs);
    return segs;
  };
  const auto joined = [](const std::vector<Segment>& segs) {
    std::string s;
    for (const auto& seg : segs) s += (s.empty() ? "" : " ") + seg.phonemes;
    return s;
  };
  const auto grown = segment(6, 2.0);
  ASSERT_EQ(grown.size(), 4u) << all_phonemes(grown);
  EXPECT_EQ(grown[0].text, "The storm had passed by morning,");
  EXPECT_EQ(grown[1].text, "and the village slowly woke to a bright and quiet sky.");
  EXPECT_EQ(grown[2].text.substr(0, 9), "Fishermen");
  EXPECT_EQ(grown[3].text.substr(0, 7), "By noon");
  size_t before = utf8::count_code_points(grown[0].phonemes);
  for (size_t i = 1; i < grown.size(); ++i) {
    const std::string& ps = grown[i].phonemes;
    EXPECT_EQ(ps.back(), '.') << "segment " << i << " ends a sentence";
    const size_t n = utf8::count_code_points(ps);
    const bool one_sentence = ps.find_first_of(".!?") == ps.size() - 1;
    EXPECT_TRUE(n <= 2 * before || one_sentence) << "segment " << i << ": " << n << " phonemes after " << before;
    before += n;
  }
  const auto reference_grouping = segment(6, 0);
  ASSERT_EQ(reference_grouping.size(), 3u) << "the rest of the first sentence joins the second";
  EXPECT_EQ(joined(reference_grouping), joined(grown));
  EXPECT_EQ(all_phonemes(segment(0, 2.0)), all_phonemes(segment(0, 0))) << "no cut, no change";
}

TEST(Frontend, BritishEnglish) {
  FrontendOptions opt;
  opt.language = "en-gb";
  const Frontend fe(opt);
  EXPECT_EQ(all_phonemes(fe.segment("The tomato is red.")), "ðə təmˈɑːtQ ɪz ɹˈɛd.");
}

TEST(Frontend, OtherLanguagesGoThroughEspeak) {
  for (const char* lang : {"es", "fr-fr", "hi", "it", "pt-br"}) {
    FrontendOptions opt;
    opt.language = lang;
    const Frontend fe(opt);
    const std::string text = "Hola amigo. 25.";
    const auto segs = fe.segment(text);
    ASSERT_FALSE(segs.empty()) << lang;
    check_segments(text, segs);
    EXPECT_FALSE(segs[0].words.empty()) << lang;
  }
  FrontendOptions es;
  es.language = "es";
  EXPECT_EQ(all_phonemes(Frontend(es).segment("Hola, ¿cómo estás?")), "ˈola, ¿kˈomo estˈas?");
}

TEST(Frontend, RejectsUnknownLanguagesAndBadOptions) {
  FrontendOptions opt;
  opt.language = "xx-yy";
  EXPECT_THROW(Frontend{opt}, Error);
  opt.language = "en-us";
  opt.max_phonemes = 0;
  EXPECT_THROW(Frontend{opt}, Error);
  opt.max_phonemes = 511;
  EXPECT_THROW(Frontend{opt}, Error);
  opt.max_phonemes = 510;
  opt.assets_dir = "/nonexistent/assets";
  EXPECT_THROW(Frontend{opt}, Error);
}

TEST(FrontendBadInput, EmptyAndWhitespaceGiveNoSegments) {
  EXPECT_TRUE(english().segment("").empty());
  EXPECT_TRUE(english().segment(" \t\n\r\n   \n").empty());
  EXPECT_TRUE(english().segment("\x01\x02\x7f").empty());
}

TEST(FrontendBadInput, InvalidUtf8IsReadAsSilentReplacementCharacters) {
  const std::string text = "Hello \xff\xfe wor\xc3ld \xe2\x82 end \xed\xa0\x80.";
  const auto segs = english().segment(text);
  ASSERT_EQ(segs.size(), 1u);
  check_segments(text, segs);
  EXPECT_EQ(segs[0].phonemes.substr(0, 7), "həlˈO");
  EXPECT_NE(segs[0].text.find("\xEF\xBF\xBD"), std::string::npos);  // U+FFFD in the valid copy
}

// libespeak-ng 1.51 frees memory it still reads when it names these characters (fuzzer find, see
// frontend/espeak.cpp); the frontend leaves them unread, so under ASan (scripts/sanitize.sh, the fuzz job)
// these inputs prove the guard, and here they prove the words around them are still read.
TEST(FrontendBadInput, CharactersEspeakMishandlesAreLeftUnread) {
  const char* cases[] = {"x\u058B% ok", "\u09E6 ok", "\u0BE6$ ok", "\u1180\u20AC ok", "\u10C6 ok", "\u0970 ok"};
  for (const char* text : cases) {
    const auto segs = english().segment(text);
    check_segments(text, segs);
    const std::string ph = all_phonemes(segs);
    EXPECT_NE(ph.find("ˌOkˈA"), std::string::npos) << text << " -> " << ph;
    EXPECT_EQ(ph.find("ɑːɹmˈiːniən"), std::string::npos) << "espeak named a character it must not see: " << ph;
  }
  // Devanagari itself is still read (the "hi" voice needs it), as is Armenian's neighbour Hebrew.
  EXPECT_FALSE(all_phonemes(english().segment("\u0915")).empty());
  EXPECT_FALSE(all_phonemes(english().segment("\u05D0")).empty());
}

TEST(FrontendBadInput, ControlCharactersAreSpaces) {
  EXPECT_EQ(all_phonemes(english().segment("Hello\x01\x07world")), all_phonemes(english().segment("Hello world")));
}

TEST(FrontendBadInput, EmojiAreSilentAndRtlScriptsDoNotBreakAnything) {
  // Emoji are read by name through espeak-ng, as the official pipeline does; U+FFFD stays silent.
  const std::string emoji = all_phonemes(english().segment("I 😀 you"));
  EXPECT_EQ(emoji.substr(0, 4), "ˌI ");
  EXPECT_GT(emoji.size(), std::string("ˌI ju").size());
  // A silent token keeps its space, as KPipeline joins tokens.
  EXPECT_EQ(all_phonemes(english().segment("I \xEF\xBF\xBD you")), "ˌI  ju");
  const std::string rtl = "مرحبا بالعالم. שלום עולם! Hello.";
  const auto segs = english().segment(rtl);
  check_segments(rtl, segs);
  ASSERT_FALSE(segs.empty());
  EXPECT_NE(segs.back().phonemes.find("həlˈO."), std::string::npos);
}

TEST(FrontendBadInput, TenThousandDigitNumberIsReadInBoundedSegments) {
  std::mt19937 rng(1);
  std::string text = "Call 1";
  for (int i = 0; i < 9999; ++i) text.push_back(static_cast<char>('0' + rng() % 10));
  text += " now.";
  const auto segs = english().segment(text);
  check_segments(text, segs);
  EXPECT_GT(segs.size(), 50u);  // every digit is read
  EXPECT_LT(segs.size(), 200u);
}

TEST(FrontendBadInput, FiveThousandLetterWordIsReadInBoundedSegments) {
  std::mt19937 rng(2);
  std::string text = "A ";
  for (int i = 0; i < 5000; ++i) text.push_back(static_cast<char>('a' + rng() % 26));
  text += " word.";
  const auto segs = english().segment(text);
  check_segments(text, segs);
  ASSERT_FALSE(segs.empty());
}

TEST(FrontendBadInput, OneMegabyteSingleLine) {
  std::string text;
  while (text.size() < (1u << 20)) text += "The quick brown fox jumps over the lazy dog, and Dr. Smith paid $5.50 at 3:45. ";
  const auto segs = english().segment(text);
  check_segments(text, segs);
  EXPECT_GT(segs.size(), 1000u);
}
