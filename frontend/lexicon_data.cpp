// LexiconData::load: which binary lexicon to map for a lexicon directory, and compiling the JSON when none
// is up to date (frontend/README.md "Binary lexicons").
#include <spdlog/spdlog.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <mutex>

#include "core/assets.h"
#include "core/error.h"
#include "core/install_paths.h"
#include "frontend/lexicon.h"
#include "frontend/lexicon_binary.h"

namespace kokoro::en {

namespace fs = std::filesystem;

namespace {

bool is_file(const std::string& p) {
  std::error_code ec;
  return fs::is_regular_file(p, ec);
}

std::string user_lexicon_cache() {
  const std::string d = user_cache_dir();
  return d.empty() ? "" : d + "/lexicons";
}

std::string hex(uint64_t v) {
  char buf[17];
  std::snprintf(buf, sizeof buf, "%016llx", static_cast<unsigned long long>(v));
  return buf;
}

double ms_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
}

std::shared_ptr<const BinaryLexicon> load_binary(const std::string& dir, bool british, std::string& origin) {
  const std::string accent = british ? "gb" : "us";
  const std::string gold_json = dir + "/" + accent + "_gold.json", silver_json = dir + "/" + accent + "_silver.json";
  const bool have_json = is_file(gold_json) && is_file(silver_json);
  const std::string beside = dir + "/" + accent + ".kolex";
  // Where a build tree writes <accent>.kolex from the assets it found (apps/kokoro_convert/CMakeLists.txt).
  const std::string build_dir = build_tree().lexicons;
  const std::string built = build_dir.empty() ? "" : build_dir + "/" + accent + ".kolex";

  if (!have_json) {
    // An install may ship only the binary form; it is then the truth. (The build's own file is made from
    // other JSON, so it does not stand in for this directory.)
    if (is_file(beside)) {
      origin = beside;
      return BinaryLexicon::open(beside);
    }
    throw Error("no " + accent + " lexicons in " + dir + ": neither " + accent + "_gold.json and " + accent +
                "_silver.json nor " + accent + ".kolex (run scripts/fetch-assets or set KOKORO_ASSETS)");
  }

  const LexiconSource source = lexicon_source(gold_json, silver_json);
  const std::string cache_dir = user_lexicon_cache();
  const std::string cached =
      cache_dir.empty() ? "" : cache_dir + "/" + accent + "-" + hex(source.gold_hash ^ (source.silver_hash * 31)) + ".kolex";
  // A damaged file beside the JSON or from the build is reported; a damaged cache entry is just rebuilt.
  for (const std::string& c : {beside, built}) {
    if (c.empty() || !is_file(c)) continue;
    auto lex = BinaryLexicon::open(c);
    if (lex->source() == source && lex->british() == british) {
      origin = c;
      return lex;
    }
    spdlog::debug("binary lexicon {} was made from other JSON than {}; not used", c, dir);
  }
  if (!cached.empty() && is_file(cached)) {
    try {
      auto lex = BinaryLexicon::open(cached);
      if (lex->source() == source && lex->british() == british) {
        origin = cached;
        return lex;
      }
    } catch (const Error& e) {
      spdlog::warn("{}; compiling it again", e.what());
    }
  }

  const auto t0 = std::chrono::steady_clock::now();
  std::vector<uint8_t> image = compile_lexicon_dir(dir, british);
  std::string note;
  if (cached.empty()) {
    note = "no cache directory ($HOME and $XDG_CACHE_HOME unset), so every start will do this";
  } else {
    try {
      std::error_code ec;
      fs::create_directories(cache_dir, ec);
      write_lexicon_file(cached, image);
      note = "cached in " + cached + " for the next start";
    } catch (const Error& e) {
      note = std::string("could not cache it (") + e.what() + "), so every start will do this";
    }
  }
  spdlog::info("compiled the {} lexicons of {} from JSON in {:.0f} ms; {}", accent, dir, ms_since(t0), note);
  origin = gold_json + " (compiled)";
  auto lex = BinaryLexicon::from_image(std::move(image), origin);
  if (lex->source() != source) throw Error("lexicons in " + dir + " changed while they were being read; try again");
  return lex;
}

}  // namespace

std::shared_ptr<const LexiconData> LexiconData::from_binary(std::shared_ptr<const BinaryLexicon> dicts,
                                                            std::string origin) {
  auto data = std::make_shared<LexiconData>();
  data->british = dicts->british();
  data->dicts = std::move(dicts);
  data->origin = std::move(origin);
  return data;
}

std::shared_ptr<const LexiconData> LexiconData::load(const std::string& lexicon_dir, bool british) {
  static std::mutex mu;
  static std::map<std::string, std::weak_ptr<const LexiconData>> cache;
  const std::string key = lexicon_dir + (british ? "/gb" : "/us");
  std::lock_guard<std::mutex> lock(mu);
  if (auto it = cache.find(key); it != cache.end()) {
    if (auto live = it->second.lock()) return live;
  }
  std::string origin;
  auto dicts = load_binary(lexicon_dir, british, origin);
  if (dicts->british() != british)
    throw Error("binary lexicon " + origin + " is for the " + (dicts->british() ? "British" : "American") +
                " accent, expected the other");
  spdlog::debug("lexicon {}: {} gold, {} silver entries from {}", key, dicts->size(BinaryLexicon::gold),
                dicts->size(BinaryLexicon::silver), origin);
  auto data = from_binary(std::move(dicts), std::move(origin));
  cache[key] = data;
  return data;
}

}  // namespace kokoro::en
