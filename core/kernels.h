// Numeric kernels shared by the acoustic model and the vocoder. Activations are [channels, time] row-major
// (PyTorch NCT without N); weights come in PyTorch's layouts. Every kernel is GEMM-shaped through Eigen
// where the work is large, and writes into a caller-owned output so that buffers can be reused.
#pragma once
#include <vector>

#include "core/lstm.h"  // bilstm, declared here before it had a file of its own
#include "core/tensor.h"
#include "core/weight_cache.h"

namespace kokoro {

// y[out, T] = W[out, in] x[in, T] + b[out]  (torch.nn.Linear applied to every column)
void linear_columns(const Tensor& x, const TensorView& w, const TensorView* bias, Tensor& y);
// y[T, out] = x[T, in] W[out, in]^T + b[out]  (torch.nn.Linear on rows, as in ALBERT)
// fp32 runs on oneDNN's run-time-dispatched matmul (core/onednn_matmul.h), bf16 on core/bf16_gemm.h.
void linear_rows(const Tensor& x, const TensorView& w, const TensorView* bias, Tensor& y);
// W^T [in, out] of a Linear weight W [out, in], transposed once per model (core/weight_cache.h; per call for
// weights outside a model): the layout oneDNN's matmul reads fastest (linear_rows and bilstm in fp32).
Prepared<float> transposed_weight(const TensorView& w);
// The Eigen implementation linear_rows had first, kept as the baseline for benchmarks and tests.
void linear_rows_eigen(const Tensor& x, const TensorView& w, const TensorView* bias, Tensor& y);
// While one exists, linear_rows on this thread runs linear_rows_eigen in fp32 (kokoro-bench times the text
// side both ways in one run).
class ScopedLinearRowsBaseline {
 public:
  ScopedLinearRowsBaseline();
  ~ScopedLinearRowsBaseline();
  ScopedLinearRowsBaseline(const ScopedLinearRowsBaseline&) = delete;
  ScopedLinearRowsBaseline& operator=(const ScopedLinearRowsBaseline&) = delete;

 private:
  bool saved_;
};

// torch.nn.functional.conv1d with groups=1: x [in, T], w [out, in, k] -> y [out, T_out] with
// T_out = (T + 2*padding - dilation*(k-1) - 1) / stride + 1. Zero padding.
// Stride 1 goes to the fast form for the shape (core/winograd.h), else to conv1d_bf16 (bf16) or conv1d_onednn
// (fp32); other strides to im2col.
void conv1d(const Tensor& x, const TensorView& w, const TensorView* bias, int stride, int padding, int dilation,
            Tensor& y);
// The Winograd transform conv1d takes (stride 1) for `in` -> `out` channels, k taps and t_out output columns at
// the kernel precision in force, or nullptr when it takes another form.
struct WinogradTransform;
const WinogradTransform* conv1d_winograd_for(int64_t in, int64_t out, int64_t k, int64_t t_out, int dilation);
// conv1d with stride 1 and a "same" shape (w [C, C, k], output as long as x), written over x: on the Winograd
// path without a second full-length tensor (conv1d_winograd_in_place), else through a temporary. The same
// result as conv1d.
void conv1d_in_place(Tensor& x, const TensorView& w, const TensorView* bias, int padding, int dilation);
// Stride-1 direct convolution: one GEMM per tap on chunks of columns and blocks of rows, in parallel
// (core/parallel.h), with a zero-padded slab per chunk instead of a padded copy of the whole input.
void conv1d_direct(const Tensor& x, const TensorView& w, const TensorView* bias, int padding, int dilation, Tensor& y);
// Stride-1 convolution in fp32 as one oneDNN matmul (core/onednn_matmul.h) of a tap-major im2col matrix and
// weights transposed once per model: what conv1d runs in fp32 when no fast form applies.
void conv1d_onednn(const Tensor& x, const TensorView& w, const TensorView* bias, int padding, int dilation,
                   Tensor& y);
// Stride-1 convolution in bf16 (core/bf16_gemm.h) as one GEMM over tap-major packed weights (packed once
// per model). conv1d takes it when the precision is not fp32 and no fast form applies (the decoder's
// 1024-channel convolutions, short generator chunks and slices). Needs out % 16 == 0 and an even `in`.
void conv1d_bf16(const Tensor& x, const TensorView& w, const TensorView* bias, int padding, int dilation, Tensor& y);
// The first implementation (one GEMM per tap on a padded copy of the whole input, single-threaded), kept as
// the baseline that micro-benchmarks and tests compare the faster kernels with.
void conv1d_gemm_per_tap(const Tensor& x, const TensorView& w, const TensorView* bias, int stride, int padding,
                         int dilation, Tensor& y);
// torch.nn.functional.conv_transpose1d with groups=1: x [in, T], w [in, out, k] -> y [out, T_out] with
// T_out = (T-1)*stride - 2*padding + k + output_padding.
void conv_transpose1d(const Tensor& x, const TensorView& w, const TensorView* bias, int stride, int padding,
                      int output_padding, Tensor& y);
// Depthwise conv_transpose1d (groups == channels): x [C, T], w [C, 1, k].
void conv_transpose1d_depthwise(const Tensor& x, const TensorView& w, const TensorView* bias, int stride,
                                int padding, int output_padding, Tensor& y);

// Layer norm over the channel axis of x [C, T] (each column normalised), optional gamma/beta [C].
void layer_norm_channels(Tensor& x, const float* gamma, const float* beta, float eps);
// Layer norm over the last axis of x [T, C] (each row normalised), as torch.nn.LayerNorm on [T, C].
void layer_norm_rows(Tensor& x, const float* gamma, const float* beta, float eps);
// Instance norm of x [C, T] over time (biased variance, as torch.nn.InstanceNorm1d), then
// y = (1 + gamma[c]) * x_hat + beta[c] (AdaIN1d), with gamma/beta of length C. In place.
void adain(Tensor& x, const float* gamma, const float* beta, float eps = 1e-5f);
// Instance norm of x [C, T] over time followed by y = x_hat * scale[c] + shift[c]. In place.
void instance_norm_affine(Tensor& x, const float* scale, const float* shift, float eps = 1e-5f);

void leaky_relu(Tensor& x, float slope);
// y += x (same shape), then y /= divide_by unless it is 1: element-wise, in parallel on large tensors (the
// generator's last stage adds ~60 MB tensors; a serial pass left the other thread idle).
void add_in_place(Tensor& y, const Tensor& x, float divide_by = 1.0f);
// dst = src (dst resized), in parallel on large tensors.
void copy_tensor(const Tensor& src, Tensor& dst);

}  // namespace kokoro
