// The model file: a written file reads back bit-exactly, and every kind of damage gives an error that names
// the file and, where there is one, the tensor.
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <optional>
#include <string>
#include <limits>

#include "core/error.h"
#include "core/model_file.h"
#include "core/weight_cache.h"
#include "tests/test_util.h"

using namespace kokoro;

namespace {

nlohmann::json tiny_config() { return {{"n_token", 4}, {"vocab", {{"a", 1}, {"b", 2}}}}; }

std::string write_tiny(const test::TempDir& dir) {
  ModelWriter w(tiny_config());
  std::vector<float> a(6), b(5);
  for (int i = 0; i < 6; ++i) a[i] = 0.5f * i - 1.0f;
  for (int i = 0; i < 5; ++i) b[i] = static_cast<float>(i * i);
  w.add("layer.weight", {2, 3}, a.data());
  w.add("layer.bias", {5}, b.data());
  const std::string path = dir.file("tiny.kokoro");
  w.write(path);
  return path;
}

std::string expect_error(const std::string& path) {
  try {
    ModelFile::open(path);
  } catch (const Error& e) {
    return e.what();
  }
  ADD_FAILURE() << "no error for " << path;
  return "";
}

}  // namespace

TEST(ModelFile, RoundTripsTensorsAndConfig) {
  test::TempDir dir;
  const auto m = ModelFile::open(write_tiny(dir));
  EXPECT_EQ(m->config()["n_token"], 4);
  EXPECT_EQ(m->config()["vocab"]["b"], 2);
  ASSERT_EQ(m->tensors().size(), 2u);
  const TensorView w = m->get("layer.weight", {2, 3});
  for (int i = 0; i < 6; ++i) EXPECT_EQ(w.data[i], 0.5f * i - 1.0f);
  EXPECT_EQ(reinterpret_cast<uintptr_t>(w.data) % kModelAlignment, 0u);
  const TensorView b = m->get("layer.bias", {5});
  EXPECT_EQ(b.data[4], 16.0f);
  EXPECT_EQ(w.matrix()(1, 2), 1.5f);
}

TEST(ModelFile, MissingTensorNamesIt) {
  test::TempDir dir;
  const auto m = ModelFile::open(write_tiny(dir));
  try {
    m->get("decoder.nothing.weight");
    FAIL() << "expected an error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("decoder.nothing.weight"), std::string::npos) << e.what();
  }
}

TEST(ModelFile, WrongShapeNamesTensorAndShapes) {
  test::TempDir dir;
  const auto m = ModelFile::open(write_tiny(dir));
  try {
    m->get("layer.weight", {3, 2});
    FAIL() << "expected an error";
  } catch (const Error& e) {
    const std::string msg = e.what();
    EXPECT_NE(msg.find("layer.weight"), std::string::npos) << msg;
    EXPECT_NE(msg.find("[2, 3]"), std::string::npos) << msg;
    EXPECT_NE(msg.find("[3, 2]"), std::string::npos) << msg;
  }
}

TEST(ModelFile, TruncatedFileIsRejectedAtEveryLength) {
  test::TempDir dir;
  const auto bytes = test::read_bytes(write_tiny(dir));
  // Every prefix must fail cleanly: inside the prefix, inside the header, inside the data.
  for (size_t len : {size_t{0}, size_t{7}, size_t{23}, size_t{40}, bytes.size() / 2, bytes.size() - 1}) {
    const std::string path = dir.file("cut.kokoro");
    test::write_bytes(path, std::vector<char>(bytes.begin(), bytes.begin() + len));
    const std::string msg = expect_error(path);
    EXPECT_NE(msg.find(path), std::string::npos) << msg;
  }
}

TEST(ModelFile, WrongMagicAndVersion) {
  test::TempDir dir;
  auto bytes = test::read_bytes(write_tiny(dir));
  const std::string path = dir.file("bad.kokoro");
  auto magic = bytes;
  magic[0] = 'X';
  test::write_bytes(path, magic);
  EXPECT_NE(expect_error(path).find("magic"), std::string::npos);
  auto version = bytes;
  version[8] = 9;
  test::write_bytes(path, version);
  EXPECT_NE(expect_error(path).find("version"), std::string::npos);
  auto header = bytes;
  header[30] = '{';
  test::write_bytes(path, header);
  EXPECT_NE(expect_error(path).find("header"), std::string::npos);
}

TEST(ModelFile, NonFiniteWeightsNameTheTensor) {
  test::TempDir dir;
  const std::string path = write_tiny(dir);
  auto bytes = test::read_bytes(path);
  const auto m = ModelFile::open(path);
  uint64_t offset = 0;
  for (const auto& t : m->tensors())
    if (t.name == "layer.bias") offset = t.offset;
  const float nan = std::numeric_limits<float>::quiet_NaN();
  std::memcpy(bytes.data() + offset + 8, &nan, 4);
  const std::string bad = dir.file("nan.kokoro");
  test::write_bytes(bad, bytes);
  const std::string msg = expect_error(bad);
  EXPECT_NE(msg.find("layer.bias"), std::string::npos) << msg;
  EXPECT_NE(msg.find("non-finite"), std::string::npos) << msg;
}

TEST(ModelFile, WriterRejectsNaNAndDuplicates) {
  ModelWriter w(tiny_config());
  const float good[2] = {1, 2};
  const float bad[2] = {1, std::nanf("")};
  w.add("x", {2}, good);
  EXPECT_THROW(w.add("x", {2}, good), Error);
  EXPECT_THROW(w.add("y", {2}, bad), Error);
}

// Every finite binary16 value (subnormals, both zeros) is exactly a float: stored as f16 it must come back bit
// for bit, through the vectorised conversion (8 at a time) and its scalar
// tail alike (the 63488 values and one more: not a multiple of 8), by get_floats and by read_floats into the
// caller's storage.
TEST(ModelFile, EveryFiniteF16ValueReadsBackExactly) {
  std::vector<float> all;
  for (uint32_t bits = 0; bits < 0x10000u; ++bits) {
    const uint32_t e = (bits >> 10) & 0x1fu, m = bits & 0x3ffu;
    if (e == 31) continue;  // Inf and NaN are refused by the writer
    const float mag = e == 0 ? std::ldexp(static_cast<float>(m), -24) : std::ldexp(1.0f + m / 1024.0f, int(e) - 15);
    all.push_back(bits & 0x8000u ? -mag : mag);
  }
  all.push_back(0.5f);  // the tail
  ASSERT_EQ(all.size() % 8, 1u);
  test::TempDir dir;
  ModelWriter w(tiny_config());
  const int64_t n = static_cast<int64_t>(all.size());
  w.add("every", {n}, all.data(), DType::f16);
  const std::string path = dir.file("every.kokoro");
  w.write(path);
  const auto m = ModelFile::open(path);
  const std::vector<float> got = m->get_floats("every", {n});
  std::vector<float> into(all.size() + 1, -7.0f);
  m->read_floats("every", {n}, into.data());
  int64_t wrong = 0;
  for (int64_t i = 0; i < n; ++i)
    if (std::memcmp(&got[i], &all[i], 4) != 0 || std::memcmp(&into[i], &all[i], 4) != 0) ++wrong;
  EXPECT_EQ(wrong, 0) << "of " << n << " values";
  EXPECT_EQ(into[n], -7.0f) << "read_floats wrote past the tensor";
  EXPECT_THROW(m->read_floats("every", {n - 1}, into.data()), Error);
}

// f16 tensors (small data files such as the statistics predictor): stored rounded to nearest, read back as fp32
// copies with get_floats (get refuses them: they are not fp32 in place), checked at open like f32 ones.
TEST(ModelFile, F16TensorsRoundTripToNearestAndAreCheckedAtOpen) {
  test::TempDir dir;
  ModelWriter w(tiny_config());
  const std::vector<float> v = {0.0f, 1.0f, -2.5f, 1.0f / 3.0f, 1e-3f, 60000.0f, -1e-6f};
  const int64_t n = static_cast<int64_t>(v.size());
  w.add("half", {n}, v.data(), DType::f16);
  w.add("full", {n}, v.data());
  const std::string path = dir.file("half.kokoro");
  w.write(path);
  const auto m = ModelFile::open(path);
  ASSERT_EQ(m->tensors().size(), 2u);
  EXPECT_EQ(m->tensors()[0].dtype, DType::f16);
  EXPECT_EQ(m->tensors()[0].nbytes, static_cast<uint64_t>(2 * n));
  const std::vector<float> h = m->get_floats("half", {n});
  EXPECT_EQ(h[0], 0.0f);
  EXPECT_EQ(h[1], 1.0f);
  EXPECT_EQ(h[2], -2.5f);
  EXPECT_EQ(h[3], 0.333251953125f);  // 1/3 to the nearest binary16: 1365 / 4096
  EXPECT_EQ(h[5], 60000.0f);
  for (int64_t i = 0; i < n; ++i)  // relative 2^-11 for normal halves, absolute 2^-25 below them
    EXPECT_NEAR(h[i], v[i], std::abs(v[i]) / 2048.0f + 3e-8f) << "element " << i;
  EXPECT_EQ(m->get_floats("full", {n}), v);
  try {
    m->get("half");
    ADD_FAILURE() << "an f16 tensor was handed out as fp32";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("f16"), std::string::npos) << e.what();
  }
  EXPECT_THROW(m->get_floats("half", {n + 1}), Error);
  EXPECT_THROW(m->get_floats("missing", {n}), Error);

  // Damage: a NaN half, a byte count that is not the shape's, truncation at every length.
  auto bytes = test::read_bytes(path);
  const uint64_t at = m->tensors()[0].offset;
  auto nan = bytes;
  nan[at + 2] = 0x00;
  nan[at + 3] = 0x7e;  // element 1: 0x7e00, a quiet NaN
  const std::string bad = dir.file("nan.kokoro");
  test::write_bytes(bad, nan);
  const std::string msg = expect_error(bad);
  EXPECT_NE(msg.find("half"), std::string::npos) << msg;
  EXPECT_NE(msg.find("non-finite value at element 1"), std::string::npos) << msg;
  std::string text(bytes.begin(), bytes.end());
  const size_t dtype_at = text.find("\"f16\"");
  ASSERT_NE(dtype_at, std::string::npos);
  auto relabelled = bytes;  // the half tensor's header says f32: its bytes no longer match its shape
  relabelled[dtype_at + 2] = '3';
  relabelled[dtype_at + 3] = '2';
  const std::string f32 = dir.file("relabelled.kokoro");
  test::write_bytes(f32, relabelled);
  EXPECT_NE(expect_error(f32).find("do not match shape"), std::string::npos);
  for (size_t len : {size_t{40}, static_cast<size_t>(at + 3), bytes.size() - 1}) {
    const std::string cut = dir.file("cut.kokoro");
    test::write_bytes(cut, std::vector<char>(bytes.begin(), bytes.begin() + len));
    EXPECT_NE(expect_error(cut).find(cut), std::string::npos);
  }
}

TEST(ModelFile, WriterRejectsValuesBeyondF16) {
  ModelWriter w(tiny_config());
  const float big[2] = {1.0f, 70000.0f};  // binary16's largest finite value is 65504
  try {
    w.add("x", {2}, big, DType::f16);
    ADD_FAILURE() << "70000 was stored as f16";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("beyond f16"), std::string::npos) << e.what();
  }
  EXPECT_NO_THROW(w.add("x", {2}, big));  // f32 holds it
}

TEST(ModelFile, MissingFileAndDirectory) {
  test::TempDir dir;
  EXPECT_NE(expect_error(dir.file("absent.kokoro")).find("cannot open"), std::string::npos);
  EXPECT_NE(expect_error(dir.path()).find("regular file"), std::string::npos);
}

namespace {

// A model file big enough (> 16 MB) for its NaN/Inf scan to be recorded.
std::string write_big(const test::TempDir& dir, std::vector<float>& values) {
  ModelWriter w(tiny_config());
  values.resize(4u << 20);
  for (size_t i = 0; i < values.size(); ++i) values[i] = static_cast<float>(i % 1000) * 0.001f;
  w.add("big.weight", {static_cast<int64_t>(values.size())}, values.data());
  const std::string path = dir.file("big.kokoro");
  w.write(path);
  return path;
}

}  // namespace

TEST(ModelFile, FiniteScanRunsOncePerFileVersion) {
  test::ScratchCache cache;
  test::TempDir dir;
  std::vector<float> values;
  const std::string path = write_big(dir, values);
  EXPECT_TRUE(ModelFile::open(path)->scanned_finite());
  EXPECT_FALSE(ModelFile::open(path)->scanned_finite());  // recorded as verified
  EXPECT_TRUE(ModelFile::open(path, ModelFile::FiniteCheck::always)->scanned_finite());
  EXPECT_FALSE(ModelFile::open(path, ModelFile::FiniteCheck::never)->scanned_finite());
  // Damage written into the same file (same inode, same size) changes its identity: scanned again, caught.
  const auto m = ModelFile::open(path);
  const uint64_t offset = m->tensors().front().offset;
  auto bytes = test::read_bytes(path);
  const float inf = std::numeric_limits<float>::infinity();
  std::memcpy(bytes.data() + offset + 4 * 123457, &inf, 4);
  {
    std::fstream f(path, std::ios::in | std::ios::out | std::ios::binary);
    f.seekp(0);
    f.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  }
  const std::string msg = expect_error(path);
  EXPECT_NE(msg.find("big.weight"), std::string::npos) << msg;
  EXPECT_NE(msg.find("element 123457"), std::string::npos) << msg;
}

TEST(ModelFile, SmallFilesAreScannedAtEveryOpen) {
  test::ScratchCache cache;
  test::TempDir dir;
  const std::string path = write_tiny(dir);
  EXPECT_TRUE(ModelFile::open(path)->scanned_finite());
  EXPECT_TRUE(ModelFile::open(path)->scanned_finite());
}

// Once a prepared form of a weight is cached, its file pages are released (core/weight_cache.h); the
// weight must still read back exactly (re-read from the file), and a heap region must never be released.
TEST(ModelFile, ReleasedWeightPagesReadBackFromTheFile) {
  test::TempDir dir;
  ModelWriter w(tiny_config());
  std::vector<float> values(1u << 16);
  for (size_t i = 0; i < values.size(); ++i) values[i] = 1.0f + static_cast<float>(i);
  w.add("w", {static_cast<int64_t>(values.size())}, values.data());
  w.write(dir.file("w.kokoro"));
  const auto m = ModelFile::open(dir.file("w.kokoro"));
  const TensorView v = m->get("w");
  ASSERT_EQ(std::memcmp(v.data, values.data(), values.size() * 4), 0);
  const auto prepared = cached_weights_as<float>(v.data, "test copy", [&] {
    return std::make_shared<const std::vector<float>>(v.data, v.data + values.size());
  });
  ASSERT_TRUE(prepared);
  EXPECT_EQ(std::memcmp(v.data, values.data(), values.size() * 4), 0);

  std::vector<float> heap = values;
  register_weight_region(heap.data(), heap.size() * 4);
  ASSERT_TRUE(cached_weights_as<int>(heap.data(), "test copy", [&] { return std::make_shared<const std::vector<int>>(1, 0); }));
  EXPECT_EQ(std::memcmp(heap.data(), values.data(), values.size() * 4), 0);
  unregister_weight_region(heap.data());
}


namespace {
// The file a pointer's mapping shows in /proc/self/maps ("" for anonymous memory and the heap).
std::string mapping_path_of(const void* p) {
  std::ifstream f("/proc/self/maps");
  const auto a = reinterpret_cast<uintptr_t>(p);
  for (std::string line; std::getline(f, line);) {
    unsigned long lo = 0, hi = 0;
    if (std::sscanf(line.c_str(), "%lx-%lx ", &lo, &hi) != 2 || a < lo || a >= hi) continue;
    const size_t slash = line.find('/');
    return slash == std::string::npos ? "" : line.substr(slash);
  }
  return "";
}
}  // namespace

// ModelFile::release_resident_pages (called between the decoder half and the generator): the pages leave
// the process's resident set and every weight reads back the file's values.
TEST(ModelFile, ReleasingResidentPagesKeepsEveryValue) {
  test::TempDir dir;
  ModelWriter w(tiny_config());
  std::vector<float> values(1u << 20);  // 4 MB
  for (size_t i = 0; i < values.size(); ++i) values[i] = 0.25f * static_cast<float>(i) - 3.0f;
  w.add("w", {static_cast<int64_t>(values.size())}, values.data());
  w.write(dir.file("w.kokoro"));
  const auto m = ModelFile::open(dir.file("w.kokoro"));
  const TensorView v = m->get("w");
  ASSERT_EQ(std::memcmp(v.data, values.data(), values.size() * 4), 0);  // all of it resident now
  const long before = test::resident_kb_of_mapping(v.data);
  ASSERT_GE(before, 4000) << "the weights were just read: their pages should be resident";
  m->release_resident_pages();
  const long after = test::resident_kb_of_mapping(v.data);
  if (!std::getenv("KOKORO_KEEP_WEIGHT_PAGES")) EXPECT_LT(after, before / 4) << before << " kB before, " << after << " after";
  EXPECT_EQ(std::memcmp(v.data, values.data(), values.size() * 4), 0);
  EXPECT_EQ(m->get("w").data, v.data);
}

// Prepared weights persist in a store file (core/weight_cache.h): a second registration of the same weights
// reads them from the file instead of preparing them; a damaged, truncated or foreign file is never
// trusted: the weight is prepared again.
class WeightStore : public ::testing::Test {
 protected:
  test::ScratchCache cache_;  // the records that a store's hashes were checked
  std::vector<float> weights_ = std::vector<float>(4096);
  int builds_ = 0;
  void SetUp() override {
    for (size_t i = 0; i < weights_.size(); ++i) weights_[i] = 0.5f * static_cast<float>(i);
  }
  // Registers the weights with the store file, looks up two prepared forms, unregisters.
  std::vector<float> lookup(const std::string& store, bool persist = false) {
    register_weight_region(weights_.data(), weights_.size() * 4, {}, store);
    std::vector<float> got;
    for (const char* kind : {"doubled", "negated"}) {
      const auto p = cached_weights_as<float>(weights_.data() + 16, kind, [&] {
        ++builds_;
        auto v = std::make_shared<std::vector<float>>(weights_.begin() + 16, weights_.end());
        for (float& x : *v) x = kind[0] == 'd' ? 2 * x : -x;
        return std::shared_ptr<const std::vector<float>>(v);
      });
      EXPECT_TRUE(p);
      got.insert(got.end(), p.data, p.data + p.size);
    }
    if (persist) EXPECT_EQ(persist_prepared_weights(weights_.data()), 2u);
    unregister_weight_region(weights_.data());
    return got;
  }
};

TEST_F(WeightStore, PreparedWeightsPersistAndReadBackWithoutPreparing) {
  test::TempDir dir;
  const std::string store = dir.file("sub/dir/w.kwc");  // directories are created
  const auto first = lookup(store, /*persist=*/true);
  EXPECT_EQ(builds_, 2);
  const auto second = lookup(store);
  EXPECT_EQ(builds_, 2) << "read from the store, not prepared again";
  EXPECT_EQ(first, second);
  // Nothing new was prepared: persisting again writes nothing.
  register_weight_region(weights_.data(), weights_.size() * 4, {}, store);
  EXPECT_EQ(persist_prepared_weights(weights_.data()), 0u);
  unregister_weight_region(weights_.data());
}

// Prepared forms read from the store are file pages of its mapping: release_prepared_store_pages (which
// ModelFile::release_resident_pages calls between the parts of a segment) takes them out of the resident set,
// and they read back the same values.
TEST(WeightStoreRelease, ReleasingTheStoresPagesKeepsEveryValue) {
  test::ScratchCache cache;
  test::TempDir dir;
  const std::string store = dir.file("w.kwc");
  std::vector<float> weights(1u << 20);  // 4 MB
  for (size_t i = 0; i < weights.size(); ++i) weights[i] = 0.125f * static_cast<float>(i % 4099) - 1.0f;
  auto doubled = [&] {
    auto v = std::make_shared<std::vector<float>>(weights);
    for (float& x : *v) x *= 2;
    return std::shared_ptr<const std::vector<float>>(v);
  };
  register_weight_region(weights.data(), weights.size() * 4, {}, store);
  const float* made = cached_weights_as<float>(weights.data(), "doubled", doubled).data;
  ASSERT_NE(made, nullptr);
  EXPECT_EQ(mapping_path_of(made), "") << "prepared here: on the heap";
  ASSERT_EQ(persist_prepared_weights(weights.data()), 1u);
  // Once written, the form is read from the file (its heap copy freed): the same values, in the mapping.
  const auto adopted = cached_weights_as<float>(weights.data(), "doubled", [] {
    ADD_FAILURE() << "prepared again after persisting";
    return std::make_shared<const std::vector<float>>();
  });
  ASSERT_TRUE(adopted);
  EXPECT_EQ(mapping_path_of(adopted.data), std::filesystem::canonical(store).string());
  for (size_t i = 0; i < weights.size(); ++i)
    if (adopted.data[i] != 2 * weights[i]) FAIL() << "element " << i << " differs in the store";
  EXPECT_EQ(persist_prepared_weights(weights.data()), 0u) << "nothing left to write";
  unregister_weight_region(weights.data());

  register_weight_region(weights.data(), weights.size() * 4, {}, store);
  int builds = 0;
  const auto p = cached_weights_as<float>(weights.data(), "doubled", [&] { ++builds; return doubled(); });
  ASSERT_TRUE(p);
  ASSERT_EQ(builds, 0) << "the form should come from the store file";
  float sum = 0;  // read all of it (its hash is not checked again: the writer recorded the file as checked)
  for (size_t i = 0; i < p.size; ++i) sum += p.data[i];
  EXPECT_TRUE(std::isfinite(sum));
  const long before = test::resident_kb_of_mapping(p.data);
  ASSERT_GE(before, 4000);
  release_prepared_store_pages(weights.data());
  const long after = test::resident_kb_of_mapping(p.data);
  EXPECT_LT(after, before / 4) << before << " kB before, " << after << " after";
  for (size_t i = 0; i < weights.size(); ++i)
    if (p.data[i] != 2 * weights[i]) FAIL() << "element " << i << " changed after the release";
  // Released again with nothing mapped, then restored: what the first release dropped comes back, once.
  release_prepared_store_pages(weights.data());
  EXPECT_GE(restore_prepared_store_pages(weights.data()), weights.size() * 4 - 8192);
  EXPECT_GE(test::resident_kb_of_mapping(p.data), 4000);
  EXPECT_EQ(restore_prepared_store_pages(weights.data()), 0u) << "restored once";
  release_prepared_store_pages(nullptr);  // not a registered region: nothing to do
  EXPECT_EQ(restore_prepared_store_pages(nullptr), 0u);
  unregister_weight_region(weights.data());
}

TEST_F(WeightStore, DamagedTruncatedOrForeignStoreFilesArePreparedAgain) {
  test::TempDir dir;
  const std::string store = dir.file("w.kwc");
  const auto reference = lookup(store, /*persist=*/true);
  std::string bytes;
  {
    std::ifstream in(store, std::ios::binary);
    bytes.assign(std::istreambuf_iterator<char>(in), {});
  }
  ASSERT_GT(bytes.size(), 2 * 4080 * 4u);
  // Damage is a later write: the file's modification time moves on (set here, since the file system's clock
  // may not have ticked since the store was written a moment ago), so the record that its hashes were
  // checked (core/verified_files.h) no longer applies and every entry is hashed again.
  auto write = [&](const std::string& content) {
    std::ofstream(store, std::ios::binary | std::ios::trunc) << content;
    std::filesystem::last_write_time(store, std::filesystem::file_time_type::clock::now() + std::chrono::hours(1));
  };

  std::string damaged = bytes;
  damaged[damaged.size() - 100] ^= 0x40;  // a bit inside the last entry's data
  write(damaged);
  builds_ = 0;
  EXPECT_EQ(lookup(store), reference);
  EXPECT_EQ(builds_, 1) << "the damaged entry is prepared again, the intact one is read";

  for (const std::string& bad : {bytes.substr(0, bytes.size() / 2), bytes.substr(0, 20), std::string(5000, '\x7f'),
                                 std::string()}) {
    write(bad);
    builds_ = 0;
    EXPECT_EQ(lookup(store), reference);
    EXPECT_EQ(builds_, 2) << "store file of " << bad.size() << " bytes";
  }
}

TEST_F(WeightStore, DisabledByTheEnvironment) {
  test::TempDir dir;
  const std::string store = dir.file("w.kwc");
  lookup(store, /*persist=*/true);
  setenv("KOKORO_PREPARED_CACHE", "0", 1);
  builds_ = 0;
  lookup(store);
  unsetenv("KOKORO_PREPARED_CACHE");
  EXPECT_EQ(builds_, 2);
}

TEST_F(WeightStore, PersistingKeepsTheFormsAnotherProcessStored) {
  test::TempDir dir;
  const std::string store = dir.file("w.kwc");
  const auto both = lookup(store, /*persist=*/true);
  // A process that prepares a third form and persists keeps the two it did not use.
  register_weight_region(weights_.data(), weights_.size() * 4, {}, store);
  const auto third = cached_weights_as<float>(weights_.data(), "third", [&] {
    ++builds_;
    return std::make_shared<const std::vector<float>>(8, 1.0f);
  });
  EXPECT_TRUE(third);
  EXPECT_EQ(persist_prepared_weights(weights_.data()), 3u);
  unregister_weight_region(weights_.data());
  builds_ = 0;
  EXPECT_EQ(lookup(store), both);
  EXPECT_EQ(builds_, 0);
}

// Every re-converted model and every kernel family gets a store file of its own (hundreds of MB each):
// writing one removes those not used for a month, then the least recently used beyond three, and the
// leftovers of interrupted writes; other files in the directory are never touched.
TEST(PreparedStores, WritingOneRemovesTheStaleAndTheLeastRecentlyUsed) {
  namespace fs = std::filesystem;
  test::TempDir dir;
  const auto now = fs::file_time_type::clock::now();
  auto make = [&](const std::string& name, std::chrono::hours age) {
    std::ofstream(dir.file(name)) << "x";
    fs::last_write_time(dir.file(name), now - age);
  };
  using h = std::chrono::hours;
  make("current.kwc", h(0));
  make("a.kwc", h(1));
  make("b.kwc", h(2));
  make("c.kwc", h(3));          // fourth most recent: over the limit of three
  make("old.kwc", h(24 * 40));  // not used for 40 days
  make("d.kwc.Ab12Cd", h(48));  // an interrupted write, two days old
  make("e.kwc.Xy34Zw", h(0));   // a write that may still be running
  make("notes.txt", h(24 * 400));
  EXPECT_EQ(prune_prepared_stores(dir.path(), dir.file("current.kwc")), 3u);
  std::vector<std::string> left;
  for (const auto& e : fs::directory_iterator(dir.path())) left.push_back(e.path().filename().string());
  std::sort(left.begin(), left.end());
  EXPECT_EQ(left, (std::vector<std::string>{"a.kwc", "b.kwc", "current.kwc", "e.kwc.Xy34Zw", "notes.txt"}));
  // A store that was just read counts as used: its time is refreshed.
  fs::last_write_time(dir.file("b.kwc"), now - h(24 * 60));
  register_weight_region(left.data(), 64, {}, dir.file("b.kwc"));  // maps (and touches) the store file
  unregister_weight_region(left.data());
  EXPECT_EQ(prune_prepared_stores(dir.path(), dir.file("current.kwc")), 0u);
  EXPECT_TRUE(fs::exists(dir.file("b.kwc")));
}
