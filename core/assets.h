// Where the engine finds its data. Order for every item: an explicit path (CLI flag), then an environment
// variable, then the default baked in at build time. Nothing is downloaded at run time.
//   assets dir  (config.json, voices/*.bin, lexicons/): --assets, KOKORO_ASSETS, ../shared/assets beside
//               the source tree, then <source>/assets (what scripts/fetch-assets writes)
//   model file: --model, KOKORO_MODEL, <source>/models/kokoro-v1_0.kokoro
#pragma once
#include <string>

namespace kokoro {

// Returns the first candidate directory that holds config.json, or throws listing what was tried.
std::string find_assets_dir(const std::string& explicit_dir = "");
// Returns the model path to use (not checked for existence; ModelFile::open reports that clearly).
std::string default_model_path(const std::string& explicit_path = "");

}  // namespace kokoro
