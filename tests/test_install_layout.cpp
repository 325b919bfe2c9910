// Where an installed engine finds its data, with the real loader (issue 31): a fake prefix in a temporary
// directory laid out as this build installs (libkokoro.so.0 in <libdir>, the compute library only in
// <libdir>/kokoro-rt/glibc-hwcaps/<level>/, a program in lib/speech-dispatcher-modules/; <libdir> is
// lib/x86_64-linux-gnu for the .deb's prefix /usr, lib for another: tests/test_install_paths.cpp has both),
// and a C program linking libkokoro (tests/install_probe.c) run from there and from a random directory with
// no KOKORO_* variables. The build tree's libraries stand in for the installed ones by symbolic link (the
// loader and dladdr see the link's path); the probe is copied, so that it is no longer in the build tree.
// Each run must look for the data in the prefix only: never in the build tree.
#include <gtest/gtest.h>
#include <stdlib.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <string>

#include "core/assets.h"

namespace fs = std::filesystem;

namespace {

struct TempDir {
  fs::path path;
  TempDir() {
    std::string t = (fs::temp_directory_path() / "kokoro-layout-XXXXXX").string();
    if (!mkdtemp(t.data())) throw std::runtime_error("mkdtemp failed");
    path = fs::canonical(t);
  }
  ~TempDir() {
    std::error_code ec;
    fs::remove_all(path, ec);
  }
};

// Runs `program` with only LD_LIBRARY_PATH set; stdout and stderr.
std::string run(const fs::path& program, const std::string& ld_library_path) {
  const std::string cmd = "/usr/bin/env -i LD_LIBRARY_PATH='" + ld_library_path + "' '" + program.string() + "' 2>&1";
  FILE* p = popen(cmd.c_str(), "r");
  if (!p) return "popen failed";
  std::string out;
  char buf[4096];
  size_t n;
  while ((n = fread(buf, 1, sizeof buf, p)) > 0) out.append(buf, n);
  pclose(p);
  return out;
}

void copy_program(const fs::path& to) {
  fs::create_directories(to.parent_path());
  fs::copy_file(KOKORO_PROBE_BIN, to, fs::copy_options::overwrite_existing);
  fs::permissions(to, fs::perms::owner_all);
}

class InstallLayout : public ::testing::Test {
 protected:
  TempDir tmp;
  fs::path prefix = tmp.path / "usr";
  fs::path libdir = prefix / KOKORO_TEST_INSTALL_LIBDIR;
  fs::path compute_dir = libdir / "kokoro-rt";
  fs::path data = prefix / "share/kokoro-rt";
  fs::path elsewhere = tmp.path / "somewhere/else";  // neither a prefix nor a build tree

  void SetUp() override {
    fs::create_directories(data);
    fs::create_directories(libdir);
    fs::create_symlink(KOKORO_LIBKOKORO_FILE, libdir / "libkokoro.so.0");
    // Only in glibc-hwcaps/: the loader takes the best level this CPU has (v2 and up).
    for (const char* level : {"x86-64-v2", "x86-64-v3", "x86-64-v4"}) {
      fs::create_directories(compute_dir / "glibc-hwcaps" / level);
      fs::create_symlink(KOKORO_COMPUTE_FILE, compute_dir / "glibc-hwcaps" / level / "libkokoro_compute.so.0");
    }
    fs::create_directories(elsewhere);
    fs::create_symlink(KOKORO_COMPUTE_FILE, elsewhere / "libkokoro_compute.so.0");
  }
  std::string prefix_libs() const { return libdir.string() + ":" + compute_dir.string(); }
  // The prefix's libkokoro with a compute library that is in no install and no build tree.
  std::string stray_compute() const { return libdir.string() + ":" + elsewhere.string(); }

  // Without assets in the prefix, kokoro_open names the prefix's assets directory; with them (the build's own,
  // by link), the prefix's model, which is not there.
  void expect_prefix_data_only(const fs::path& program, const std::string& libs) {
    const std::string no_assets = run(program, libs);
    SCOPED_TRACE(no_assets);
    EXPECT_NE(no_assets.find("error: no assets directory"), std::string::npos);
    EXPECT_NE(no_assets.find((data / "assets").string()), std::string::npos);
    EXPECT_EQ(no_assets.find(KOKORO_SOURCE_DIR), std::string::npos) << "looked in the build tree";
    EXPECT_NE(no_assets.find("kokoro-fetch-model"), std::string::npos);

    fs::create_directory_symlink(kokoro::find_assets_dir(), data / "assets");
    const std::string no_model = run(program, libs);
    SCOPED_TRACE(no_model);
    EXPECT_NE(no_model.find("error: "), std::string::npos);
    EXPECT_NE(no_model.find((data / "kokoro-v1_0.kokoro").string()), std::string::npos);
    EXPECT_EQ(no_model.find(KOKORO_SOURCE_DIR), std::string::npos) << "looked in the build tree";
    EXPECT_NE(no_model.find("kokoro-fetch-model"), std::string::npos);
    fs::remove(data / "assets");
  }
};

TEST_F(InstallLayout, ProgramAnywhereFindsDataFromComputeLibraryInGlibcHwcaps) {
  const fs::path program = tmp.path / "random" / "dir" / "say_to_wav";
  copy_program(program);
  const std::string out = run(program, prefix_libs());
  EXPECT_NE(out.find("compute: " + (compute_dir / "glibc-hwcaps/x86-64-v").string()), std::string::npos)
      << "the loader did not take the compute library from glibc-hwcaps/: " << out;
  expect_prefix_data_only(program, prefix_libs());
}

TEST_F(InstallLayout, SpeechDispatcherModuleFindsDataFromItsOwnDirectory) {
  const fs::path program = prefix / KOKORO_TEST_INSTALL_SPEECHD_DIR / "sd_probe";
  copy_program(program);
  const std::string out = run(program, stray_compute());
  EXPECT_NE(out.find("compute: " + (elsewhere / "libkokoro_compute.so.0").string()), std::string::npos) << out;
  expect_prefix_data_only(program, stray_compute());
}

TEST_F(InstallLayout, ProgramInBinFindsDataFromItsOwnDirectory) {
  const fs::path program = prefix / KOKORO_TEST_INSTALL_BINDIR / "kokoro-probe";
  copy_program(program);
  expect_prefix_data_only(program, stray_compute());
}

}  // namespace
