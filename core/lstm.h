// The bidirectional LSTM of the text encoder and the prosody predictor (five of them per sentence, each over
// every token or, the shared one, every frame): after ALBERT, the largest part of the text side, and its
// steps are a serial chain on the way to first audio.
#pragma once
#include <cstdint>
#include <vector>

#include "core/tensor.h"

namespace kokoro {

// Bidirectional single-layer LSTM over the true length of x [T, in] (no padding, as pack_padded_sequence
// with the full length): returns y [T, 2H] = [forward | backward]. Weights in torch layout/gate order
// (i, f, g, o): w_ih [4H, in], w_hh [4H, H], biases [4H]; `reverse` ones for the backward direction.
struct LstmWeights {
  TensorView w_ih, w_hh, b_ih, b_hh;
};
// The directions run in parallel (core/parallel.h); gates are vectorised (Eigen's exp/tanh).
// repeats (optional, one count >= 0 per row of x): the steps read x's row r repeats[r] times in a row, as
// over x repeated by durations (an alignment), y having sum(repeats) rows; the input projections are then
// computed per row of x, not per step (the prosody predictor's shared LSTM over frames: ~2x fewer).
// Precision (core/precision.h kernel_precision): fp32; bf16 and bf16-all: the input projections and the
// recurrence's products in bf16; int8: both in 8 bits (core/int8_gemm.h), the gates in fp32 always.
void bilstm(const Tensor& x, const LstmWeights& fwd, const LstmWeights& bwd, Tensor& y,
            const std::vector<int64_t>* repeats = nullptr);
// The first implementation (directions in turn, scalar gates), kept for benchmarks and tests.
void bilstm_baseline(const Tensor& x, const LstmWeights& fwd, const LstmWeights& bwd, Tensor& y);

}  // namespace kokoro
