// Every parameter of the official KModel (kokoro 0.9.4) with its shape, derived from config.json. The
// converter checks a converted state dict against it, so a model file that loads is known to be complete.
#pragma once
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "core/tensor.h"

namespace kokoro {

struct ParamSpec {
  std::string name;
  Shape shape;
  bool required = true;  // optional: ALBERT's unused pooler, AdaIN's identity InstanceNorm affine params
};

std::vector<ParamSpec> kmodel_schema(const nlohmann::json& config);

}  // namespace kokoro
