// Floating-point work of each synthesis stage, counted from the model's configuration as a direct
// implementation does it (2 FLOPs per multiply-add of every convolution, linear layer, attention product and
// LSTM matrix product; norms and activations are left out, they are < 1% here). Kernels that save work
// (a fast convolution does fewer multiply-adds) therefore show an "effective" rate that can exceed the
// machine's GEMM peak; that is the point of them, and the report says so.
#pragma once
#include <array>

#include "bench/stage_timer.h"
#include "core/model_file.h"

namespace kokoro::bench {

// FLOPs per stage for one segment of `tokens` ids (boundary tokens included) and `frames` asr frames.
std::array<double, kStageCount> stage_flops(const ModelFile& model, int64_t tokens, int64_t frames);

}  // namespace kokoro::bench
