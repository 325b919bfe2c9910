// Where the engine finds its data. Order for every item: an explicit path (CLI flag, kokoro_config), then an
// environment variable, then an installed copy, then the build tree's. Nothing is downloaded at run time.
//   assets dir  (config.json, voices/*.bin, lexicons/): --assets, KOKORO_ASSETS, <data>/assets, then in a build
//               tree ../shared/assets beside the source tree and <source>/assets (what scripts/fetch-assets writes)
//   model file: --model, KOKORO_MODEL, <data>/kokoro-v1_0.kokoro if it exists, <source>/models/kokoro-v1_0.kokoro
// <data> is <prefix>/share/kokoro-rt of an installed engine (cmake --install, the .deb), found from where the
// running program and the compute library are (core/install_paths.h: bin/, lib/<multiarch>/kokoro-rt/ and its
// glibc-hwcaps/<level>/, lib/speech-dispatcher-modules/ ...), so that an install moved to another prefix
// still finds its data, and last the configured prefix's (a program linking libkokoro.a). A binary in a build
// tree finds the build tree's paths in the marker file beside its bin/ and lib/; no binary has them built in.
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
// <configured prefix>/share/kokoro-rt, existing or not: where an install without any data is told to put it.
std::string configured_data_dir();

}  // namespace kokoro
