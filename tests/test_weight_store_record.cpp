// The record that a prepared-weights store's hashes were checked (core/weight_cache.h, core/verified_files.h):
// who writes it, what it spares later processes, and what voids it.
#include <gtest/gtest.h>

#include <chrono>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "core/weight_cache.h"
#include "tests/test_util.h"

namespace kokoro {
namespace {

using test::ScratchCache;

// A store file whose hashes were checked (by its writer, or by a reader that used every entry) is recorded
// (core/verified_files.h): later processes use its forms without reading them all first (the hashing read
// ~190 MB on the first sentence of every process, issue 28). A later write to the file voids the record.
TEST(WeightStoreRecord, ACheckedStoreIsNotHashedAgainUntilItChanges) {
  ScratchCache cache;
  test::TempDir dir;
  const std::string store = dir.file("w.kwc");
  std::vector<float> weights(1u << 20);  // 4 MB
  for (size_t i = 0; i < weights.size(); ++i) weights[i] = static_cast<float>(i % 977);
  auto negated = [&] {
    auto v = std::make_shared<std::vector<float>>(weights);
    for (float& x : *v) x = -x;
    return std::shared_ptr<const std::vector<float>>(v);
  };
  register_weight_region(weights.data(), weights.size() * 4, {}, store);
  ASSERT_TRUE(cached_weights_as<float>(weights.data(), "negated", negated));
  ASSERT_EQ(persist_prepared_weights(weights.data()), 1u);
  unregister_weight_region(weights.data());
  // Resident kB of the form in a new registration, and whether it came from the store.
  auto use = [&](bool& from_store) {
    register_weight_region(weights.data(), weights.size() * 4, {}, store);
    release_prepared_store_pages(weights.data());  // nothing resident before the lookup
    from_store = true;
    const auto p = cached_weights_as<float>(weights.data(), "negated", [&] {
      from_store = false;
      return negated();
    });
    const long kb = test::resident_kb_of_mapping(p.data);
    EXPECT_EQ(p.data[12345], -weights[12345]);
    unregister_weight_region(weights.data());
    return kb;
  };
  bool from_store = false;
  EXPECT_LT(use(from_store), 1000) << "recorded as checked: not read through to hash it";
  EXPECT_TRUE(from_store);
  EXPECT_LT(use(from_store), 1000) << "the record survives the readers' own \"last used\" times";
  std::filesystem::last_write_time(store, std::filesystem::file_time_type::clock::now() + std::chrono::hours(1));
  EXPECT_GE(use(from_store), 4000) << "written since: every entry is hashed (read) again";
  EXPECT_TRUE(from_store);
  EXPECT_LT(use(from_store), 1000) << "the reader that checked every entry recorded it again";
}

// A reader that used only some forms of an unrecorded store checks the others when it persists (with nothing
// to write), and records the file: the next process hashes none of them.
TEST(WeightStoreRecord, PersistingChecksAStoreUsedInPart) {
  ScratchCache cache;
  test::TempDir dir;
  const std::string store = dir.file("w.kwc");
  std::vector<float> weights(1u << 20);
  for (size_t i = 0; i < weights.size(); ++i) weights[i] = static_cast<float>(i % 613);
  auto scaled = [&](float s) {
    auto v = std::make_shared<std::vector<float>>(weights);
    for (float& x : *v) x *= s;
    return std::shared_ptr<const std::vector<float>>(v);
  };
  register_weight_region(weights.data(), weights.size() * 4, {}, store);
  ASSERT_TRUE(cached_weights_as<float>(weights.data(), "doubled", [&] { return scaled(2); }));
  ASSERT_TRUE(cached_weights_as<float>(weights.data(), "halved", [&] { return scaled(0.5f); }));
  ASSERT_EQ(persist_prepared_weights(weights.data()), 2u);
  unregister_weight_region(weights.data());
  // A later write (as by a build that kept no record): no record applies.
  std::filesystem::last_write_time(store, std::filesystem::file_time_type::clock::now() + std::chrono::hours(1));
  auto resident_after_use = [&](const char* kind, float s) {
    register_weight_region(weights.data(), weights.size() * 4, {}, store);
    release_prepared_store_pages(weights.data());
    const auto p = cached_weights_as<float>(weights.data(), kind, [&] {
      ADD_FAILURE() << kind << " prepared again";
      return scaled(s);
    });
    EXPECT_EQ(p.data[777], s * weights[777]);
    return test::resident_kb_of_mapping(p.data);
  };
  EXPECT_GE(resident_after_use("doubled", 2), 4000) << "hashed at first use";
  EXPECT_EQ(persist_prepared_weights(weights.data()), 0u) << "nothing new to write";
  unregister_weight_region(weights.data());
  EXPECT_LT(resident_after_use("halved", 0.5f), 1000) << "checked and recorded when the reader persisted";
  unregister_weight_region(weights.data());
}

}  // namespace
}  // namespace kokoro
