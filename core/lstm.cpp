#include "core/lstm.h"

#include <Eigen/Core>
#include <algorithm>
#include <cmath>
#include <memory>
#include <string>
#include <vector>

#include "core/bf16_gemm.h"
#include "core/error.h"
#include "core/int8_gemm.h"
#include "core/kernels.h"
#include "core/linear_int8.h"
#include "core/onednn_matmul.h"
#include "core/parallel.h"
#include "core/precision.h"
#include "core/weight_cache.h"

namespace kokoro {

namespace {

float sigmoid(float v) { return 1.0f / (1.0f + std::exp(-v)); }

// How the steps multiply W_hh by h, per precision. Each step's product reads all of W_hh [4H, H], from the
// core's L2 (one direction per core): in fp32 the 1 MB matrix (H = 256) is re-read from L3; packed to bf16
// (512 KB) it stays in L2, and a step is bound by L2's bandwidth (~4.6 us on Zen 4); in 8 bits (256 KB) the
// same step takes about half of that. Over a 63-word sentence's ~2600 steps per direction that was ~6 ms of
// the text side's ~120.
enum class Recurrence { fp32, bf16, int8 };

Recurrence recurrence_for(Precision p, int64_t H) {
  if (p == Precision::fp32 || (4 * H) % 16 != 0 || H % 2 != 0) return Recurrence::fp32;
  if (p == Precision::int8 && int8_supported() && H % 4 == 0) return Recurrence::int8;
  return Recurrence::bf16;
}

// The input projections of every row of x for both directions, computed before the directions split (each
// product is parallel itself): bf16 or, in int8, 8 bits with x quantised once for both. Rows are computed
// alone (no row depends on another), so a repeated row's projection is that of the repeated input.
void project_inputs(const Tensor& x, const LstmWeights& fwd, const LstmWeights& bwd, Recurrence r, Tensor projected[2]) {
  if (r == Recurrence::int8 && x.dim(1) % 4 == 0) {
    Int8Rows xq;
    quantize_for_linear_int8(x, xq);
    linear_rows_int8(x, xq, fwd.w_ih, nullptr, projected[0]);
    linear_rows_int8(x, xq, bwd.w_ih, nullptr, projected[1]);
    return;
  }
  linear_rows(x, fwd.w_ih, nullptr, projected[0]);
  linear_rows(x, bwd.w_ih, nullptr, projected[1]);
}

}  // namespace

void bilstm(const Tensor& x, const LstmWeights& fwd, const LstmWeights& bwd, Tensor& y,
            const std::vector<int64_t>* repeats) {
  const int64_t rows = x.dim(0), H = fwd.w_hh.dim(1);
  for (const LstmWeights* w : {&fwd, &bwd})
    if (w->w_ih.dim(1) != x.dim(1) || w->w_hh.dim(0) != 4 * H || w->w_hh.dim(1) != H)
      throw Error("lstm: weight " + shape_to_string(w->w_ih.shape) + " vs input " + shape_to_string(x.shape()));
  // The row of x each step reads: x's rows in order, or each repeats[r] times.
  std::vector<int64_t> row_of_step;
  if (repeats) {
    if (static_cast<int64_t>(repeats->size()) != rows) throw Error("lstm: repeats do not match the input's rows");
    for (int64_t r = 0; r < rows; ++r) {
      if ((*repeats)[r] < 0) throw Error("lstm: a negative repeat count");
      row_of_step.insert(row_of_step.end(), static_cast<size_t>((*repeats)[r]), r);
    }
  }
  const int64_t T = repeats ? static_cast<int64_t>(row_of_step.size()) : rows;
  y.resize({T, 2 * H});
  if (T == 0) return;
  // The two directions are independent: one task each. Per direction, the input projections of all steps
  // are one product (fp32: on oneDNN inside the task, W_ih^T prepared once per model; otherwise before the
  // split, project_inputs); each step is then a [4H, H] matrix-vector product and the gates, vectorised.
  const Recurrence rec = x.dim(1) % 2 != 0 ? Recurrence::fp32 : recurrence_for(kernel_precision(), H);
  const bool fp32 = rec == Recurrence::fp32;
  Prepared<float> wih_t[2];
  Tensor projected[2];
  if (fp32) {
    wih_t[0] = transposed_weight(fwd.w_ih);
    wih_t[1] = transposed_weight(bwd.w_ih);
  } else {
    project_inputs(x, fwd, bwd, rec, projected);
  }
  // W_hh packed once per model for the recurrence's form.
  Prepared<bf16_t> whh_bf16[2];
  Prepared<int8_t> whh_s8[2];
  for (int dir = 0; dir < 2; ++dir) {
    const TensorView& whh = (dir == 0 ? fwd : bwd).w_hh;
    if (rec == Recurrence::bf16) {
      auto pack = [&] { return pack_bt_bf16_parallel(whh.data, H, H, 4 * H); };
      whh_bf16[dir] = cached_weights_as<bf16_t>(whh.data, "lstm-whh-bf16 " + shape_to_string(whh.shape), pack);
    } else if (rec == Recurrence::int8) {
      auto pack = [&] {
        auto p = std::make_shared<std::vector<int8_t>>(static_cast<size_t>(packed_s8_bytes(H, 4 * H)));
        pack_weights_s8(whh.data, H, H, 4 * H, p->data());
        return std::shared_ptr<const std::vector<int8_t>>(p);
      };
      whh_s8[dir] = cached_weights_as<int8_t>(whh.data, "lstm-whh-s8 " + shape_to_string(whh.shape), pack);
    }
  }
  const int64_t in = x.dim(1);
  parallel_for(2, [&](int64_t dir) {
    const LstmWeights& w = dir == 0 ? fwd : bwd;
    Tensor own;
    if (fp32) {
      own.resize({rows, 4 * H});
      onednn_matmul_f32(x.data(), rows, in, wih_t[dir].data, 4 * H, nullptr, 4 * H, own.data(), 4 * H);
    }
    auto G = (fp32 ? own : projected[dir]).matrix();
    G.rowwise() += (w.b_ih.vector() + w.b_hh.vector()).transpose();
    Eigen::VectorXf h = Eigen::VectorXf::Zero(H), g(4 * H);
    Eigen::ArrayXf c = Eigen::ArrayXf::Zero(H);
    std::vector<bf16_t> hb(rec == Recurrence::bf16 ? static_cast<size_t>(H) : 0);
    RowsU8 hq;  // int8: h quantised per step (one row, its own range)
    const auto Whh = w.w_hh.matrix();
    for (int64_t s = 0; s < T; ++s) {
      const int64_t t = dir == 0 ? s : T - 1 - s;
      switch (rec) {
        case Recurrence::int8:
          quantize_rows_u8(h.data(), H, 1, H, hq);
          gemm_u8s8(hq, whh_s8[dir].data, 4 * H, 0, 4 * H, nullptr, g.data(), 4 * H);
          break;
        case Recurrence::bf16:
          to_bf16(h.data(), hb.data(), H);
          gemm_bf16(hb.data(), H, 1, H, whh_bf16[dir].data, 4 * H, g.data(), 4 * H);
          break;
        case Recurrence::fp32:
          g.noalias() = Whh * h;
          break;
      }
      g += G.row(repeats ? row_of_step[static_cast<size_t>(t)] : t).transpose();
      auto a = g.array();
      const Eigen::ArrayXf i = (1.0f + (-a.segment(0, H)).exp()).inverse();
      const Eigen::ArrayXf f = (1.0f + (-a.segment(H, H)).exp()).inverse();
      const Eigen::ArrayXf o = (1.0f + (-a.segment(3 * H, H)).exp()).inverse();
      c = f * c + i * a.segment(2 * H, H).tanh();
      h = (o * c.tanh()).matrix();
      std::copy(h.data(), h.data() + H, y.data() + t * 2 * H + dir * H);
    }
  });
}

void bilstm_baseline(const Tensor& x, const LstmWeights& fwd, const LstmWeights& bwd, Tensor& y) {
  const int64_t T = x.dim(0), H = fwd.w_hh.dim(1);
  y.resize({T, 2 * H});
  for (int dir = 0; dir < 2; ++dir) {
    const LstmWeights& w = dir == 0 ? fwd : bwd;
    if (w.w_ih.dim(1) != x.dim(1)) throw Error("lstm: weight " + shape_to_string(w.w_ih.shape) + " vs input " + shape_to_string(x.shape()));
    // Input projections for all steps at once: G [T, 4H]; only the recurrence is per step.
    RowMatrix G = x.matrix() * w.w_ih.matrix().transpose();
    G.rowwise() += (w.b_ih.vector() + w.b_hh.vector()).transpose();
    Eigen::VectorXf h = Eigen::VectorXf::Zero(H), c = Eigen::VectorXf::Zero(H), g(4 * H);
    const auto Whh = w.w_hh.matrix();
    for (int64_t s = 0; s < T; ++s) {
      const int64_t t = dir == 0 ? s : T - 1 - s;
      g.noalias() = Whh * h;
      g += G.row(t).transpose();
      for (int64_t u = 0; u < H; ++u) {
        const float i = sigmoid(g[u]), f = sigmoid(g[H + u]), gg = std::tanh(g[2 * H + u]), o = sigmoid(g[3 * H + u]);
        c[u] = f * c[u] + i * gg;
        h[u] = o * std::tanh(c[u]);
      }
      std::copy(h.data(), h.data() + H, y.data() + t * 2 * H + dir * H);
    }
  }
}

}  // namespace kokoro
