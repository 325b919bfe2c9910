// Reads PyTorch checkpoints written by torch.save (the zip format of torch >= 1.6) without torch: a
// restricted pickle reader (pickle_reader.h) rebuilds the object tree, tensors are copied out of the
// archive's storage records. Used by kokoro-convert for kokoro-v1_0.pth and the voices/*.pt files.
#pragma once
#include <string>

#include "core/import/state_dict.h"

namespace kokoro {

// A (possibly nested) dict of tensors, flattened with '.' between key levels: {'bert': {'module.x.weight':
// t}} gives "bert.x.weight" (a leading "module." on any key, left by DataParallel, is dropped). Storages of
// float32/float16/bfloat16/float64 become float; integer and bool storages too when every value is exactly
// representable (|v| <= 2^24). Storage offsets and strides are honoured: non-contiguous tensors come out
// contiguous. Anything else (other object types, unknown pickle globals, corrupt or truncated archives)
// throws kokoro::Error naming the file and, where there is one, the key.
StateDict read_torch_checkpoint(const std::string& path);

// A .pt file holding one tensor (or nn.Parameter), such as a Kokoro voice [510, 1, 256].
LoadedTensor read_torch_tensor(const std::string& path);

}  // namespace kokoro
