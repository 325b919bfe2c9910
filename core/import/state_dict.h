// What the checkpoint importers produce: named float tensors, contiguous and row-major, as the model
// converter wants them. Shared by the PyTorch (torch_checkpoint.h) and numpy (npz.h) readers.
#pragma once
#include <map>
#include <string>
#include <vector>

#include "core/tensor.h"

namespace kokoro {

struct LoadedTensor {
  Shape shape;
  std::vector<float> data;   // shape_numel(shape) values, row-major
  std::string source_dtype;  // element type in the file: "float32", "float16", "bfloat16", "float64", "int64"...
};

// Keys are dotted names ("decoder.generator.ups.0.weight_v"); std::map keeps them sorted for stable output.
using StateDict = std::map<std::string, LoadedTensor>;

// Folds weight norm: every "X.weight_g" / "X.weight_v" pair (torch.nn.utils.weight_norm) and every
// "X.parametrizations.weight.original0" / "...original1" pair (torch.nn.utils.parametrizations.weight_norm,
// g then v) becomes "X.weight" = g * v / ||v||, the norm taken over all dims except the one g keeps (dim 0
// for weight_norm's default; g of one element means dim=None, the norm of all of v). The pair is removed.
// Throws kokoro::Error naming the key for an unpaired g or v, shapes that do not match, an existing
// "X.weight", or a slice of v with zero norm.
void fold_weight_norm(StateDict& sd);

}  // namespace kokoro
