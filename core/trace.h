// Optional observation of intermediate tensors, for golden tests and debugging. Modules call
// trace(name, tensor) at their boundaries; names are those of the golden files (docs/golden-data.md).
// An empty Trace costs one branch per module call.
#pragma once
#include <functional>
#include <string>

#include "core/tensor.h"

namespace kokoro {

using Trace = std::function<void(const std::string& name, const Tensor& value)>;

inline void trace(const Trace* t, const std::string& name, const Tensor& value) {
  if (t && *t) (*t)(name, value);
}

}  // namespace kokoro
