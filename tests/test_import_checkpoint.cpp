// PyTorch and numpy archives read without torch: every tensor of the fixtures that real torch/numpy wrote
// matches what they report, bit for bit; weight-norm folding matches torch's own .weight; and every kind of
// damaged file gives a kokoro::Error naming the file (never a crash, another exception or wrong values).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <functional>

#include "core/error.h"
#include "core/import/npy.h"
#include "core/import/npz.h"
#include "core/import/torch_archive.h"
#include "core/import/torch_checkpoint.h"
#include "tests/checkpoint_fixtures.h"
#include "tests/test_util.h"

using namespace kokoro;
using test::checkpoint_fixture;

namespace {

using Reader = std::function<StateDict(const std::string&)>;

const Reader kCheckpoint = [](const std::string& p) { return read_torch_checkpoint(p); };
const Reader kTensorFile = [](const std::string& p) { return StateDict{{"", read_torch_tensor(p)}}; };
const Reader kNpz = [](const std::string& p) { return read_npz(p); };

std::string error_of(const Reader& read, const std::string& path) {
  try {
    read(path);
  } catch (const Error& e) {
    return e.what();
  }
  ADD_FAILURE() << "no error for " << path;
  return "";
}

}  // namespace

TEST(TorchCheckpoint, NestedStateDictsMatchTorch) {
  test::ExpectedCheckpoints expected;
  const StateDict sd = read_torch_checkpoint(checkpoint_fixture("nested.pth"));
  test::expect_bit_exact(sd, expected.get("nested.pth"), "nested.pth");
  // The int64 buffer saved as a stride-0 expand, as HF's position_ids.
  ASSERT_TRUE(sd.count("bert.position_ids"));
  EXPECT_EQ(sd.at("bert.position_ids").source_dtype, "int64");
  EXPECT_EQ(sd.at("bert.position_ids").data[7], 7.0f);
}

TEST(TorchCheckpoint, ModulePrefixIsDropped) {
  test::ExpectedCheckpoints expected;
  const StateDict sd = read_torch_checkpoint(checkpoint_fixture("module_prefixed.pth"));
  test::expect_bit_exact(sd, expected.get("module_prefixed.pth"), "module_prefixed.pth");
  EXPECT_TRUE(test::same_state_dict(sd, read_torch_checkpoint(checkpoint_fixture("nested.pth"))));
}

TEST(TorchCheckpoint, DtypesViewsAndSharedStoragesMatchTorch) {
  test::ExpectedCheckpoints expected;
  const StateDict sd = read_torch_checkpoint(checkpoint_fixture("dtypes.pth"));
  test::expect_bit_exact(sd, expected.get("dtypes.pth"), "dtypes.pth");
  ASSERT_TRUE(sd.count("half") && sd.count("views.b"));
  EXPECT_TRUE(std::isinf(sd.at("half").data[9]));
  EXPECT_TRUE(std::isnan(sd.at("half").data[11]));
  EXPECT_EQ(sd.at("views.b").shape, Shape({4}));
  EXPECT_EQ(sd.at("empty").shape, Shape({0, 3}));
  EXPECT_EQ(sd.at("scalar").shape, Shape({}));
}

TEST(TorchCheckpoint, FoldedWeightNormMatchesTorch) {
  test::ExpectedCheckpoints expected;
  StateDict sd = read_torch_checkpoint(checkpoint_fixture("nested.pth"));
  fold_weight_norm(sd);
  const StateDict folded = expected.get("nested.pth", "folded");
  double worst = 0;
  // Conv1d, ConvTranspose1d (dim 0), ConvTranspose1d dim=1, Linear dim=None, and a parametrization-API Conv1d.
  ASSERT_EQ(folded.size(), 5u);
  ASSERT_TRUE(folded.count("decoder.post.weight"));
  for (const auto& [name, want] : folded) {
    ASSERT_TRUE(sd.count(name)) << name;
    const LoadedTensor& got = sd.at(name);
    ASSERT_EQ(got.shape, want.shape) << name;
    for (size_t i = 0; i < want.data.size(); ++i) {
      EXPECT_NEAR(got.data[i], want.data[i], 1e-6 * std::fabs(want.data[i])) << name << " element " << i;
      if (want.data[i] != 0) worst = std::max(worst, std::fabs(got.data[i] / want.data[i] - 1.0));
    }
  }
  std::printf("folded weights: largest relative difference from torch %.3g\n", worst);
  // Everything else is untouched, and no g / v is left.
  StateDict rest = expected.get("nested.pth");
  for (const auto& [name, t] : sd) {
    EXPECT_EQ(name.find("weight_g"), std::string::npos) << name;
    EXPECT_EQ(name.find("weight_v"), std::string::npos) << name;
    EXPECT_EQ(name.find("parametrizations"), std::string::npos) << name;
    if (!folded.count(name)) {
      ASSERT_TRUE(rest.count(name)) << name;
      EXPECT_TRUE(test::same_bits(t.data, rest.at(name).data)) << name;
    }
  }
  EXPECT_EQ(sd.size(), rest.size() - folded.size());
}

TEST(TorchCheckpoint, SingleTensorFile) {
  test::ExpectedCheckpoints expected;
  const LoadedTensor voice = read_torch_tensor(checkpoint_fixture("voice.pt"));
  test::expect_bit_exact(StateDict{{"", voice}}, expected.get("voice.pt"), "voice.pt");
  EXPECT_EQ(voice.shape, Shape({6, 1, 16}));
}

TEST(TorchCheckpoint, WrongKindOfContentIsNamed) {
  EXPECT_NE(error_of(kCheckpoint, checkpoint_fixture("voice.pt")).find("single tensor"), std::string::npos);
  EXPECT_NE(error_of(kTensorFile, checkpoint_fixture("nested.pth")).find("not a single tensor"), std::string::npos);
  const std::string legacy = error_of(kCheckpoint, checkpoint_fixture("legacy.pth"));
  EXPECT_NE(legacy.find("legacy"), std::string::npos) << legacy;
  EXPECT_NE(legacy.find("legacy.pth"), std::string::npos) << legacy;
  // An npz is a zip too, but has no data.pkl.
  EXPECT_NE(error_of(kCheckpoint, checkpoint_fixture("voices_stored.npz")).find("data.pkl"), std::string::npos);
  EXPECT_NE(error_of(kNpz, checkpoint_fixture("nested.pth")).find("not a .npy"), std::string::npos);
}

TEST(Npz, StoredAndDeflatedArchivesMatchNumpy) {
  test::ExpectedCheckpoints expected;
  for (const char* file : {"voices_stored.npz", "voices_deflated.npz"}) {
    const StateDict sd = read_npz(checkpoint_fixture(file));
    test::expect_bit_exact(sd, expected.get(file), file);
  }
  const StateDict stored = read_npz(checkpoint_fixture("voices_stored.npz"));
  EXPECT_EQ(stored.at("fortran").shape, Shape({3, 5}));  // written column-major, read row-major
  EXPECT_EQ(stored.at("af_test").shape, Shape({6, 1, 16}));
}

TEST(ImportErrors, MissingEmptyAndNonZipFiles) {
  test::TempDir dir;
  const std::string missing = dir.file("missing.pth");
  EXPECT_NE(error_of(kCheckpoint, missing).find(missing), std::string::npos);
  const std::string empty = dir.file("empty.pth");
  test::write_bytes(empty, {});
  for (const Reader& read : {kCheckpoint, kTensorFile, kNpz}) {
    const std::string e = error_of(read, empty);
    EXPECT_NE(e.find("empty file"), std::string::npos) << e;
    EXPECT_NE(e.find(empty), std::string::npos) << e;
  }
  const std::string text = dir.file("text.pth");
  const std::string words = "this is not a checkpoint at all, just some text\n";
  test::write_bytes(text, std::vector<char>(words.begin(), words.end()));
  for (const Reader& read : {kCheckpoint, kTensorFile, kNpz})
    EXPECT_NE(error_of(read, text).find("not a zip archive"), std::string::npos);
}

TEST(ImportErrors, WrongMagicIsAnError) {
  test::TempDir dir;
  for (const char* file : {"nested.pth", "voice.pt", "voices_stored.npz"}) {
    std::vector<char> bytes = test::read_bytes(checkpoint_fixture(file));
    ASSERT_GT(bytes.size(), 4u) << file;
    bytes[0] = 'X';
    bytes[1] = 'Y';
    const std::string path = dir.file(std::string("magic_") + file);
    test::write_bytes(path, bytes);
    const Reader& read = std::string(file).ends_with(".npz") ? kNpz : std::string(file).ends_with(".pt") ? kTensorFile : kCheckpoint;
    EXPECT_NE(error_of(read, path).find(path), std::string::npos) << file;
  }
}

TEST(ImportErrors, TruncatedFilesAreErrorsNamingThem) {
  test::TempDir dir;
  const std::vector<char> bytes = test::read_bytes(checkpoint_fixture("nested.pth"));
  const std::string path = dir.file("cut.pth");
  for (size_t len : {size_t{1}, size_t{30}, bytes.size() / 2, bytes.size() - 22, bytes.size() - 1}) {
    test::write_bytes(path, std::vector<char>(bytes.begin(), bytes.begin() + static_cast<std::ptrdiff_t>(len)));
    EXPECT_NE(error_of(kCheckpoint, path).find(path), std::string::npos) << len;
  }
}

namespace {

// The sweeps below damage files tens of thousands of times, so they read from memory through the same
// archive-level functions the path-based readers call.
using MemoryReader = std::function<StateDict(const ckpt::ZipArchive&)>;

struct Fixture {
  const char* file;
  MemoryReader read;
};

const Fixture kFixtures[] = {
    {"nested.pth", ckpt::read_state_dict},
    {"module_prefixed.pth", ckpt::read_state_dict},
    {"dtypes.pth", ckpt::read_state_dict},
    {"voice.pt", [](const ckpt::ZipArchive& z) { return StateDict{{"", ckpt::read_single_tensor(z)}}; }},
    {"voices_stored.npz", ckpt::read_npz_archive},
    {"voices_deflated.npz", ckpt::read_npz_archive},
};

StateDict read_memory(const Fixture& f, const std::vector<char>& bytes, const std::string& label) {
  return f.read(ckpt::ZipArchive::open_memory(bytes.data(), bytes.size(), label));
}

// Runs the reader on damaged bytes; anything but a kokoro::Error naming the archive, or the exact original
// result, is a failure. Returns whether it raised.
bool damaged_read_is_safe(const Fixture& f, const std::vector<char>& bytes, const StateDict& original,
                          const std::string& how) {
  const std::string label = std::string(f.file) + " " + how;
  try {
    const StateDict sd = read_memory(f, bytes, label);
    EXPECT_TRUE(test::same_state_dict(sd, original)) << label << ": read without error but differs";
    return false;
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find(label), std::string::npos) << e.what();
    return true;
  } catch (const std::exception& e) {
    ADD_FAILURE() << label << ": non-kokoro exception " << e.what();
    return true;
  }
}

}  // namespace

TEST(ImportErrors, MemoryReadsMatchFileReads) {
  for (const Fixture& f : kFixtures) {
    const std::vector<char> bytes = test::read_bytes(checkpoint_fixture(f.file));
    const StateDict from_memory = read_memory(f, bytes, f.file);
    const std::string path = checkpoint_fixture(f.file);
    const StateDict from_file = std::string(f.file).ends_with(".npz") ? kNpz(path)
                                : std::string(f.file).ends_with(".pt") ? kTensorFile(path)
                                                                        : kCheckpoint(path);
    EXPECT_TRUE(test::same_state_dict(from_memory, from_file)) << f.file;
  }
}

TEST(ImportErrors, EveryTruncationIsAnError) {
  for (const Fixture& f : kFixtures) {
    const std::vector<char> bytes = test::read_bytes(checkpoint_fixture(f.file));
    ASSERT_FALSE(bytes.empty()) << f.file;
    const StateDict original = read_memory(f, bytes, f.file);
    for (size_t len = 0; len < bytes.size(); ++len) {
      const std::vector<char> cut(bytes.begin(), bytes.begin() + static_cast<std::ptrdiff_t>(len));
      EXPECT_TRUE(damaged_read_is_safe(f, cut, original, "cut to " + std::to_string(len)))
          << f.file << " truncated to " << len << " bytes was accepted";
    }
  }
}

TEST(ImportErrors, FlippedBytesGiveAnErrorOrTheOriginal) {
  for (const Fixture& f : kFixtures) {
    const std::vector<char> bytes = test::read_bytes(checkpoint_fixture(f.file));
    const StateDict original = read_memory(f, bytes, f.file);
    size_t errors = 0, trials = 0;
    for (size_t pos = 0; pos < bytes.size(); ++pos)
      for (char mask : {'\x01', '\xff'}) {
        std::vector<char> damaged = bytes;
        damaged[pos] ^= mask;
        errors += damaged_read_is_safe(f, damaged, original, "flip at " + std::to_string(pos));
        ++trials;
      }
    // Most bytes matter (data under CRC, directory fields); only some header fields are ignorable.
    EXPECT_GT(errors, trials / 2) << f.file << ": " << errors << " of " << trials << " flips detected";
    std::printf("%s: %zu of %zu single-byte flips rejected, the rest read back identical\n", f.file, errors, trials);
  }
}
