// Where the engine finds its data. Order for every item: an explicit path (CLI flag, kokoro_config), then an
// environment variable, then an installed copy, then the default baked in at build time. Nothing is
// downloaded at run time.
//   assets dir  (config.json, voices/*.bin, lexicons/): --assets, KOKORO_ASSETS, <data>/assets, ../shared/assets
//               beside the source tree, then <source>/assets (what scripts/fetch-assets writes)
//   model file: --model, KOKORO_MODEL, <data>/kokoro-v1_0.kokoro if it exists, <source>/models/kokoro-v1_0.kokoro
// <data> is <prefix>/share/kokoro-rt of an installed engine (cmake --install, the .deb), found relative to
// the running program and to the shared library holding this code, so that an install moved to another
// prefix still finds its data; a binary in the build tree has none and uses the build-time defaults.
#pragma once
#include <string>
#include <vector>

namespace kokoro {

// Returns the first candidate directory that holds config.json, or throws listing what was tried.
std::string find_assets_dir(const std::string& explicit_dir = "");
// Returns the model path to use (not checked for existence; ModelFile::open reports that clearly).
std::string default_model_path(const std::string& explicit_path = "");
// "" if the model file exists; otherwise a hint saying how to get it (kokoro-fetch-model when installed,
// scripts/fetch-assets in a source tree), to append to the error that names the path.
std::string missing_model_hint(const std::string& model_path);
// Where kokoro-rt keeps what it derives from its data to start faster (compiled lexicons, records of model
// files already verified): $XDG_CACHE_HOME/kokoro-rt, else $HOME/.cache/kokoro-rt; "" when neither is set.
// Not created here.
std::string user_cache_dir();
// The installed data directories (<prefix>/share/kokoro-rt) that exist, most specific first; empty in a
// build tree.
std::vector<std::string> installed_data_dirs();

}  // namespace kokoro
