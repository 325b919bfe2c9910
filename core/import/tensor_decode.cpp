#include "core/import/tensor_decode.h"

#include <algorithm>
#include <bit>
#include <cmath>
#include <climits>
#include <cstring>
#include <vector>

#include "core/error.h"

namespace kokoro::ckpt {

namespace {

// Exact in float32: every integer of magnitude <= 2^24.
constexpr int64_t kMaxExactInt = int64_t{1} << 24;

template <typename T>
T load(const uint8_t* p) {
  T v;
  std::memcpy(&v, p, sizeof(T));  // x86-64 only: little-endian host, as the files are
  return v;
}

bool is_row_major(const StridedLayout& l) {
  int64_t expected = 1;
  for (size_t d = l.shape.size(); d-- > 0;) {
    if (l.shape[d] != 1 && l.stride[d] != expected) return false;
    expected *= l.shape[d];
  }
  return true;
}

// Visits the elements in row-major order of the tensor, passing each one's storage index to `emit`.
// check_layout has bounded every index, and strides of size-1 dims are zeroed, so `pos` cannot overflow.
template <typename Emit>
void for_each_index(const StridedLayout& l, int64_t numel, Emit emit) {
  if (is_row_major(l)) {
    for (int64_t n = 0; n < numel; ++n) emit(n, l.offset + n);
    return;
  }
  const size_t rank = l.shape.size();
  std::vector<int64_t> index(rank, 0);
  int64_t pos = l.offset;
  for (int64_t n = 0; n < numel; ++n) {
    emit(n, pos);
    for (size_t d = rank; d-- > 0;) {
      pos += l.stride[d];
      if (++index[d] < l.shape[d]) break;
      pos -= l.stride[d] * l.shape[d];
      index[d] = 0;
    }
  }
}

}  // namespace

const char* dtype_name(DType t) {
  switch (t) {
    case DType::F32: return "float32";
    case DType::F16: return "float16";
    case DType::BF16: return "bfloat16";
    case DType::F64: return "float64";
    case DType::I64: return "int64";
    case DType::I32: return "int32";
    case DType::I16: return "int16";
    case DType::I8: return "int8";
    case DType::U8: return "uint8";
    case DType::Bool: return "bool";
  }
  return "?";
}

size_t dtype_size(DType t) {
  switch (t) {
    case DType::F64:
    case DType::I64: return 8;
    case DType::F32:
    case DType::I32: return 4;
    case DType::F16:
    case DType::BF16:
    case DType::I16: return 2;
    case DType::I8:
    case DType::U8:
    case DType::Bool: return 1;
  }
  return 1;
}

Shape row_major_strides(const Shape& shape) {
  Shape s(shape.size(), 1);
  int64_t step = 1;
  for (size_t d = shape.size(); d-- > 0;) {
    s[d] = step;
    // Saturates instead of overflowing: such a shape is rejected by check_layout (or has no elements).
    if (__builtin_mul_overflow(step, std::max<int64_t>(shape[d], 1), &step)) step = INT64_MAX;
  }
  return s;
}

Shape column_major_strides(const Shape& shape) {
  Shape s(shape.size(), 1);
  int64_t step = 1;
  for (size_t d = 0; d < shape.size(); ++d) {
    s[d] = step;
    if (__builtin_mul_overflow(step, std::max<int64_t>(shape[d], 1), &step)) step = INT64_MAX;
  }
  return s;
}

int64_t check_layout(const StridedLayout& l, int64_t storage_numel, const std::string& what) {
  auto fail = [&](const std::string& m) { return Error(what + ": " + m); };
  if (l.shape.size() != l.stride.size())
    throw fail("shape " + shape_to_string(l.shape) + " and stride " + shape_to_string(l.stride) +
               " differ in rank");
  if (l.shape.size() > kMaxRank) throw fail("rank " + std::to_string(l.shape.size()) + " is too large");
  if (l.offset < 0 || storage_numel < 0) throw fail("negative storage offset or size");
  int64_t numel = 1;
  for (size_t d = 0; d < l.shape.size(); ++d) {
    if (l.shape[d] < 0 || l.stride[d] < 0)
      throw fail("negative size or stride in shape " + shape_to_string(l.shape) + " stride " +
                 shape_to_string(l.stride));
    if (__builtin_mul_overflow(numel, l.shape[d], &numel))
      throw fail("shape " + shape_to_string(l.shape) + " overflows");
  }
  if (numel == 0) return 0;
  int64_t last = l.offset;
  for (size_t d = 0; d < l.shape.size(); ++d) {
    int64_t span;
    if (__builtin_mul_overflow(l.shape[d] - 1, l.stride[d], &span) || __builtin_add_overflow(last, span, &last))
      throw fail("layout offset " + std::to_string(l.offset) + " stride " + shape_to_string(l.stride) +
                 " overflows");
  }
  if (last >= storage_numel)
    throw fail("shape " + shape_to_string(l.shape) + " stride " + shape_to_string(l.stride) + " offset " +
               std::to_string(l.offset) + " reads element " + std::to_string(last) + " of a storage of " +
               std::to_string(storage_numel));
  if (numel > storage_numel && numel > kMaxExpandedNumel)
    throw fail("shape " + shape_to_string(l.shape) + " expands a storage of " + std::to_string(storage_numel) +
               " elements to " + std::to_string(numel));
  return numel;
}

float half_to_float(uint16_t h) {
  const uint32_t sign = static_cast<uint32_t>(h & 0x8000u) << 16;
  const uint32_t exponent = (h >> 10) & 0x1fu;
  uint32_t mantissa = h & 0x3ffu;
  uint32_t bits;
  if (exponent == 0x1f) {
    bits = sign | 0x7f800000u | (mantissa << 13);  // inf / NaN, payload kept
  } else if (exponent != 0) {
    bits = sign | ((exponent + 127 - 15) << 23) | (mantissa << 13);
  } else if (mantissa == 0) {
    bits = sign;  // +-0
  } else {
    // Subnormal half: normalise; every such value is a normal float.
    uint32_t shifts = 0;
    while ((mantissa & 0x400u) == 0) {
      mantissa <<= 1;
      ++shifts;
    }
    bits = sign | ((127 - 14 - shifts) << 23) | ((mantissa & 0x3ffu) << 13);
  }
  return std::bit_cast<float>(bits);
}

float bfloat16_to_float(uint16_t bits) { return std::bit_cast<float>(static_cast<uint32_t>(bits) << 16); }

LoadedTensor decode_tensor(const uint8_t* bytes, size_t nbytes, int64_t storage_numel, DType type,
                           const StridedLayout& layout_in, const std::string& what) {
  const size_t esize = dtype_size(type);
  if (storage_numel < 0 || static_cast<uint64_t>(storage_numel) > nbytes / esize ||
      static_cast<uint64_t>(storage_numel) * esize != nbytes)
    throw Error(what + ": storage has " + std::to_string(nbytes) + " bytes, expected " +
                std::to_string(storage_numel) + " " + dtype_name(type) + " elements");
  const int64_t numel = check_layout(layout_in, storage_numel, what);
  StridedLayout layout = layout_in;
  for (size_t d = 0; d < layout.shape.size(); ++d)
    if (layout.shape[d] == 1) layout.stride[d] = 0;  // never stepped over; keeps index arithmetic small

  LoadedTensor out;
  out.shape = layout.shape;
  out.source_dtype = dtype_name(type);
  out.data.resize(static_cast<size_t>(numel));
  float* dst = out.data.data();
  auto integer = [&](int64_t v, int64_t pos) {
    if (v > kMaxExactInt || v < -kMaxExactInt)
      throw Error(what + ": " + dtype_name(type) + " value " + std::to_string(v) + " at storage element " +
                  std::to_string(pos) + " is not exactly representable as float");
    return static_cast<float>(v);
  };
  switch (type) {
    case DType::F32:
      for_each_index(layout, numel, [&](int64_t n, int64_t p) { dst[n] = load<float>(bytes + 4 * p); });
      break;
    case DType::F16:
      for_each_index(layout, numel,
                     [&](int64_t n, int64_t p) { dst[n] = half_to_float(load<uint16_t>(bytes + 2 * p)); });
      break;
    case DType::BF16:
      for_each_index(layout, numel,
                     [&](int64_t n, int64_t p) { dst[n] = bfloat16_to_float(load<uint16_t>(bytes + 2 * p)); });
      break;
    case DType::F64:
      for_each_index(layout, numel, [&](int64_t n, int64_t p) {
        const double v = load<double>(bytes + 8 * p);
        const float f = static_cast<float>(v);
        if (std::isinf(f) && std::isfinite(v))
          throw Error(what + ": float64 value " + std::to_string(v) + " at storage element " + std::to_string(p) +
                      " overflows float32");
        dst[n] = f;
      });
      break;
    case DType::I64:
      for_each_index(layout, numel, [&](int64_t n, int64_t p) { dst[n] = integer(load<int64_t>(bytes + 8 * p), p); });
      break;
    case DType::I32:
      for_each_index(layout, numel, [&](int64_t n, int64_t p) { dst[n] = integer(load<int32_t>(bytes + 4 * p), p); });
      break;
    case DType::I16:
      for_each_index(layout, numel, [&](int64_t n, int64_t p) { dst[n] = load<int16_t>(bytes + 2 * p); });
      break;
    case DType::I8:
      for_each_index(layout, numel, [&](int64_t n, int64_t p) { dst[n] = load<int8_t>(bytes + p); });
      break;
    case DType::U8:
      for_each_index(layout, numel, [&](int64_t n, int64_t p) { dst[n] = bytes[p]; });
      break;
    case DType::Bool:
      for_each_index(layout, numel, [&](int64_t n, int64_t p) { dst[n] = bytes[p] != 0 ? 1.0f : 0.0f; });
      break;
  }
  return out;
}

}  // namespace kokoro::ckpt
