// misaki's inline markup ([word](/phonemes/), [word](+1)) and the user lexicon (FrontendOptions
// lexicon_file / lexicon_entries, frontend/user_lexicon.h): what they say, their word spans, their case
// rules, that they win over the built-in readings, and their errors.
#include <gtest/gtest.h>

#include <cstdio>
#include <fstream>
#include <string>

#include "core/error.h"
#include "frontend/frontend.h"

namespace {

std::string phonemes(const kokoro::Frontend& fe, const std::string& text) {
  std::string out;
  for (const auto& seg : fe.segment(text)) out += (out.empty() ? "" : " ") + seg.phonemes;
  return out;
}

kokoro::Frontend with_entries(std::vector<std::pair<std::string, std::string>> entries, bool markup = true) {
  kokoro::FrontendOptions opt;
  opt.lexicon_entries = std::move(entries);
  opt.inline_markup = markup;
  return kokoro::Frontend(opt);
}

std::string temp_file(const std::string& name, const std::string& content) {
  const std::string path = ::testing::TempDir() + name;
  std::ofstream(path) << content;
  return path;
}

}  // namespace

TEST(InlineMarkup, PhonemesAreSpokenAsGivenWithTheWordsSpan) {
  const kokoro::Frontend fe;
  const std::string text = "Say [Kokoro](/kˈOkəɹO/) now.";
  const auto segs = fe.segment(text);
  ASSERT_EQ(segs.size(), 1u);
  EXPECT_EQ(segs[0].phonemes, phonemes(fe, "Say") + " kˈOkəɹO " + phonemes(fe, "now."));
  ASSERT_EQ(segs[0].words.size(), 3u);
  const auto& w = segs[0].words[1];
  EXPECT_EQ(text.substr(w.text_begin, w.text_end - w.text_begin), "Kokoro");
  EXPECT_EQ(segs[0].phonemes.substr(w.phoneme_begin, w.phoneme_end - w.phoneme_begin), "kˈOkəɹO");
}

TEST(InlineMarkup, SeveralWordsBecomeOneSpokenWord) {
  const kokoro::Frontend fe;
  EXPECT_EQ(phonemes(fe, "[New York](/nˈujˈɔɹk/) is big"), "nˈujˈɔɹk " + phonemes(fe, "is big"));
}

TEST(InlineMarkup, StressMarkupChangesStressOnly) {
  const kokoro::Frontend fe;
  const std::string plain = phonemes(fe, "I saw the cat.");
  const std::string marked = phonemes(fe, "I saw [the](+2) cat.");
  EXPECT_NE(plain, marked);
  // Same sounds, different stress marks: remove the marks and they agree.
  auto strip = [](std::string s) {
    for (const std::string mark : {"ˈ", "ˌ"})
      for (size_t p; (p = s.find(mark)) != std::string::npos;) s.erase(p, mark.size());
    return s;
  };
  EXPECT_EQ(strip(plain), strip(marked));
}

TEST(InlineMarkup, NotMarkupStaysText) {
  const kokoro::Frontend fe;
  // "(see below)" is not a feature: misaki reads the bracketed word and drops the parenthesis.
  EXPECT_EQ(phonemes(fe, "the [note](see below) here"), phonemes(fe, "the note here"));
  // Unclosed brackets are plain text.
  EXPECT_EQ(fe.normalize("a [b"), "a [b");
  EXPECT_EQ(fe.normalize("a [b](/"), "a [b](/");
  EXPECT_FALSE(phonemes(fe, "a [b](/").empty());
}

TEST(InlineMarkup, CanBeTurnedOff) {
  const auto fe = with_entries({}, false);
  EXPECT_EQ(fe.normalize("Say [Kokoro](/kˈOkəɹO/)"), "Say [Kokoro](/kˈOkəɹO/)");
  EXPECT_EQ(phonemes(fe, "Say [Kokoro](/kˈOkəɹO/)").find("kˈOkəɹO"), std::string::npos);
}

TEST(UserLexicon, PhonemesAndRespellingsWinOverTheBuiltInReadings) {
  const kokoro::Frontend plain;
  const auto fe = with_entries({{"tomato", "/təmˈɑtO/"}, {"nginx", "engine x"}, {"Dr.", "Drive"}, {"5km", "five K"}});
  EXPECT_NE(phonemes(plain, "a tomato"), phonemes(fe, "a tomato"));
  EXPECT_EQ(phonemes(fe, "a tomato"), phonemes(plain, "a") + " təmˈɑtO");
  EXPECT_EQ(phonemes(fe, "nginx runs"), phonemes(plain, "engine x runs"));
  EXPECT_EQ(fe.normalize("Elm Dr. Smith"), "Elm Drive Smith");
  EXPECT_EQ(fe.normalize("a 5km run"), "a five K run");  // before the unit normaliser
}

TEST(UserLexicon, CaseRules) {
  const auto fe = with_entries({{"nginx", "engine x"}, {"US", "United States"}, {"Polish", "/pˈOlɪʃ/"}});
  // All-lower-case keys match any capitalisation.
  EXPECT_EQ(fe.normalize("Nginx and NGINX and nginx"), "engine x and engine x and engine x");
  // Keys with capitals match exactly.
  EXPECT_EQ(fe.normalize("the US and us"), "the United States and us");
  EXPECT_EQ(fe.normalize("polish the Polish"), "polish the [Polish](/pˈOlɪʃ/)");
}

TEST(UserLexicon, KeysOfSeveralTokensAndWholeWordsOnly) {
  const auto fe = with_entries({{"C++", "C plus plus"}, {"Wi-Fi", "/wˈIfˌI/"}, {"cat", "dog"}});
  EXPECT_EQ(fe.normalize("I write C++ daily"), "I write C plus plus daily");
  EXPECT_EQ(fe.normalize("free Wi-Fi here"), "free [Wi-Fi](/wˈIfˌI/) here");
  EXPECT_EQ(fe.normalize("cat catalog cats"), "dog catalog cats");
}

TEST(UserLexicon, ReadsFilesWithCommentsAndReportsBadLines) {
  const std::string good = temp_file("kokoro_lex_good.txt",
                                     "# my words\n\nKokoro   /kˈOkəɹO/   # the engine\nC#  C sharp\nsql\tsequel\n");
  kokoro::FrontendOptions opt;
  opt.lexicon_file = good;
  const kokoro::Frontend fe(opt);
  EXPECT_EQ(fe.normalize("Kokoro, C# and SQL"), "[Kokoro](/kˈOkəɹO/), C sharp and sequel");

  const std::string bad = temp_file("kokoro_lex_bad.txt", "fine  /fˈIn/\nbroken\n");
  opt.lexicon_file = bad;
  try {
    kokoro::Frontend f(opt);
    ADD_FAILURE() << "a line without a reading must be an error";
  } catch (const kokoro::Error& e) {
    EXPECT_NE(std::string(e.what()).find(bad + ":2"), std::string::npos) << e.what();
  }
  opt.lexicon_file = temp_file("kokoro_lex_slash.txt", "word  /wˈɜɹd\n");
  EXPECT_THROW(kokoro::Frontend{opt}, kokoro::Error);
  opt.lexicon_file = ::testing::TempDir() + "kokoro_no_such_lexicon.txt";
  EXPECT_THROW(kokoro::Frontend{opt}, kokoro::Error);
  std::remove(good.c_str());
  std::remove(bad.c_str());
}
