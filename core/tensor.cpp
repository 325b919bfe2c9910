#include "core/tensor.h"

#include <cstring>

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
  Tensor t(std::move(shape));
  if (t.numel()) std::memcpy(t.data(), data, sizeof(float) * t.numel());
  return t;
}

void Tensor::reshape(Shape shape) {
  if (shape_numel(shape) != numel())
    throw Error("reshape " + shape_to_string(shape_) + " -> " + shape_to_string(shape) + ": size differs");
  shape_ = std::move(shape);
}

void Tensor::resize(Shape shape) {
  shape_ = std::move(shape);
  storage_.resize(shape_numel(shape_));
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
