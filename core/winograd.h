// Fast 1-D convolution (stride 1, any dilation) by Winograd / Toom-Cook minimal filtering, for the
// generator's wide convolutions (kernel 3, 7, 11 at dilation 1, 3, 5): 2.0-2.3x fewer multiply-adds than
// the direct form, in fp32, within a few 1e-7 relative of the direct result (tests/test_fast_conv.cpp).
//
// F(m, r): m outputs of an r-tap correlation from alpha = m + r - 1 inputs with alpha multiplications:
//   y = AT [ (G g) . (BT d) ]          AT [m, alpha], G [alpha, r], BT [alpha, alpha]
// built from alpha - 1 finite interpolation points and infinity (Toom-Cook, transposed by Winograd's
// lemma). A kernel longer than r is split into ceil(k / r) groups of r taps; with r == m, group g of the
// tile starting at output b*m reads exactly the inputs of tile b + g, so every group shares one input
// transform and the per-point products become one GEMM with K = groups * C_in.
// Dilation d: outputs d apart form d interleaved phases, each an undilated convolution of its own phase
// of the input, so tiles are taken per phase.
//
// Layout for GEMMs (row-major): time-major input rows [t][C_in] so that a tile's transform is a few
// vector operations; per point p and phase, M[tile][C_out] = V[tile .. tile + groups)[C_in] * U_p[groups *
// C_in][C_out]. Work runs in chunks of tiles, each a task of the thread pool (core/parallel.h), with
// per-thread scratch that is reused from call to call (no allocation once warm).
#pragma once
#include <vector>

#include "core/tensor.h"

namespace kokoro {

struct WinogradTransform {
  int m = 0, r = 0, alpha = 0;
  std::vector<float> AT;  // [m, alpha]
  std::vector<float> G;   // [alpha, r]
  std::vector<float> BT;  // [alpha, alpha]
  // Builds F(m, r) from the alpha - 1 finite points (infinity is added), in double, rounded once to float.
  static WinogradTransform make(int m, int r, const std::vector<double>& points);
};

// The transform conv1d uses for a kernel of k taps, or nullptr when the direct form is better (k < 3).
const WinogradTransform* winograd_for_kernel(int64_t k);

// y = conv1d(x, w, bias, stride 1, padding, dilation) through `t`. x [C_in, T], w [C_out, C_in, k].
// Requires t.r >= k, or t.r == t.m (kernel split into groups).
void conv1d_winograd(const Tensor& x, const TensorView& w, const TensorView* bias, int padding, int dilation,
                     const WinogradTransform& t, Tensor& y);
// The same convolution written over its own input x, when it keeps the shape (w [C, C, k], "same" padding):
// the outputs of a few chunks at a time go to a small buffer and into x once no chunk still reads those
// columns, so a long input needs no second full-length tensor. Bit-identical to conv1d_winograd (the same
// chunks). Returns false (x untouched) when the shape does not allow it.
bool conv1d_winograd_in_place(Tensor& x, const TensorView& w, const TensorView* bias, int padding, int dilation,
                              const WinogradTransform& t);

}  // namespace kokoro
