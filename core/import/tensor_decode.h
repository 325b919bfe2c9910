// Element types found in checkpoints and the one routine that turns raw little-endian storage bytes plus a
// strided layout into a contiguous float tensor. All bounds are checked here with overflow-safe arithmetic,
// so the callers (pickle graphs, .npy headers) can pass untrusted numbers straight through.
#pragma once
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>

#include "core/import/state_dict.h"

namespace kokoro::ckpt {

enum class DType : uint8_t { F32, F16, BF16, F64, I64, I32, I16, I8, U8, Bool };

const char* dtype_name(DType t);  // numpy/torch spelling: "float32", "bfloat16", "int64", "bool"...
size_t dtype_size(DType t);

// Where a tensor's elements sit in its storage, all in elements (not bytes).
struct StridedLayout {
  int64_t offset = 0;
  Shape shape;
  Shape stride;
};

inline constexpr size_t kMaxRank = 16;
// A tensor may address more elements than its storage holds (a stride-0 expand), but not arbitrarily
// many: this caps what a few bytes of a hostile file can make us allocate.
inline constexpr int64_t kMaxExpandedNumel = int64_t{1} << 20;

Shape row_major_strides(const Shape& shape);
Shape column_major_strides(const Shape& shape);

// Validates the layout against a storage of storage_numel elements and returns the tensor's element
// count. Throws Error("<what>: ...") on negative sizes, overflow, or an element outside the storage.
int64_t check_layout(const StridedLayout& layout, int64_t storage_numel, const std::string& what);

// Decodes the tensor. `bytes` holds storage_numel elements of type `type` (nbytes is checked). Integer
// values must lie within +-2^24 (exact in float); float64 values must not overflow float32.
LoadedTensor decode_tensor(const uint8_t* bytes, size_t nbytes, int64_t storage_numel, DType type,
                           const StridedLayout& layout, const std::string& what);

// IEEE binary16 / bfloat16 bit patterns to float (exact: every value of both is a float).
float half_to_float(uint16_t bits);
float bfloat16_to_float(uint16_t bits);

}  // namespace kokoro::ckpt
