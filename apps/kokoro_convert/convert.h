// Turns a recovered KModel state dict into an engine model file, checking it against the KModel schema:
// a missing or misshaped parameter is an error naming it; unknown extras are reported and dropped.
#pragma once
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "core/import/state_dict.h"

namespace kokoro {

struct ConversionResult {
  size_t written = 0;
  std::vector<std::string> dropped;           // names not in the schema
  std::vector<std::string> optional_missing;  // optional parameters the source did not have
};

ConversionResult write_engine_model(const StateDict& state, const nlohmann::json& config,
                                    const std::string& source, const std::string& out_path);

}  // namespace kokoro
