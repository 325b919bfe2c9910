// The subset of Python's pickle virtual machine that torch.save produces (protocols 2-5 binary opcodes),
// with an allow-list of globals instead of arbitrary code: OrderedDict, the torch._utils tensor/parameter
// rebuilders and the typed storage classes. Tensors and storages are recognised while unpickling and kept
// as descriptions (storage key, dtype, layout); their bytes live elsewhere (the archive's data/<key>).
//
// Untrusted input: every read is bounds-checked, and the opcode count is capped, which bounds the stack,
// the memo, the number of objects and the container sizes; nothing recurses on the input's nesting.
#pragma once
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "core/import/tensor_decode.h"

namespace kokoro::ckpt {

inline constexpr size_t kMaxPickleOps = size_t{1} << 22;

enum class Kind : uint8_t { None, Bool, Int, Float, String, Bytes, Tuple, List, Dict, Global, Storage, Tensor };
const char* kind_name(Kind k);

struct StorageRef {
  std::string key;  // record name under <archive>/data/
  DType dtype = DType::F32;
  int64_t numel = 0;  // elements
};

struct TensorRef {
  uint32_t storage = 0;  // index into Unpickled::storages
  StridedLayout layout;
};

struct Value {
  Kind kind = Kind::None;
  int64_t integer = 0;          // Bool, Int; for Storage/Tensor: index into storages/tensors
  double real = 0;              // Float
  std::string text;             // String, Bytes; Global as "module.name"
  std::vector<uint32_t> items;  // Tuple, List; Dict as key, value, key, value... in insertion order
};

struct Unpickled {
  std::vector<Value> values;  // objects refer to each other by index (cycles are harmless)
  std::vector<StorageRef> storages;
  std::vector<TensorRef> tensors;
  uint32_t root = 0;

  const Value& at(uint32_t i) const { return values.at(i); }
};

// Runs the pickle in `bytes` up to STOP. Throws Error("<what>: ...") naming the byte offset for unknown
// opcodes or globals, truncation, type errors and exceeded limits.
Unpickled unpickle(const uint8_t* bytes, size_t size, const std::string& what);

}  // namespace kokoro::ckpt
