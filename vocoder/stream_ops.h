// Building blocks of the chunked (streaming) vocoder: column buffers and convolutions that keep their
// context between chunks. Activations are [channels, time] as everywhere (core/tensor.h); a stream op takes
// the next input columns of a segment and returns every output column that those inputs complete, so the
// concatenation of its outputs over any chunking equals the offline op on the whole segment.
//
// Every op computes with the same kernels as the offline modules (core/kernels.h) on a window of
// [kept left context | new columns]; "same" zero padding is the initial left context and, at the end of the
// segment, appended right context. Left context kept (columns of the op's input):
//   conv1d      span - stride with span = dilation * (k - 1) + 1    (history of dilated taps)
//   conv-transpose  ceil(k / stride) - 1 inputs                      (the overlapping output tail)
// Right context (look-ahead, in input columns) is what an output waits for:
//   conv1d stride 1, padding p: dilation * (k - 1) - p; conv-transpose: output u waits for input
//   floor((u + padding) / stride). vocoder/stream_decoder.h adds them up per stage.
#pragma once
#include <optional>
#include <string>

#include "core/tensor.h"

namespace kokoro {

// dst = [dst | src] along time (same channels); scratch is reused storage.
void append_columns(Tensor& dst, const Tensor& src, Tensor& scratch);
// Removes the first n columns of t.
void drop_front_columns(Tensor& t, int64_t n, Tensor& scratch);
// dst = src[:, c0 : c0 + n].
void copy_columns(const Tensor& src, int64_t c0, int64_t n, Tensor& dst);
// Rows of several [C_i, n] tensors stacked into [sum C_i, n] (torch.cat along channels).
void stack_rows(std::initializer_list<const Tensor*> parts, Tensor& out);

// Memory: a stream convolution keeps only its context between pushes (a few columns) and builds each push's
// window, [kept context | new columns | zero columns], in a buffer of its thread shared by every layer; with
// the whole window kept per layer, a slice cost ~340 MB of RSS per second of its length (docs/streaming.md,
// "Memory of a slice").
// window = [context | x | zero_columns zero columns] along time (same channels).
void build_window(const Tensor& context, const Tensor& x, int64_t zero_columns, Tensor& window);

// FIFO of columns with absolute indices (column i of the segment is the i-th column ever pushed).
class ColumnQueue {
 public:
  void clear(int64_t channels);
  void push(const Tensor& cols);
  int64_t size() const { return data_.rank() == 2 ? data_.dim(1) : 0; }
  int64_t first() const { return first_; }  // absolute index of the oldest queued column
  int64_t end() const { return first_ + size(); }
  // The n oldest columns of [queued | incoming] into out; the rest of incoming is queued. A branch that
  // meets another one this way keeps only its lead (the other branch's delay), never a whole slice.
  void take(const Tensor& incoming, int64_t n, Tensor& out);
  // Drops every column before absolute index `index`.
  void drop_before(int64_t index);
  const Tensor& data() const { return data_; }  // queued columns [C, size()]

 private:
  Tensor data_, scratch_;
  int64_t first_ = 0;
};

// torch conv1d (groups 1, zero padding `padding` on both sides) over a segment given in chunks.
class StreamConv1d {
 public:
  StreamConv1d(const TensorView& w, const TensorView* bias, int stride, int padding, int dilation, std::string name);
  void begin();  // a new segment: the left context is `padding` zero columns
  // Appends x [in, n] (n may be 0); y gets the outputs now complete. last: pads the right side and flushes.
  void push(const Tensor& x, bool last, Tensor& y);
  int64_t in_channels() const { return w_.dim(1); }
  int64_t out_channels() const { return w_.dim(0); }
  // Input columns an output waits for beyond the one aligned with it (stride 1): dilation*(k-1) - padding.
  int64_t lookahead() const { return span_ - 1 - padding_; }

 private:
  TensorView w_;
  std::optional<TensorView> bias_;
  int stride_, padding_, dilation_;
  int64_t span_;
  std::string name_;
  Tensor context_;  // the last span - stride input columns (the zero padding at first)
  bool ended_ = true;
};

// torch conv_transpose1d (dense, or depthwise with groups == channels) over a segment given in chunks.
class StreamConvTranspose1d {
 public:
  StreamConvTranspose1d(const TensorView& w, const TensorView* bias, int stride, int padding, int output_padding,
                        bool depthwise, std::string name);
  void begin();
  void push(const Tensor& x, bool last, Tensor& y);

 private:
  TensorView w_;
  std::optional<TensorView> bias_;
  int stride_, padding_, output_padding_;
  bool depthwise_;
  std::string name_;
  Tensor context_;  // inputs [context_first_, received_): those that can still reach an output not emitted
  int64_t context_first_ = 0, received_ = 0, emitted_ = 0;
  bool ended_ = true;
};

}  // namespace kokoro
