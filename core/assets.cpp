#include "core/assets.h"

#include <cstdlib>
#include <filesystem>
#include <vector>

#include "core/error.h"

namespace kokoro {

namespace fs = std::filesystem;

std::string find_assets_dir(const std::string& explicit_dir) {
  std::vector<std::string> candidates;
  if (!explicit_dir.empty()) {
    candidates.push_back(explicit_dir);
  } else {
    if (const char* env = std::getenv("KOKORO_ASSETS"); env && *env) candidates.push_back(env);
    candidates.push_back(KOKORO_DEFAULT_SHARED_ASSETS);
    candidates.push_back(std::string(KOKORO_SOURCE_DIR) + "/assets");
  }
  std::string tried;
  for (const auto& c : candidates) {
    std::error_code ec;
    if (fs::is_regular_file(fs::path(c) / "config.json", ec)) return c;
    tried += "\n  " + c;
  }
  throw Error("no assets directory with config.json found; tried:" + tried +
              "\nrun scripts/fetch-assets or set KOKORO_ASSETS");
}

std::string default_model_path(const std::string& explicit_path) {
  if (!explicit_path.empty()) return explicit_path;
  if (const char* env = std::getenv("KOKORO_MODEL"); env && *env) return env;
  return std::string(KOKORO_DEFAULT_MODEL_DIR) + "/kokoro-v1_0.kokoro";
}

}  // namespace kokoro
