// English normalisation (frontend/norm_*.cpp) against the tables in tests/data/normalize/*.tsv: each row
// is a dialect (us, gb or both), an input and the words Frontend::normalize must return for it. Every
// row whose reading changed is also checked in phonemes: the input must be spoken exactly as its
// normalised words are when they are written out, so the tables pin both the words and what is heard.
#include <gtest/gtest.h>

#include <algorithm>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "frontend/frontend.h"

namespace {

struct Row {
  std::string dialect, input, expected;
  int line = 0;
};

std::vector<Row> load(const std::string& name) {
  const std::string path = std::string(KOKORO_SOURCE_DIR) + "/tests/data/normalize/" + name + ".tsv";
  std::ifstream in(path);
  EXPECT_TRUE(in) << "missing " << path;
  std::vector<Row> rows;
  std::string line;
  int n = 0;
  while (std::getline(in, line)) {
    ++n;
    if (line.empty() || line[0] == '#') continue;
    Row r;
    r.line = n;
    std::istringstream fields(line);
    std::getline(fields, r.dialect, '\t');
    std::getline(fields, r.input, '\t');
    std::getline(fields, r.expected, '\t');
    EXPECT_TRUE(r.dialect == "us" || r.dialect == "gb" || r.dialect == "both") << path << ":" << n << " bad dialect";
    EXPECT_FALSE(r.input.empty() || r.expected.empty()) << path << ":" << n << " needs three columns";
    rows.push_back(r);
  }
  return rows;
}

const kokoro::Frontend& frontend(const std::string& lang) {
  static std::map<std::string, std::unique_ptr<kokoro::Frontend>> cache;
  auto& fe = cache[lang];
  if (!fe) {
    kokoro::FrontendOptions opt;
    opt.language = lang;
    fe = std::make_unique<kokoro::Frontend>(opt);
  }
  return *fe;
}

std::string phonemes(const kokoro::Frontend& fe, const std::string& text) {
  std::string out;
  for (const auto& seg : fe.segment(text)) out += (out.empty() ? "" : " ") + seg.phonemes;
  for (size_t p; (p = out.find("pˈYnt")) != std::string::npos;) out.replace(p, std::string("pˈYnt").size(), "pYnt");
  return out;
}

bool has_digit(const std::string& s) {
  return std::any_of(s.begin(), s.end(), [](char c) { return c >= '0' && c <= '9'; });
}

// Checks every row of one table in the dialects it names; returns the number of (row, dialect) cases.
size_t check_table(const std::string& name, bool check_phonemes = true) {
  size_t cases = 0;
  for (const Row& r : load(name)) {
    for (const char* lang : {"en-us", "en-gb"}) {
      if (r.dialect == "us" && std::string(lang) != "en-us") continue;
      if (r.dialect == "gb" && std::string(lang) != "en-gb") continue;
      const auto& fe = frontend(lang);
      ++cases;
      const std::string got = fe.normalize(r.input);
      EXPECT_EQ(got, r.expected) << name << ".tsv:" << r.line << " [" << lang << "] " << r.input;
      if (check_phonemes && got == r.expected && r.expected != r.input && !has_digit(r.expected))
        EXPECT_EQ(phonemes(fe, r.input), phonemes(fe, r.expected))
            << name << ".tsv:" << r.line << " [" << lang << "] " << r.input << " is not spoken as its words";
    }
  }
  std::cout << "[normalize " << name << "] " << cases << " cases\n";
  return cases;
}

}  // namespace

TEST(Normalize, PhoneNumbers) { EXPECT_GE(check_table("phone"), 30u); }
TEST(Normalize, ClockTimes) { EXPECT_GE(check_table("times"), 30u); }
TEST(Normalize, Dates) { EXPECT_GE(check_table("dates"), 30u); }
TEST(Normalize, Money) { EXPECT_GE(check_table("money"), 30u); }
TEST(Normalize, FractionsAndRanges) { EXPECT_GE(check_table("numbers"), 30u); }
TEST(Normalize, Units) { EXPECT_GE(check_table("units"), 30u); }
TEST(Normalize, RomanNumerals) { EXPECT_GE(check_table("roman"), 30u); }
TEST(Normalize, Abbreviations) { EXPECT_GE(check_table("abbreviations"), 30u); }
TEST(Normalize, VersionsAddressesHashtags) { EXPECT_GE(check_table("web"), 20u); }
TEST(Normalize, MathSymbols) { EXPECT_GE(check_table("math"), 10u); }
TEST(Normalize, Temperatures) { EXPECT_GE(check_table("temperatures"), 30u); }
TEST(Normalize, RatiosAndScores) { EXPECT_GE(check_table("ratios"), 30u); }
TEST(Normalize, EmojiByName) { EXPECT_GE(check_table("emoji"), 40u); }
TEST(Normalize, RepeatedCharacters) { EXPECT_GE(check_table("repetition"), 20u); }

// Normalised words keep word spans on the written text: "5km" is one word whose span covers "5km".
TEST(Normalize, ReplacedWordsKeepTheirSpan) {
  const auto& fe = frontend("en-us");
  const std::string text = "Run 5km at 2:00 a.m. today.";
  const auto segs = fe.segment(text);
  ASSERT_EQ(segs.size(), 1u);
  std::vector<std::string> written;
  for (const auto& w : segs[0].words) written.push_back(text.substr(w.text_begin, w.text_end - w.text_begin));
  const std::vector<std::string> want = {"Run", "5km", "at", "2:00 a.m.", "today"};
  EXPECT_EQ(written, want);
}

// Other languages are not normalised here (espeak-ng reads numbers itself).
TEST(Normalize, OtherLanguagesUnchanged) {
  EXPECT_EQ(frontend("es").normalize("5 km a las 2:00"), "5 km a las 2:00");
}
