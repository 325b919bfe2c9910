// The binary lexicon (frontend/lexicon_binary.h): every key of misaki's real dictionaries reads back exactly
// as the JSON parse has it, words not in them are not found, and damaged files are errors naming the file.
// LexiconData::load's choice of file: the JSON is compiled and cached when no binary form matches it, a
// stale binary is not used, a damaged one beside the JSON is an error, a binary alone is used.
// Needs the assets (lexicons); fails, never skips, without them.
#include <gtest/gtest.h>

#include <cstdlib>
#include <functional>
#include <filesystem>
#include <fstream>

#include "core/assets.h"
#include "core/error.h"
#include "frontend/lexicon.h"
#include "frontend/lexicon_binary.h"
#include "frontend/utf8.h"
#include "tests/test_util.h"

namespace kokoro::en {
namespace {

using kokoro::test::error_of;

std::string lexicon_dir() { return find_assets_dir() + "/lexicons"; }

void expect_same(const LexiconEntry& want, const std::optional<LexiconEntry>& got, const std::u32string& key) {
  ASSERT_TRUE(got.has_value()) << utf8::encode(key);
  EXPECT_EQ(want.plain, got->plain) << utf8::encode(key);
  EXPECT_EQ(want.by_tag, got->by_tag) << utf8::encode(key);
}

// Every key of both dictionaries, and near-misses of them, against the JSON parse.
void check_round_trip(bool british) {
  const std::string prefix = lexicon_dir() + "/" + (british ? "gb" : "us");
  size_t max_len = 0;
  const ParsedDict gold = parse_lexicon_json(prefix + "_gold.json", max_len);
  const ParsedDict silver = parse_lexicon_json(prefix + "_silver.json", max_len);
  ASSERT_GT(gold.size(), 50000u);
  ASSERT_GT(silver.size(), 50000u);
  // What the engine loads (the build's .kolex, a cached one, or compiled now) and a fresh compile.
  const auto loaded = LexiconData::load(lexicon_dir(), british);
  const auto compiled = BinaryLexicon::from_image(
      compile_lexicon(gold, silver, british, max_len, lexicon_source(prefix + "_gold.json", prefix + "_silver.json")),
      "test image");
  for (const BinaryLexicon* lex : {loaded->dicts.get(), compiled.get()}) {
    SCOPED_TRACE(lex->name());
    EXPECT_EQ(lex->british(), british);
    EXPECT_EQ(lex->max_key_length(), max_len);
    EXPECT_EQ(lex->size(BinaryLexicon::gold), gold.size());
    EXPECT_EQ(lex->size(BinaryLexicon::silver), silver.size());
    size_t heteronyms = 0, misses_checked = 0;
    for (const auto& [dict, parsed] : {std::pair{BinaryLexicon::gold, &gold}, std::pair{BinaryLexicon::silver, &silver}}) {
      for (const auto& [key, entry] : *parsed) {
        expect_same(entry, lex->find(dict, key), key);
        heteronyms += entry.is_heteronym();
        for (const std::u32string& miss : {key + U"q", key.substr(0, key.size() - 1), U"\u00e9" + key}) {
          EXPECT_EQ(lex->contains(dict, miss), parsed->count(miss) != 0) << utf8::encode(miss);
          EXPECT_EQ(lex->find(dict, miss).has_value(), parsed->count(miss) != 0) << utf8::encode(miss);
          ++misses_checked;
        }
      }
    }
    EXPECT_GT(heteronyms, 500u);  // misaki's gold has ~790 heteronyms per accent
    EXPECT_GT(misses_checked, 300000u);
    EXPECT_FALSE(lex->contains(BinaryLexicon::gold, U""));
    EXPECT_FALSE(lex->contains(BinaryLexicon::gold, std::u32string(max_len + 1, U'a')));
  }
}

TEST(LexiconBinary, AmericanReadsBackAsTheJson) { check_round_trip(false); }
TEST(LexiconBinary, BritishReadsBackAsTheJson) { check_round_trip(true); }

// A small lexicon directory: a plain word, a heteronym with a null (spell-out) reading, a capitalised word.
void write_small_json(const std::string& dir, const std::string& extra = "") {
  std::ofstream(dir + "/us_gold.json") << R"({"read": {"DEFAULT": "ɹˈid", "VBD": "ɹˈɛd", "NN": null},)"
                                       << R"( "cat": "kˈæt", "Paris": "pˈɛɹɪs")" << extra << "}";
  std::ofstream(dir + "/us_silver.json") << R"({"zebra": "zˈibɹə"})";
}

TEST(LexiconBinary, SmallDictionaryWithGrownVariants) {
  test::TempDir dir;
  write_small_json(dir.path());
  const auto lex = BinaryLexicon::from_image(compile_lexicon_dir(dir.path(), false), "small");
  const auto read = lex->find(BinaryLexicon::gold, U"read");
  ASSERT_TRUE(read && read->is_heteronym());
  ASSERT_EQ(read->by_tag.size(), 3u);
  EXPECT_EQ(read->by_tag[0], (std::pair<std::string, std::optional<std::u32string>>{"DEFAULT", U"ɹˈid"}));
  EXPECT_EQ(read->by_tag[1], (std::pair<std::string, std::optional<std::u32string>>{"NN", std::nullopt}));
  // misaki's grow_dictionary: "cat" answers for "Cat", "Paris" for "paris".
  EXPECT_EQ(lex->find(BinaryLexicon::gold, U"Cat")->plain, U"kˈæt");
  EXPECT_EQ(lex->find(BinaryLexicon::gold, U"paris")->plain, U"pˈɛɹɪs");
  EXPECT_FALSE(lex->contains(BinaryLexicon::gold, U"CAT"));
  EXPECT_TRUE(lex->contains(BinaryLexicon::silver, U"Zebra"));
  EXPECT_FALSE(lex->contains(BinaryLexicon::silver, U"cat"));
  EXPECT_EQ(lex->size(BinaryLexicon::gold), 6u);
}

TEST(LexiconBinary, DamagedFilesAreErrorsNamingTheFile) {
  test::TempDir dir;
  write_small_json(dir.path());
  const auto image = compile_lexicon_dir(dir.path(), false);
  const std::string path = dir.file("bad.kolex");
  auto open_with = [&](std::vector<uint8_t> bytes) {
    test::write_bytes(path, std::vector<char>(bytes.begin(), bytes.end()));
    return error_of([&] { BinaryLexicon::open(path); });
  };
  auto expect_named = [&](const std::string& msg, const std::string& what) {
    EXPECT_NE(msg.find(path), std::string::npos) << msg;
    EXPECT_NE(msg.find(what), std::string::npos) << msg;
  };
  const std::string missing = error_of([&] { BinaryLexicon::open(dir.file("missing.kolex")); });
  EXPECT_NE(missing.find(dir.file("missing.kolex")), std::string::npos) << missing;
  expect_named(open_with({image.begin(), image.end() - 7}), "truncated");
  expect_named(open_with({image.begin(), image.begin() + 40}), "truncated");
  auto magic = image;
  magic[1] = 'X';
  expect_named(open_with(magic), "magic");
  auto version = image;
  version[8] = 9;
  expect_named(open_with(version), "version 9");
  auto flipped = image;
  flipped[flipped.size() - 3] ^= 0x20;  // inside a reading
  expect_named(open_with(flipped), "checksum");
  auto longer = image;
  longer.push_back(0);
  expect_named(open_with(longer), "size");
  // The intact image opens.
  test::write_bytes(path, std::vector<char>(image.begin(), image.end()));
  EXPECT_EQ(BinaryLexicon::open(path)->find(BinaryLexicon::gold, U"cat")->plain, U"kˈæt");
}

// LexiconData::load with the user cache in a scratch directory.
class LexiconLoad : public ::testing::Test {
 protected:
  void SetUp() override {
    if (const char* old = std::getenv("XDG_CACHE_HOME")) old_cache_ = old;
    setenv("XDG_CACHE_HOME", cache_.path().c_str(), 1);
    write_small_json(lex_.path());
  }
  void TearDown() override {
    if (old_cache_)
      setenv("XDG_CACHE_HOME", old_cache_->c_str(), 1);
    else
      unsetenv("XDG_CACHE_HOME");
  }
  size_t cached_files() const {
    size_t n = 0;
    const auto d = std::filesystem::path(cache_.path()) / "kokoro-rt" / "lexicons";
    if (std::filesystem::is_directory(d))
      for (const auto& e : std::filesystem::directory_iterator(d)) n += e.path().extension() == ".kolex";
    return n;
  }
  test::TempDir cache_, lex_;
  std::optional<std::string> old_cache_;
};

TEST_F(LexiconLoad, CompilesTheJsonOnceIntoTheCache) {
  {
    const auto data = LexiconData::load(lex_.path(), false);
    EXPECT_NE(data->origin.find("compiled"), std::string::npos) << data->origin;
    EXPECT_TRUE(data->dicts->contains(BinaryLexicon::gold, U"cat"));
  }
  EXPECT_EQ(cached_files(), 1u);
  {
    const auto data = LexiconData::load(lex_.path(), false);  // the first is gone: read again, from the cache
    EXPECT_NE(data->origin.find(cache_.path()), std::string::npos) << data->origin;
    EXPECT_TRUE(data->dicts->contains(BinaryLexicon::gold, U"cat"));
  }
  // Edited JSON: the cached form is stale and a new one is made.
  write_small_json(lex_.path(), R"(, "dog": "dˈɔɡ")");
  const auto data = LexiconData::load(lex_.path(), false);
  EXPECT_NE(data->origin.find("compiled"), std::string::npos) << data->origin;
  EXPECT_TRUE(data->dicts->contains(BinaryLexicon::gold, U"dog"));
  EXPECT_EQ(cached_files(), 2u);
}

TEST_F(LexiconLoad, UsesAMatchingBinaryBesideTheJsonAndIgnoresAStaleOne) {
  write_lexicon_file(lex_.path() + "/us.kolex", compile_lexicon_dir(lex_.path(), false));
  {
    const auto data = LexiconData::load(lex_.path(), false);
    EXPECT_EQ(data->origin, lex_.path() + "/us.kolex");
  }
  write_small_json(lex_.path(), R"(, "dog": "dˈɔɡ")");
  const auto data = LexiconData::load(lex_.path(), false);
  EXPECT_NE(data->origin, lex_.path() + "/us.kolex");
  EXPECT_TRUE(data->dicts->contains(BinaryLexicon::gold, U"dog"));
}

TEST_F(LexiconLoad, DamagedBinaryBesideTheJsonIsAnError) {
  auto image = compile_lexicon_dir(lex_.path(), false);
  image.resize(image.size() / 2);
  const std::string path = lex_.path() + "/us.kolex";
  test::write_bytes(path, std::vector<char>(image.begin(), image.end()));
  const std::string msg = error_of([&] { LexiconData::load(lex_.path(), false); });
  EXPECT_NE(msg.find(path), std::string::npos) << msg;
  EXPECT_NE(msg.find("truncated"), std::string::npos) << msg;
}

TEST_F(LexiconLoad, BinaryAloneIsUsedAndNothingAtAllIsAnError) {
  write_lexicon_file(lex_.path() + "/us.kolex", compile_lexicon_dir(lex_.path(), false));
  std::filesystem::remove(lex_.path() + "/us_gold.json");
  std::filesystem::remove(lex_.path() + "/us_silver.json");
  {
    const auto data = LexiconData::load(lex_.path(), false);
    EXPECT_EQ(data->origin, lex_.path() + "/us.kolex");
    EXPECT_EQ(data->dicts->find(BinaryLexicon::gold, U"cat")->plain, U"kˈæt");
  }
  std::filesystem::remove(lex_.path() + "/us.kolex");
  const std::string msg = error_of([&] { LexiconData::load(lex_.path(), false); });
  EXPECT_NE(msg.find("us_gold.json"), std::string::npos) << msg;
  EXPECT_NE(msg.find("us.kolex"), std::string::npos) << msg;
  EXPECT_EQ(cached_files(), 0u);
}

}  // namespace
}  // namespace kokoro::en
