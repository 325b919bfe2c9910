// Dense float32 tensors. Batch is always 1 and omitted: activations are [channels, time], row-major, the
// PyTorch NCT layout without N, so that golden data from the reference can be compared element by element.
// Storage is 64-byte aligned for AVX-512 loads. Eigen maps give GEMM-shaped views without copies.
#pragma once
#include <type_traits>
#include <utility>
#include <Eigen/Core>
#include <cstdint>
#include <initializer_list>
#include <string>
#include <vector>

namespace kokoro {

using RowMatrix = Eigen::Matrix<float, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
using MatrixMap = Eigen::Map<RowMatrix, Eigen::Unaligned>;
using ConstMatrixMap = Eigen::Map<const RowMatrix, Eigen::Unaligned>;
using VectorMap = Eigen::Map<Eigen::VectorXf, Eigen::Unaligned>;
using ConstVectorMap = Eigen::Map<const Eigen::VectorXf, Eigen::Unaligned>;

using Shape = std::vector<int64_t>;
std::string shape_to_string(const Shape& shape);
int64_t shape_numel(const Shape& shape);

// Non-owning view of weights (usually inside the mmapped model file) or of another tensor.
struct TensorView {
  const float* data = nullptr;
  Shape shape;

  int64_t numel() const { return shape_numel(shape); }
  int64_t dim(size_t i) const { return shape.at(i); }
  // [rows, cols] view; a 3-D conv weight [out, in, k] is viewed as [out, in*k].
  ConstMatrixMap matrix() const;
  ConstVectorMap vector() const { return ConstVectorMap(data, numel()); }
};

// Eigen's aligned allocator, except that a vector's new elements are left uninitialised (default- rather
// than value-initialised): growing a 60 MB activation must not zero it first in one thread, which also took
// every page fault of the fresh memory serially (~10 % of a long segment's synthesis ran single-threaded on
// that). Tensor(Shape) still zero-fills explicitly.
template <class T>
struct UninitialisedAllocator : Eigen::aligned_allocator<T> {
  template <class U>
  struct rebind {
    using other = UninitialisedAllocator<U>;
  };
  UninitialisedAllocator() = default;
  template <class U>
  UninitialisedAllocator(const UninitialisedAllocator<U>&) noexcept {}
  template <class U>
  void construct(U* p) noexcept(std::is_nothrow_default_constructible_v<U>) {
    ::new (static_cast<void*>(p)) U;
  }
  template <class U, class... Args>
  void construct(U* p, Args&&... args) {
    ::new (static_cast<void*>(p)) U(std::forward<Args>(args)...);
  }
};

class Tensor {
 public:
  Tensor() = default;
  explicit Tensor(Shape shape);  // zero-filled
  Tensor(std::initializer_list<int64_t> shape) : Tensor(Shape(shape)) {}
  static Tensor from(const float* data, Shape shape);

  const Shape& shape() const { return shape_; }
  int64_t dim(size_t i) const { return shape_.at(i); }
  size_t rank() const { return shape_.size(); }
  int64_t numel() const { return static_cast<int64_t>(storage_.size()); }
  float* data() { return storage_.data(); }
  const float* data() const { return storage_.data(); }
  float& operator[](int64_t i) { return storage_[i]; }
  float operator[](int64_t i) const { return storage_[i]; }

  // Reinterprets the same storage with another shape of equal size.
  void reshape(Shape shape);
  // Changes shape and size; contents are unspecified afterwards (reuses capacity, so steady-state
  // streaming does not allocate once buffers have grown to their largest size). Nothing is written: the
  // kernel that fills the tensor touches its pages, in parallel. KOKORO_POISON_TENSORS=1 fills every
  // resized tensor with NaN instead, so that a test run shows any code that reads before it writes.
  void resize(Shape shape);

  MatrixMap matrix();  // rank-2 view, or [d0, rest] for higher ranks
  ConstMatrixMap matrix() const;
  TensorView view() const { return TensorView{data(), shape_}; }

 private:
  Shape shape_;
  std::vector<float, UninitialisedAllocator<float>> storage_;
};

}  // namespace kokoro
