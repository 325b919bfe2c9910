#include "core/assets.h"

#include <dlfcn.h>

#include <cstdlib>
#include <filesystem>
#include <vector>

#include "core/error.h"

// Paths from the installed bin/ and lib/ directories to <prefix>/share/kokoro-rt (core/CMakeLists.txt).
#ifndef KOKORO_DATA_FROM_BINDIR
#define KOKORO_DATA_FROM_BINDIR "../share/kokoro-rt"
#endif
#ifndef KOKORO_DATA_FROM_LIBDIR
#define KOKORO_DATA_FROM_LIBDIR "../share/kokoro-rt"
#endif

namespace kokoro {

namespace fs = std::filesystem;

namespace {

constexpr const char* kModelName = "kokoro-v1_0.kokoro";

bool is_file(const fs::path& p) {
  std::error_code ec;
  return fs::is_regular_file(p, ec);
}

}  // namespace

std::vector<std::string> installed_data_dirs() {
  std::vector<fs::path> candidates;
  std::error_code ec;
  // The running program (kokoro-say in <prefix>/bin) ...
  if (fs::path exe = fs::read_symlink("/proc/self/exe", ec); !ec)
    candidates.push_back(exe.parent_path() / KOKORO_DATA_FROM_BINDIR);
  // ... and the shared object this code is in (libkokoro.so in <prefix>/lib/...), when it is one.
  Dl_info info{};
  if (dladdr(reinterpret_cast<void*>(&installed_data_dirs), &info) && info.dli_fname && info.dli_fname[0] == '/')
    candidates.push_back(fs::path(info.dli_fname).parent_path() / KOKORO_DATA_FROM_LIBDIR);
  std::vector<std::string> out;
  for (const auto& c : candidates) {
    const fs::path dir = fs::weakly_canonical(c, ec);
    if (ec || !fs::is_directory(dir, ec)) continue;
    bool seen = false;
    for (const auto& o : out) seen = seen || o == dir.string();
    if (!seen) out.push_back(dir.string());
  }
  return out;
}

std::string find_assets_dir(const std::string& explicit_dir) {
  std::vector<std::string> candidates;
  if (!explicit_dir.empty()) {
    candidates.push_back(explicit_dir);
  } else {
    if (const char* env = std::getenv("KOKORO_ASSETS"); env && *env) candidates.push_back(env);
    for (const auto& d : installed_data_dirs()) candidates.push_back(d + "/assets");
    candidates.push_back(KOKORO_DEFAULT_SHARED_ASSETS);
    candidates.push_back(std::string(KOKORO_SOURCE_DIR) + "/assets");
  }
  std::string tried;
  for (const auto& c : candidates) {
    if (is_file(fs::path(c) / "config.json")) return c;
    tried += "\n  " + c;
  }
  throw Error("no assets directory with config.json found; tried:" + tried +
              "\nrun scripts/fetch-assets (installed: kokoro-fetch-model) or set KOKORO_ASSETS");
}

std::string default_model_path(const std::string& explicit_path) {
  if (!explicit_path.empty()) return explicit_path;
  if (const char* env = std::getenv("KOKORO_MODEL"); env && *env) return env;
  const std::vector<std::string> installed = installed_data_dirs();
  for (const auto& d : installed)
    if (is_file(fs::path(d) / kModelName)) return d + "/" + kModelName;
  const std::string build_tree = std::string(KOKORO_DEFAULT_MODEL_DIR) + "/" + kModelName;
  // An installed engine without its model names the installed place (where kokoro-fetch-model puts it).
  if (!installed.empty() && !is_file(build_tree)) return installed.front() + "/" + kModelName;
  return build_tree;
}

std::string user_cache_dir() {
  if (const char* x = std::getenv("XDG_CACHE_HOME"); x && *x == '/') return std::string(x) + "/kokoro-rt";
  if (const char* h = std::getenv("HOME"); h && *h == '/') return std::string(h) + "/.cache/kokoro-rt";
  return "";
}

std::string missing_model_hint(const std::string& model_path) {
  if (is_file(model_path)) return "";
  return installed_data_dirs().empty()
             ? "\n(run scripts/fetch-assets to convert the model, or set KOKORO_MODEL)"
             : "\n(run kokoro-fetch-model to fetch and convert the model, or set KOKORO_MODEL)";
}

}  // namespace kokoro
