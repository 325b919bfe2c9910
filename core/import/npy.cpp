#include "core/import/npy.h"

#include <cstring>
#include <optional>
#include <string_view>

#include "core/error.h"
#include "core/import/tensor_decode.h"

namespace kokoro::ckpt {

namespace {

constexpr char kMagic[] = "\x93NUMPY";
constexpr size_t kMagicSize = 6;

// The header is a Python dict literal such as {'descr': '<f4', 'fortran_order': False, 'shape': (510, 1, 256), }
class HeaderParser {
 public:
  HeaderParser(std::string_view text, const std::string& what) : s_(text), what_(what) {}

  void parse(std::string& descr, bool& fortran_order, Shape& shape) {
    bool have_descr = false, have_order = false, have_shape = false;
    expect('{');
    while (true) {
      skip_space();
      if (peek() == '}') break;
      const std::string key = quoted();
      expect(':');
      if (key == "descr" && !have_descr) {
        descr = quoted();
        have_descr = true;
      } else if (key == "fortran_order" && !have_order) {
        fortran_order = boolean();
        have_order = true;
      } else if (key == "shape" && !have_shape) {
        shape = int_tuple();
        have_shape = true;
      } else {
        throw fail("unexpected or repeated key '" + key + "'");
      }
      skip_space();
      if (peek() == ',') ++i_;
    }
    ++i_;
    skip_space();
    if (i_ != s_.size()) throw fail("text after the dict");
    if (!have_descr || !have_order || !have_shape) throw fail("descr, fortran_order or shape missing");
  }

 private:
  Error fail(const std::string& m) const { return Error(what_ + ": npy header: " + m); }
  char peek() const {
    if (i_ >= s_.size()) throw fail("ends early");
    return s_[i_];
  }
  void skip_space() {
    while (i_ < s_.size() && (s_[i_] == ' ' || s_[i_] == '\n' || s_[i_] == '\t')) ++i_;
  }
  void expect(char c) {
    skip_space();
    if (peek() != c) throw fail(std::string("expected '") + c + "'");
    ++i_;
  }
  std::string quoted() {
    skip_space();
    const char q = peek();
    if (q != '\'' && q != '"') throw fail("expected a quoted string");
    const size_t end = s_.find(q, i_ + 1);
    if (end == std::string_view::npos) throw fail("unterminated string");
    std::string out(s_.substr(i_ + 1, end - i_ - 1));
    i_ = end + 1;
    return out;
  }
  bool boolean() {
    skip_space();
    if (s_.substr(i_, 4) == "True") return i_ += 4, true;
    if (s_.substr(i_, 5) == "False") return i_ += 5, false;
    throw fail("expected True or False");
  }
  Shape int_tuple() {
    expect('(');
    Shape shape;
    while (true) {
      skip_space();
      if (peek() == ')') break;
      int64_t v = 0;
      size_t digits = 0;
      while (i_ < s_.size() && s_[i_] >= '0' && s_[i_] <= '9') {
        if (++digits > 18) throw fail("dimension too large");
        v = v * 10 + (s_[i_++] - '0');
      }
      if (digits == 0) throw fail("expected a dimension");
      if (i_ < s_.size() && s_[i_] == 'L') ++i_;  // Python 2 longs
      if (shape.size() >= kMaxRank) throw fail("too many dimensions");
      shape.push_back(v);
      skip_space();
      if (peek() == ',') ++i_;
      else if (peek() != ')') throw fail("expected ',' or ')' in shape");
    }
    ++i_;
    return shape;
  }

  std::string_view s_;
  const std::string& what_;
  size_t i_ = 0;
};

std::optional<DType> dtype_for(const std::string& descr) {
  static const std::pair<const char*, DType> kTypes[] = {
      {"<f4", DType::F32}, {"<f2", DType::F16}, {"<f8", DType::F64}, {"<i8", DType::I64}, {"<i4", DType::I32},
      {"<i2", DType::I16}, {"|i1", DType::I8},  {"|u1", DType::U8},  {"|b1", DType::Bool},
  };
  for (const auto& [name, type] : kTypes)
    if (descr == name) return type;
  return std::nullopt;
}

}  // namespace

LoadedTensor parse_npy(const uint8_t* bytes, size_t size, const std::string& what) {
  if (size < kMagicSize + 2 || std::memcmp(bytes, kMagic, kMagicSize) != 0)
    throw Error(what + ": not a .npy array (wrong magic)");
  const uint8_t major = bytes[kMagicSize];
  size_t header_len, header_start;
  if (major == 1) {
    if (size < 10) throw Error(what + ": truncated npy header");
    header_len = bytes[8] | (bytes[9] << 8);
    header_start = 10;
  } else if (major == 2 || major == 3) {
    if (size < 12) throw Error(what + ": truncated npy header");
    uint32_t len;
    std::memcpy(&len, bytes + 8, 4);
    header_len = len;
    header_start = 12;
  } else {
    throw Error(what + ": npy format version " + std::to_string(major) + " is not supported");
  }
  if (header_len > size - header_start) throw Error(what + ": truncated npy header");

  std::string descr;
  bool fortran_order = false;
  Shape shape;
  HeaderParser(std::string_view(reinterpret_cast<const char*>(bytes + header_start), header_len), what)
      .parse(descr, fortran_order, shape);
  const auto type = dtype_for(descr);
  if (!type) {
    if (!descr.empty() && descr[0] == '>') throw Error(what + ": big-endian dtype '" + descr + "' is not supported");
    throw Error(what + ": dtype '" + descr + "' is not supported (float, integer or bool arrays only)");
  }

  int64_t numel = 1;
  for (int64_t d : shape)
    if (__builtin_mul_overflow(numel, d, &numel)) throw Error(what + ": shape " + shape_to_string(shape) + " overflows");
  const size_t data_start = header_start + header_len;
  const uint64_t data_bytes = size - data_start;
  if (data_bytes / dtype_size(*type) != static_cast<uint64_t>(numel) || data_bytes % dtype_size(*type) != 0)
    throw Error(what + ": " + std::to_string(data_bytes) + " data bytes for shape " + shape_to_string(shape) + " of " +
                dtype_name(*type));
  StridedLayout layout{0, shape, fortran_order ? column_major_strides(shape) : row_major_strides(shape)};
  return decode_tensor(bytes + data_start, data_bytes, numel, *type, layout, what);
}

}  // namespace kokoro::ckpt
