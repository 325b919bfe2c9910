// core/install_paths.h: which install or build tree the running objects belong to, on fake layouts in a
// temporary directory (no loader: tests/test_install_layout.cpp runs the real one).
#include "core/install_paths.h"

#include <gtest/gtest.h>
#include <stdlib.h>

#include <filesystem>
#include <fstream>

#include "core/assets.h"

namespace fs = std::filesystem;
using kokoro::BuildTree;
using kokoro::InstallLayout;
using Dirs = std::vector<std::string>;

namespace {

struct TempDir {
  fs::path path;
  TempDir() {
    std::string t = (fs::temp_directory_path() / "kokoro-paths-XXXXXX").string();
    if (!mkdtemp(t.data())) throw std::runtime_error("mkdtemp failed");
    path = fs::canonical(t);
  }
  ~TempDir() {
    std::error_code ec;
    fs::remove_all(path, ec);
  }
};

// An object file (its directory is created; the file itself need not exist).
std::string object(const fs::path& file) {
  fs::create_directories(file.parent_path());
  return file.string();
}

class FakePrefix : public ::testing::Test {
 protected:
  TempDir tmp;
  fs::path prefix = tmp.path / "usr";
  std::string data = (prefix / "share/kokoro-rt").string();
  InstallLayout debian{"/nonexistent/kokoro-prefix",
                       {"bin", "lib/x86_64-linux-gnu", "lib/x86_64-linux-gnu/kokoro-rt", "lib/speech-dispatcher-modules"},
                       "share/kokoro-rt"};
  void SetUp() override { fs::create_directories(data); }
};

TEST_F(FakePrefix, ComputeLibraryInEachGlibcHwcapsLevel) {
  for (const char* level : {"x86-64-v2", "x86-64-v3", "x86-64-v4"}) {
    const auto lib = object(prefix / "lib/x86_64-linux-gnu/kokoro-rt/glibc-hwcaps" / level / "libkokoro_compute.so.0");
    EXPECT_EQ(kokoro::install_data_dirs({lib}, debian, false), Dirs{data}) << level;
  }
}

TEST_F(FakePrefix, ComputeLibraryLibkokoroProgramsAndSpeechDispatcherModule) {
  for (const char* file : {"lib/x86_64-linux-gnu/kokoro-rt/libkokoro_compute.so.0", "lib/x86_64-linux-gnu/libkokoro.so.0",
                           "bin/kokoro-say", "lib/speech-dispatcher-modules/sd_kokoro"})
    EXPECT_EQ(kokoro::install_data_dirs({object(prefix / file)}, debian, false), Dirs{data}) << file;
}

TEST_F(FakePrefix, ProgramInAnyOtherDirectoryNamesNoPrefix) {
  for (const char* file : {"somewhere/random/say_to_wav", "usr/lib/x86_64-linux-gnu/other/prog",
                           "usr/lib/x86_64-linux-gnu/kokoro-rt/kernels/x86-64-v3/libkokoro_compute.so.0",
                           "opt/bin/prog", "bin"})
    EXPECT_EQ(kokoro::install_data_dirs({object(tmp.path / file)}, debian, false), Dirs{}) << file;
  EXPECT_EQ(kokoro::install_data_dirs({"relative/bin/prog", ""}, debian, false), Dirs{});
}

TEST_F(FakePrefix, ConfiguredPrefixIsTheFallbackForAProgramAnywhere) {
  InstallLayout here = debian;
  here.prefix = prefix.string();
  const auto program = object(tmp.path / "somewhere/say_to_wav_static");
  EXPECT_EQ(kokoro::install_data_dirs({program}, here, false), Dirs{});
  EXPECT_EQ(kokoro::install_data_dirs({program}, here, true), Dirs{data});
  // A prefix without data is not named.
  EXPECT_EQ(kokoro::install_data_dirs({program}, debian, true), Dirs{});
}

TEST_F(FakePrefix, LibraryFirstThenProgramWithoutDuplicates) {
  const fs::path other = tmp.path / "opt/kokoro";
  fs::create_directories(other / "share/kokoro-rt");
  const auto lib = object(prefix / "lib/x86_64-linux-gnu/kokoro-rt/glibc-hwcaps/x86-64-v4/libkokoro_compute.so.0");
  const auto exe = object(other / "bin/prog");
  InstallLayout here = debian;
  here.prefix = prefix.string();
  EXPECT_EQ(kokoro::install_data_dirs({lib, exe}, here, true), (Dirs{data, (other / "share/kokoro-rt").string()}));
}

TEST_F(FakePrefix, SymbolicLinksInTheDirectoryAreResolvedNotTheFile) {
  // Merged /usr: /lib -> usr/lib. A library reached through the link belongs to the real prefix.
  fs::create_directories(prefix / "lib/x86_64-linux-gnu/kokoro-rt");
  fs::create_directory_symlink("usr/lib", tmp.path / "lib");
  EXPECT_EQ(kokoro::install_data_dirs({(tmp.path / "lib/x86_64-linux-gnu/kokoro-rt/libkokoro_compute.so.0").string()},
                                      debian, false),
            Dirs{data});
  // A library linked into the prefix from elsewhere (how tests/test_install_layout.cpp stands in for an
  // install) counts where the link is.
  const auto lib = object(prefix / "lib/x86_64-linux-gnu/kokoro-rt/libkokoro_compute.so.0");
  fs::create_symlink(object(tmp.path / "build/lib/libkokoro_compute.so.0"), lib);
  EXPECT_EQ(kokoro::install_data_dirs({lib}, debian, false), Dirs{data});
}

class FakeBuildTree : public ::testing::Test {
 protected:
  TempDir tmp;
  fs::path build = tmp.path / "src/build";
  void SetUp() override {
    fs::create_directories(build);
    std::ofstream(build / kokoro::kBuildTreeMarker) << "# comment\nsource=/src\nshared_assets=/shared/assets\n"
                                                       "models=/src/models\nlexicons=/src/build/lexicons\nfuture=ignored\n";
  }
};

TEST_F(FakeBuildTree, ProgramsAndEveryLibraryVariantFindTheMarker) {
  for (const char* file : {"bin/kokoro-say", "bin/test_capi", "lib/libkokoro_compute.so.0", "lib/libkokoro.so.0",
                           "lib/glibc-hwcaps/x86-64-v4/libkokoro_compute.so.0",
                           "lib/kernels/x86-64-v3/libkokoro_compute.so.0"}) {
    const BuildTree t = kokoro::find_build_tree({object(build / file)});
    EXPECT_TRUE(t.found()) << file;
    EXPECT_EQ(t.build, build.string()) << file;
    EXPECT_EQ(t.source, "/src");
    EXPECT_EQ(t.shared_assets, "/shared/assets");
    EXPECT_EQ(t.models, "/src/models");
    EXPECT_EQ(t.lexicons, "/src/build/lexicons");
  }
}

TEST_F(FakeBuildTree, CopiesOutsideTheTreeAndInstallsAreNotBuildTrees) {
  for (const char* file : {"elsewhere/say_to_wav", "src/build/bin/sub/prog", "prefix/lib/x86_64-linux-gnu/kokoro-rt/libkokoro_compute.so.0"})
    EXPECT_FALSE(kokoro::find_build_tree({object(tmp.path / file)}).found()) << file;
  // The first object in a tree wins; a stray one before it does not hide it.
  EXPECT_TRUE(kokoro::find_build_tree({object(tmp.path / "elsewhere/prog"), object(build / "bin/prog")}).found());
}

// This test binary itself: in the build tree, which its marker names; nothing installed; and the layout it
// was configured with is relative to the prefix (no build-machine path in it).
TEST(RunningBinary, IsInItsBuildTree) {
  const BuildTree& t = kokoro::build_tree();
  ASSERT_TRUE(t.found()) << "no " << kokoro::kBuildTreeMarker << " beside this test's bin/";
  EXPECT_EQ(fs::canonical(t.source), fs::canonical(KOKORO_SOURCE_DIR));
  EXPECT_TRUE(kokoro::installed_data_dirs().empty());
  const InstallLayout& layout = kokoro::configured_install_layout();
  EXPECT_EQ(layout.prefix.front(), '/');
  EXPECT_FALSE(layout.object_dirs.empty());
  for (const auto& d : layout.object_dirs) EXPECT_NE(d.front(), '/') << d;
  EXPECT_EQ(fs::path(layout.data_dir).filename(), "kokoro-rt");
}

}  // namespace
