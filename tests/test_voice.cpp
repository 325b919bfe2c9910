// Voice packs from the shared assets: loading, row selection and blending as KPipeline does it.
#include <gtest/gtest.h>

#include <filesystem>

#include "core/assets.h"
#include "core/error.h"
#include "core/voice.h"
#include "tests/test_util.h"

using namespace kokoro;

namespace {

std::string assets() {
  // A missing asset directory is a failure, never a skip: the suite must not pass without its data.
  return find_assets_dir();
}

}  // namespace

TEST(Voice, LoadsEveryPackInTheAssets) {
  const auto names = VoicePack::list(assets());
  ASSERT_GE(names.size(), 54u) << "expected the 54 v1.0 voices in " << assets();
  for (const auto& n : names) {
    const VoicePack v = VoicePack::resolve(n, assets());
    EXPECT_EQ(v.data().size(), 510u * 256u) << n;
  }
}

TEST(Voice, StyleRowIsPhonemeCountMinusOne) {
  const VoicePack v = VoicePack::resolve("af_heart", assets());
  EXPECT_EQ(v.style_for(1), v.data().data());
  EXPECT_EQ(v.style_for(20), v.data().data() + 19 * 256);
  EXPECT_EQ(v.style_for(510), v.data().data() + 509 * 256);
  EXPECT_THROW(v.style_for(0), Error);
  EXPECT_THROW(v.style_for(511), Error);
}

TEST(Voice, BlendIsWeightedMean) {
  const VoicePack a = VoicePack::resolve("af_heart", assets());
  const VoicePack b = VoicePack::resolve("af_bella", assets());
  const VoicePack mean = VoicePack::resolve("af_heart,af_bella", assets());
  const VoicePack weighted = VoicePack::resolve("af_heart:0.6, af_bella:0.4", assets());
  const VoicePack unnormalised = VoicePack::resolve("af_heart:3,af_bella:2", assets());
  for (size_t i = 0; i < a.data().size(); i += 97) {
    EXPECT_NEAR(mean.data()[i], 0.5f * (a.data()[i] + b.data()[i]), 1e-6f);
    EXPECT_NEAR(weighted.data()[i], 0.6f * a.data()[i] + 0.4f * b.data()[i], 1e-6f);
    EXPECT_NEAR(unnormalised.data()[i], weighted.data()[i], 1e-6f);
  }
}

TEST(Voice, BadSpecsGiveClearErrors) {
  auto message = [](const std::string& spec) -> std::string {
    try {
      VoicePack::resolve(spec, assets());
    } catch (const Error& e) {
      return e.what();
    }
    return "";
  };
  EXPECT_NE(message("no_such_voice").find("no_such_voice"), std::string::npos);
  EXPECT_NE(message("af_heart,").find("empty"), std::string::npos);
  EXPECT_NE(message("af_heart:-1").find("positive"), std::string::npos);
  EXPECT_NE(message("").find("empty"), std::string::npos);
}

TEST(Voice, WrongSizedFileIsRejected) {
  test::TempDir dir;
  test::write_bytes(dir.file("short.bin"), std::vector<char>(1000, 0));
  try {
    VoicePack::load_bin(dir.file("short.bin"));
    FAIL();
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("short.bin"), std::string::npos);
  }
}
