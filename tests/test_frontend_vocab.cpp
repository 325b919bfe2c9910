// Vocab loading from the model's config.json and tokenization of phoneme strings.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "core/assets.h"
#include "core/error.h"
#include "frontend/vocab.h"

using namespace kokoro;

TEST(Vocab, LoadsTheModelVocab) {
  const Vocab v = Vocab::load(find_assets_dir() + "/config.json");
  EXPECT_EQ(v.size(), 114u);  // Kokoro v1.0 uses 114 of its 178 ids
  EXPECT_EQ(v.id(U';'), 1);
  EXPECT_EQ(v.id(U' '), 16);
  EXPECT_EQ(v.id(U'ˈ'), 156);
  EXPECT_EQ(v.id(U'ᵻ'), 177);
  EXPECT_FALSE(v.id(U'Z').has_value());
}

TEST(Vocab, TokenizeMapsEachCodePointAndAddsNoBoundaryTokens) {
  const Vocab v = Vocab::load(find_assets_dir() + "/config.json");
  const auto ids = tokenize("həlˈO wˈɜɹld!", v);
  const std::vector<int64_t> expected = {50, 83, 54, 156, 31, 16, 65, 156, 87, 123, 54, 46, 5};
  EXPECT_EQ(ids, expected);
  EXPECT_TRUE(tokenize("", v).empty());
}

TEST(Vocab, TokenizeDropsUnknownSymbolsAndInvalidBytes) {
  const Vocab v = Vocab::load(find_assets_dir() + "/config.json");
  EXPECT_EQ(tokenize("aZ😀b", v), (std::vector<int64_t>{43, 44}));
  EXPECT_EQ(tokenize(std::string("a\xFF") + "b", v), (std::vector<int64_t>{43, 44}));
}

TEST(Vocab, RejectsBadConfigsNamingThem) {
  const auto dir = std::filesystem::temp_directory_path() / "kokoro_vocab_test";
  std::filesystem::create_directories(dir);
  auto write = [&](const std::string& name, const std::string& body) {
    std::ofstream(dir / name) << body;
    return (dir / name).string();
  };
  auto expect_error = [](const std::string& path, const std::string& needle) {
    try {
      Vocab::load(path);
      ADD_FAILURE() << "no error for " << path;
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find(needle), std::string::npos) << e.what();
    }
  };
  expect_error((dir / "missing.json").string(), "missing.json");
  expect_error(write("notjson.json", "{"), "not valid JSON");
  expect_error(write("novocab.json", "{\"n_token\": 178}"), "no \"vocab\"");
  expect_error(write("twochars.json", "{\"vocab\": {\"ab\": 3}}"), "not a single character");
  expect_error(write("badid.json", "{\"vocab\": {\"a\": -1}}"), "not an integer");
  std::filesystem::remove_all(dir);
}
