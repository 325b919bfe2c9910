#include "core/install_paths.h"

#include <dlfcn.h>

#include <filesystem>
#include <fstream>

// The install layout, from core/CMakeLists.txt: the configured prefix, the object directories relative to it
// (separated by ':'), the data directory relative to it. No path of the build machine.
#ifndef KOKORO_INSTALL_PREFIX
#define KOKORO_INSTALL_PREFIX "/usr/local"
#endif
#ifndef KOKORO_INSTALL_OBJECT_DIRS
#define KOKORO_INSTALL_OBJECT_DIRS "bin:lib:lib/kokoro-rt:lib/speech-dispatcher-modules"
#endif
#ifndef KOKORO_INSTALL_DATA_DIR
#define KOKORO_INSTALL_DATA_DIR "share/kokoro-rt"
#endif

namespace kokoro {

namespace fs = std::filesystem;

namespace {

bool is_dir(const fs::path& p) {
  std::error_code ec;
  return fs::is_directory(p, ec);
}

// The directory an object file is in, with symbolic links in the directory's own path resolved (merged /usr:
// /lib is /usr/lib) but not the file's (the build's kernels/<level>/ entries are links to the library).
fs::path object_dir(const std::string& object_file) {
  const fs::path dir = fs::path(object_file).parent_path();
  std::error_code ec;
  fs::path canonical = fs::weakly_canonical(dir, ec);
  return (ec ? dir : canonical).lexically_normal();
}

// <dir> without a trailing glibc-hwcaps/<level> (where the loader picks a compute library variant) or
// kernels/<level> (the build tree's forced-variant directories).
fs::path without_variant_dir(const fs::path& dir, bool build_tree_too) {
  const std::string parent = dir.parent_path().filename().string();
  if (parent == "glibc-hwcaps" || (build_tree_too && parent == "kernels")) return dir.parent_path().parent_path();
  return dir;
}

// <prefix> when `dir` is <prefix>/<relative>, compared component by component; "" otherwise.
fs::path prefix_of(const fs::path& dir, const fs::path& relative) {
  std::vector<fs::path> d(dir.begin(), dir.end()), r(relative.begin(), relative.end());
  while (!r.empty() && r.back().empty()) r.pop_back();  // "lib/" -> "lib"
  if (r.empty() || r.size() >= d.size()) return {};
  for (size_t i = 0; i < r.size(); ++i)
    if (d[d.size() - r.size() + i] != r[i]) return {};
  fs::path prefix;
  for (size_t i = 0; i + r.size() < d.size(); ++i) prefix /= d[i];
  return prefix;
}

std::vector<std::string> split(const std::string& s, char sep) {
  std::vector<std::string> out;
  size_t pos = 0;
  while (pos <= s.size()) {
    size_t end = s.find(sep, pos);
    if (end == std::string::npos) end = s.size();
    if (end > pos) out.push_back(s.substr(pos, end - pos));
    pos = end + 1;
  }
  return out;
}

void add_unique(std::vector<std::string>& out, const std::string& s) {
  for (const auto& o : out)
    if (o == s) return;
  out.push_back(s);
}

BuildTree read_marker(const fs::path& marker) {
  std::ifstream in(marker);
  BuildTree t;
  if (!in) return t;
  std::string line;
  while (std::getline(in, line)) {
    const size_t eq = line.find('=');
    if (line.empty() || line[0] == '#' || eq == std::string::npos) continue;
    const std::string key = line.substr(0, eq), value = line.substr(eq + 1);
    if (key == "source") t.source = value;
    else if (key == "shared_assets") t.shared_assets = value;
    else if (key == "models") t.models = value;
    else if (key == "lexicons") t.lexicons = value;
  }
  t.build = marker.parent_path().string();
  return t;
}

}  // namespace

const InstallLayout& configured_install_layout() {
  static const InstallLayout layout{KOKORO_INSTALL_PREFIX, split(KOKORO_INSTALL_OBJECT_DIRS, ':'),
                                    KOKORO_INSTALL_DATA_DIR};
  return layout;
}

std::vector<std::string> install_data_dirs(const std::vector<std::string>& object_files, const InstallLayout& layout,
                                           bool configured_fallback) {
  std::vector<std::string> out;
  for (const auto& file : object_files) {
    if (file.empty() || file[0] != '/') continue;
    const fs::path dir = without_variant_dir(object_dir(file), false);
    for (const auto& rel : layout.object_dirs) {
      const fs::path prefix = prefix_of(dir, rel);
      if (prefix.empty()) continue;
      const fs::path data = prefix / layout.data_dir;
      if (is_dir(data)) add_unique(out, data.lexically_normal().string());
    }
  }
  if (configured_fallback && !layout.prefix.empty()) {
    const fs::path data = fs::path(layout.prefix) / layout.data_dir;
    if (is_dir(data)) add_unique(out, data.lexically_normal().string());
  }
  return out;
}

BuildTree find_build_tree(const std::vector<std::string>& object_files) {
  for (const auto& file : object_files) {
    if (file.empty() || file[0] != '/') continue;
    const fs::path dir = without_variant_dir(object_dir(file), true);
    const fs::path marker = dir.parent_path() / kBuildTreeMarker;
    std::error_code ec;
    if (!fs::is_regular_file(marker, ec)) continue;
    if (BuildTree t = read_marker(marker); t.found()) return t;
  }
  return {};
}

std::vector<std::string> running_object_files() {
  // The library first: the data belongs to the engine code that runs (a program in /usr/local/bin may link
  // the /usr one).
  std::vector<std::string> out;
  Dl_info info{};
  if (dladdr(reinterpret_cast<void*>(&running_object_files), &info) && info.dli_fname && info.dli_fname[0] == '/')
    out.push_back(info.dli_fname);
  std::error_code ec;
  if (fs::path exe = fs::read_symlink("/proc/self/exe", ec); !ec) add_unique(out, exe.string());
  return out;
}

const BuildTree& build_tree() {
  static const BuildTree tree = find_build_tree(running_object_files());
  return tree;
}

}  // namespace kokoro
