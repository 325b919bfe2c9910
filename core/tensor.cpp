#include "core/tensor.h"

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <limits>

#include "core/error.h"

namespace kokoro {

std::string shape_to_string(const Shape& shape) {
  std::string s = "[";
  for (size_t i = 0; i < shape.size(); ++i) s += (i ? ", " : "") + std::to_string(shape[i]);
  return s + "]";
}

int64_t shape_numel(const Shape& shape) {
  int64_t n = 1;
  for (int64_t d : shape) n *= d;
  return n;
}

static std::pair<int64_t, int64_t> rows_cols(const Shape& shape) {
  if (shape.empty()) return {1, 1};
  const int64_t rows = shape[0];
  return {rows, rows == 0 ? 0 : shape_numel(shape) / rows};
}

ConstMatrixMap TensorView::matrix() const {
  auto [r, c] = rows_cols(shape);
  return ConstMatrixMap(data, r, c);
}

Tensor::Tensor(Shape shape) : shape_(std::move(shape)), storage_(shape_numel(shape_), 0.0f) {}

Tensor Tensor::from(const float* data, Shape shape) {
  Tensor t;
  t.resize(std::move(shape));
  if (t.numel()) std::memcpy(t.data(), data, sizeof(float) * t.numel());
  return t;
}

void Tensor::reshape(Shape shape) {
  if (shape_numel(shape) != numel())
    throw Error("reshape " + shape_to_string(shape_) + " -> " + shape_to_string(shape) + ": size differs");
  shape_ = std::move(shape);
}

namespace {
bool poison_tensors() {
  static const bool on = [] {
    const char* e = std::getenv("KOKORO_POISON_TENSORS");
    return e && std::strcmp(e, "1") == 0;
  }();
  return on;
}
}  // namespace

void Tensor::resize(Shape shape) {
  shape_ = std::move(shape);
  const size_t n = static_cast<size_t>(shape_numel(shape_));
  // Growing past the capacity would copy the old (unspecified) contents into the new block: drop them first.
  if (n > storage_.capacity()) storage_.clear();
  storage_.resize(n);
  if (poison_tensors()) std::fill(storage_.begin(), storage_.end(), std::numeric_limits<float>::quiet_NaN());
}

MatrixMap Tensor::matrix() {
  auto [r, c] = rows_cols(shape_);
  return MatrixMap(data(), r, c);
}

ConstMatrixMap Tensor::matrix() const {
  auto [r, c] = rows_cols(shape_);
  return ConstMatrixMap(data(), r, c);
}

}  // namespace kokoro
