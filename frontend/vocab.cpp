#include "frontend/vocab.h"

#include <spdlog/spdlog.h>

#include <fstream>

#include "core/error.h"
#include "frontend/utf8.h"

namespace kokoro {

Vocab Vocab::load(const std::string& config_path) {
  std::ifstream in(config_path, std::ios::binary);
  if (!in) throw Error("cannot open model config " + config_path);
  nlohmann::json config;
  try {
    config = nlohmann::json::parse(in);
  } catch (const std::exception& e) {
    throw Error("model config " + config_path + " is not valid JSON: " + e.what());
  }
  return from_config(config, config_path);
}

Vocab Vocab::from_config(const nlohmann::json& config, const std::string& source) {
  if (!config.is_object() || !config.contains("vocab") || !config["vocab"].is_object())
    throw Error(source + ": no \"vocab\" object");
  Vocab v;
  for (const auto& [symbol, id] : config["vocab"].items()) {
    const std::u32string cps = utf8::to_u32(symbol);
    if (cps.size() != 1 || !utf8::is_valid(symbol))
      throw Error(source + ": vocab key '" + symbol + "' is not a single character");
    if (!id.is_number_integer() || id.get<int64_t>() < 1 || id.get<int64_t>() >= (int64_t{1} << 31))
      throw Error(source + ": vocab id of '" + symbol + "' is not an integer in [1, 2^31)");
    v.ids_[cps[0]] = id.get<int64_t>();
  }
  if (v.ids_.empty()) throw Error(source + ": \"vocab\" is empty");
  return v;
}

std::optional<int64_t> Vocab::id(char32_t symbol) const {
  auto it = ids_.find(symbol);
  if (it == ids_.end()) return std::nullopt;
  return it->second;
}

std::vector<int64_t> tokenize(std::string_view phonemes, const Vocab& vocab) {
  std::vector<int64_t> ids;
  ids.reserve(phonemes.size());
  size_t pos = 0;
  while (pos < phonemes.size()) {
    char32_t cp;
    const size_t len = utf8::decode_one(phonemes, pos, cp);
    if (auto id = vocab.id(cp)) {
      ids.push_back(*id);
    } else {
      spdlog::debug("tokenize: dropping symbol U+{:04X} at byte {} (not in the vocab)", static_cast<uint32_t>(cp), pos);
    }
    pos += len;
  }
  return ids;
}

}  // namespace kokoro
