// Where the running engine's own files are: the data directory of the install it belongs to, or the build
// tree it was built in. Nothing here names the build machine: an installed or packaged binary carries only
// the install layout (paths relative to the prefix, and the configured prefix), and a build-tree binary
// finds its build tree through a marker file that the build writes beside bin/ and lib/ (docs/c-api.md,
// "Where an installed engine finds its data").
//
// The engine's code runs in the compute library (libkokoro_compute.so.0, in <libdir>/kokoro-rt/ or one of its
// glibc-hwcaps/<level>/ subdirectories, or linked statically into a program) and is called from programs in
// <prefix>/bin, from sd_kokoro in <prefix>/lib/speech-dispatcher-modules, and from any program anywhere that
// links libkokoro. So the install is found from each of the running objects (the program, the compute
// library): an object in one of the install's object directories names its prefix.
#pragma once
#include <string>
#include <vector>

namespace kokoro {

// Where an install puts things, relative to its prefix ("bin", "lib/x86_64-linux-gnu/kokoro-rt", ...).
struct InstallLayout {
  std::string prefix;                    // the configured absolute prefix ("/usr" for the .deb)
  std::vector<std::string> object_dirs;  // where programs and libraries of ours are installed
  std::string data_dir;                  // "share/kokoro-rt"
};
// The layout this build was configured with (core/CMakeLists.txt).
const InstallLayout& configured_install_layout();

// The data directories (<prefix>/<data_dir>) of the installs that hold `object_files`, most specific first:
// an object whose directory is <prefix>/<object dir>, or <prefix>/<object dir>/glibc-hwcaps/<level>, names
// <prefix>. With `configured_fallback`, <layout.prefix>/<data_dir> comes last (for a program that links
// libkokoro.a from anywhere). Only directories that exist; no duplicates.
std::vector<std::string> install_data_dirs(const std::vector<std::string>& object_files, const InstallLayout& layout,
                                           bool configured_fallback);

// The build tree a binary was built in, read from the marker file <build>/kokoro-rt-build-tree that the build
// writes (CMakeLists.txt). Empty strings when the running code is not in a build tree.
struct BuildTree {
  std::string build;          // the build directory (holds the marker)
  std::string source;         // the source tree (data/, assets/ that scripts/fetch-assets may write)
  std::string shared_assets;  // ../shared/assets beside the source tree
  std::string models;         // models/ (converted model, models/ja)
  std::string lexicons;       // build/lexicons (binary lexicons and zh.kozh the build made)
  bool found() const { return !build.empty(); }
};
inline constexpr const char* kBuildTreeMarker = "kokoro-rt-build-tree";
// The build tree holding one of `object_files`: <dir>/../kokoro-rt-build-tree for an object in <dir> (bin/,
// lib/), or three levels up for one in lib/glibc-hwcaps/<level>/ or lib/kernels/<level>/.
BuildTree find_build_tree(const std::vector<std::string>& object_files);

// The files the engine is running from: the program (/proc/self/exe) and, when this code is in a shared
// library, that library as the loader found it.
std::vector<std::string> running_object_files();
// find_build_tree(running_object_files()), once per process.
const BuildTree& build_tree();

}  // namespace kokoro
