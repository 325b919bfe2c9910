#include "vocoder/stream_ops.h"

#include <algorithm>

#include "core/error.h"
#include "core/kernels.h"

namespace kokoro {

namespace {
// The window and the full output of every stream convolution on this thread: one pair per thread, not one
// per layer, so a slice's memory is a few buffers of its length (stream_ops.h, "Memory").
Tensor& stream_window() {
  thread_local Tensor window;
  return window;
}
Tensor& stream_full_output() {
  thread_local Tensor full;
  return full;
}
}  // namespace

void build_window(const Tensor& context, const Tensor& x, int64_t zero_columns, Tensor& window) {
  const int64_t C = x.dim(0), a = context.dim(1), b = x.dim(1), n = a + b + zero_columns;
  if (context.rank() != 2 || context.dim(0) != C)
    throw Error("build_window: context " + shape_to_string(context.shape()) + " for input " + shape_to_string(x.shape()));
  window.resize({C, n});
  for (int64_t c = 0; c < C; ++c) {
    float* dst = std::copy_n(context.data() + c * a, a, window.data() + c * n);
    dst = std::copy_n(x.data() + c * b, b, dst);
    std::fill_n(dst, zero_columns, 0.0f);
  }
}

void append_columns(Tensor& dst, const Tensor& src, Tensor& scratch) {
  if (src.rank() != 2) throw Error("append_columns: source must be [C, n], got " + shape_to_string(src.shape()));
  if (dst.rank() != 2 || dst.dim(1) == 0) {
    dst.resize(src.shape());
    std::copy(src.data(), src.data() + src.numel(), dst.data());
    return;
  }
  if (src.dim(1) == 0) return;
  const int64_t C = dst.dim(0), a = dst.dim(1), b = src.dim(1);
  if (src.dim(0) != C)
    throw Error("append_columns: " + shape_to_string(src.shape()) + " onto " + shape_to_string(dst.shape()));
  scratch.resize({C, a + b});
  for (int64_t c = 0; c < C; ++c) {
    std::copy(dst.data() + c * a, dst.data() + (c + 1) * a, scratch.data() + c * (a + b));
    std::copy(src.data() + c * b, src.data() + (c + 1) * b, scratch.data() + c * (a + b) + a);
  }
  std::swap(dst, scratch);
}

void drop_front_columns(Tensor& t, int64_t n, Tensor& scratch) {
  if (n <= 0) return;
  const int64_t C = t.dim(0), T = t.dim(1);
  if (n > T) throw Error("drop_front_columns: dropping " + std::to_string(n) + " of " + std::to_string(T) + " columns");
  scratch.resize({C, T - n});
  for (int64_t c = 0; c < C; ++c) std::copy(t.data() + c * T + n, t.data() + (c + 1) * T, scratch.data() + c * (T - n));
  std::swap(t, scratch);
}

void copy_columns(const Tensor& src, int64_t c0, int64_t n, Tensor& dst) {
  const int64_t C = src.dim(0), T = src.dim(1);
  if (c0 < 0 || n < 0 || c0 + n > T)
    throw Error("copy_columns: [" + std::to_string(c0) + ", +" + std::to_string(n) + ") of " + shape_to_string(src.shape()));
  dst.resize({C, n});
  for (int64_t c = 0; c < C; ++c) std::copy(src.data() + c * T + c0, src.data() + c * T + c0 + n, dst.data() + c * n);
}

void stack_rows(std::initializer_list<const Tensor*> parts, Tensor& out) {
  int64_t C = 0;
  const int64_t T = (*parts.begin())->dim(1);
  for (const Tensor* p : parts) {
    if (p->rank() != 2 || p->dim(1) != T) throw Error("stack_rows: parts of different lengths");
    C += p->dim(0);
  }
  out.resize({C, T});
  float* dst = out.data();
  for (const Tensor* p : parts) dst = std::copy(p->data(), p->data() + p->numel(), dst);
}

void ColumnQueue::clear(int64_t channels) {
  data_.resize({channels, 0});
  first_ = 0;
}

void ColumnQueue::push(const Tensor& cols) { append_columns(data_, cols, scratch_); }

void ColumnQueue::take(const Tensor& incoming, int64_t n, Tensor& out) {
  const int64_t C = data_.dim(0), s = size(), b = incoming.rank() == 2 ? incoming.dim(1) : 0;
  if (b > 0 && incoming.dim(0) != C)
    throw Error("ColumnQueue: " + shape_to_string(incoming.shape()) + " onto " + std::to_string(C) + " channels");
  if (n < 0 || n > s + b)
    throw Error("ColumnQueue: taking " + std::to_string(n) + " of " + std::to_string(s + b) + " columns");
  if (&incoming == &out || &out == &data_) throw Error("ColumnQueue::take: output aliases an input (internal)");
  const int64_t from_queue = std::min(n, s), from_incoming = n - from_queue;
  const int64_t keep_queue = s - from_queue, keep_incoming = b - from_incoming, keep = keep_queue + keep_incoming;
  out.resize({C, n});
  scratch_.resize({C, keep});
  for (int64_t c = 0; c < C; ++c) {
    const float* q = data_.data() + c * s;
    const float* in = incoming.data() + c * b;
    std::copy_n(in, from_incoming, std::copy_n(q, from_queue, out.data() + c * n));
    std::copy_n(in + from_incoming, keep_incoming, std::copy_n(q + from_queue, keep_queue, scratch_.data() + c * keep));
  }
  std::swap(data_, scratch_);
  first_ += n;
}

void ColumnQueue::drop_before(int64_t index) {
  const int64_t n = std::min(index - first_, size());
  if (n <= 0) return;
  drop_front_columns(data_, n, scratch_);
  first_ += n;
}

StreamConv1d::StreamConv1d(const TensorView& w, const TensorView* bias, int stride, int padding, int dilation,
                           std::string name)
    : w_(w), stride_(stride), padding_(padding), dilation_(dilation), name_(std::move(name)) {
  if (w_.shape.size() != 3 || stride < 1 || dilation < 1 || padding < 0)
    throw Error("stream conv1d " + name_ + ": bad weight " + shape_to_string(w_.shape) + " or parameters");
  if (bias) bias_ = *bias;
  span_ = static_cast<int64_t>(dilation) * (w_.dim(2) - 1) + 1;
}

void StreamConv1d::begin() {
  context_.resize({in_channels(), padding_});
  std::fill(context_.data(), context_.data() + context_.numel(), 0.0f);
  ended_ = false;
}

void StreamConv1d::push(const Tensor& x, bool last, Tensor& y) {
  if (ended_) throw Error("stream conv1d " + name_ + ": push after the end of the segment (call begin first)");
  if (x.rank() != 2 || x.dim(0) != in_channels())
    throw Error("stream conv1d " + name_ + ": expected [" + std::to_string(in_channels()) + ", n], got " +
                shape_to_string(x.shape()));
  Tensor& window = stream_window();
  build_window(context_, x, last ? padding_ : 0, window);
  const int64_t n = window.dim(1);
  if (n < span_) {
    if (last) throw Error("stream conv1d " + name_ + ": segment too short for the kernel");
    copy_columns(window, 0, n, context_);
    y.resize({out_channels(), 0});
    return;
  }
  conv1d(window, w_, bias_ ? &*bias_ : nullptr, stride_, 0, dilation_, y);
  const int64_t used = y.dim(1) * stride_;
  copy_columns(window, used, n - used, context_);
  if (last) ended_ = true;
}

StreamConvTranspose1d::StreamConvTranspose1d(const TensorView& w, const TensorView* bias, int stride, int padding,
                                             int output_padding, bool depthwise, std::string name)
    : w_(w), stride_(stride), padding_(padding), output_padding_(output_padding), depthwise_(depthwise),
      name_(std::move(name)) {
  if (w_.shape.size() != 3 || stride < 1 || padding < 0 || output_padding < 0)
    throw Error("stream conv_transpose1d " + name_ + ": bad weight " + shape_to_string(w_.shape) + " or parameters");
  // Output padding past the full (uncropped) output would be bias only; Kokoro never needs it.
  if (output_padding > padding) throw Error("stream conv_transpose1d " + name_ + ": output_padding > padding");
  if (bias) bias_ = *bias;
}

void StreamConvTranspose1d::begin() {
  context_.resize({w_.dim(0), 0});
  context_first_ = received_ = emitted_ = 0;
  ended_ = false;
}

void StreamConvTranspose1d::push(const Tensor& x, bool last, Tensor& y) {
  if (ended_) throw Error("stream conv_transpose1d " + name_ + ": push after the end of the segment");
  if (x.rank() != 2 || x.dim(0) != w_.dim(0))
    throw Error("stream conv_transpose1d " + name_ + ": expected [" + std::to_string(w_.dim(0)) + ", n], got " +
                shape_to_string(x.shape()));
  const int64_t s = stride_, k = w_.dim(2), p = padding_;
  const int64_t out_ch = depthwise_ ? w_.dim(0) : w_.dim(1);
  // The inputs that can still reach an output not emitted yet (from context_first_ on), then the new ones.
  Tensor& window = stream_window();
  build_window(context_, x, 0, window);
  received_ += x.dim(1);
  if (last && received_ < 1) throw Error("stream conv_transpose1d " + name_ + ": empty segment");
  // The uncropped output position v = u + padding is complete once no later input can reach it.
  const int64_t end = last ? (received_ - 1) * s - 2 * p + k + output_padding_ : std::max(emitted_, received_ * s - p);
  const int64_t count = end - emitted_;
  if (count <= 0) {
    copy_columns(window, 0, window.dim(1), context_);
    y.resize({out_ch, 0});
    if (last) ended_ = true;
    return;
  }
  Tensor& full = stream_full_output();
  if (depthwise_) {
    conv_transpose1d_depthwise(window, w_, bias_ ? &*bias_ : nullptr, s, 0, 0, full);
  } else {
    conv_transpose1d(window, w_, bias_ ? &*bias_ : nullptr, s, 0, 0, full);
  }
  const int64_t offset = emitted_ + p - context_first_ * s;  // column of `full` holding output emitted_
  if (offset < 0 || offset + count > full.dim(1))
    throw Error("stream conv_transpose1d " + name_ + ": internal window error");
  copy_columns(full, offset, count, y);
  emitted_ = end;
  // Inputs that can still reach output `emitted_`: t >= ceil((emitted_ + p - k + 1) / s).
  const int64_t v = emitted_ + p - k + 1;
  const int64_t t_min = std::max<int64_t>(0, v <= 0 ? 0 : (v + s - 1) / s);
  const int64_t drop = t_min > context_first_ ? std::min(t_min - context_first_, window.dim(1)) : 0;
  copy_columns(window, drop, window.dim(1) - drop, context_);
  if (drop > 0) context_first_ = std::min(t_min, received_);
  if (last) ended_ = true;
}

}  // namespace kokoro
