#include "core/assets.h"

#include <cstdlib>
#include <filesystem>
#include <vector>

#include "core/error.h"
#include "core/install_paths.h"

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
  // A build-tree binary does not look in the configured prefix: an install there (say /usr/local) must not
  // stand in for the build tree's own data.
  return install_data_dirs(running_object_files(), configured_install_layout(), !build_tree().found());
}

std::string configured_data_dir() {
  const InstallLayout& layout = configured_install_layout();
  return (fs::path(layout.prefix) / layout.data_dir).lexically_normal().string();
}

std::string find_assets_dir(const std::string& explicit_dir) {
  std::vector<std::string> candidates;
  if (!explicit_dir.empty()) {
    candidates.push_back(explicit_dir);
  } else {
    if (const char* env = std::getenv("KOKORO_ASSETS"); env && *env) candidates.push_back(env);
    for (const auto& d : installed_data_dirs()) candidates.push_back(d + "/assets");
    if (const BuildTree& tree = build_tree(); tree.found()) {
      candidates.push_back(tree.shared_assets);
      candidates.push_back(tree.source + "/assets");
    }
    if (candidates.empty()) candidates.push_back(configured_data_dir() + "/assets");  // to name it in the error
  }
  std::string tried;
  for (const auto& c : candidates) {
    if (is_file(fs::path(c) / "config.json")) return c;
    tried += "\n  " + c;
  }
  throw Error("no assets directory with config.json found; tried:" + tried +
              (build_tree().found() ? "\nrun scripts/fetch-assets or set KOKORO_ASSETS"
                                    : "\nrun kokoro-fetch-model or set KOKORO_ASSETS"));
}

std::string default_model_path(const std::string& explicit_path) {
  if (!explicit_path.empty()) return explicit_path;
  if (const char* env = std::getenv("KOKORO_MODEL"); env && *env) return env;
  const std::vector<std::string> installed = installed_data_dirs();
  for (const auto& d : installed)
    if (is_file(fs::path(d) / kModelName)) return d + "/" + kModelName;
  if (const BuildTree& tree = build_tree(); tree.found()) {
    const std::string build_model = tree.models + "/" + kModelName;
    if (is_file(build_model) || installed.empty()) return build_model;
  }
  // An installed engine without its model names the installed place (where kokoro-fetch-model puts it).
  return (installed.empty() ? configured_data_dir() : installed.front()) + "/" + kModelName;
}

std::string user_cache_dir() {
  if (const char* x = std::getenv("XDG_CACHE_HOME"); x && *x == '/') return std::string(x) + "/kokoro-rt";
  if (const char* h = std::getenv("HOME"); h && *h == '/') return std::string(h) + "/.cache/kokoro-rt";
  return "";
}

std::string missing_model_hint(const std::string& model_path) {
  if (is_file(model_path)) return "";
  return build_tree().found() && installed_data_dirs().empty()
             ? "\n(run scripts/fetch-assets to convert the model, or set KOKORO_MODEL)"
             : "\n(run kokoro-fetch-model to fetch and convert the model, or set KOKORO_MODEL)";
}

}  // namespace kokoro
