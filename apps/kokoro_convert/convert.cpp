#include "apps/kokoro_convert/convert.h"

#include <set>

#include "apps/kokoro_convert/kmodel_schema.h"
#include "core/error.h"
#include "core/model_file.h"

namespace kokoro {

ConversionResult write_engine_model(const StateDict& state, const nlohmann::json& config,
                                    const std::string& source, const std::string& out_path) {
  ConversionResult result;
  ModelWriter writer(config);
  writer.set_source(source);
  std::set<std::string> known;
  for (const ParamSpec& p : kmodel_schema(config)) {
    known.insert(p.name);
    auto it = state.find(p.name);
    if (it == state.end()) {
      if (p.required) throw Error(source + ": missing tensor " + p.name + " " + shape_to_string(p.shape));
      result.optional_missing.push_back(p.name);
      continue;
    }
    Shape shape = it->second.shape;
    if (shape_numel(shape) == shape_numel(p.shape) && shape != p.shape &&
        (p.name.find(".alpha") != std::string::npos || p.shape.size() == 1)) {
      shape = p.shape;  // exports sometimes squeeze [1, C, 1] alphas or keep [C, 1] biases; same data
    }
    if (shape != p.shape)
      throw Error(source + ": tensor " + p.name + " has shape " + shape_to_string(it->second.shape) +
                  ", expected " + shape_to_string(p.shape));
    writer.add(p.name, p.shape, it->second.data.data());
  }
  for (const auto& [name, t] : state)
    if (!known.count(name)) result.dropped.push_back(name);
  writer.write(out_path);
  result.written = writer.size();
  return result;
}

}  // namespace kokoro
