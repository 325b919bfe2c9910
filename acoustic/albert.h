// PL-BERT: an ALBERT encoder (one shared transformer layer applied num_hidden_layers times), as
// transformers' AlbertModel computes last_hidden_state for one unpadded sequence (attention mask all ones).
#pragma once
#include <memory>
#include <mutex>
#include <vector>

#include "core/linear_int8.h"
#include "core/model_file.h"
#include "core/trace.h"

namespace kokoro {

class Albert {
 public:
  explicit Albert(std::shared_ptr<const ModelFile> model);
  // ids: token ids including the boundary 0s. Returns hidden states [T, hidden].
  void forward(const std::vector<int64_t>& ids, Tensor& out) const;
  int64_t max_positions() const { return max_pos_; }

 private:
  std::shared_ptr<const ModelFile> model_;
  int64_t hidden_, heads_, layers_, emb_, max_pos_, vocab_;
  TensorView word_, pos_, type_, emb_ln_w_, emb_ln_b_, map_w_, map_b_;
  TensorView q_w_, q_b_, k_w_, k_b_, v_w_, v_b_, o_w_, o_b_, attn_ln_w_, attn_ln_b_;
  TensorView ffn_w_, ffn_b_, ffn_out_w_, ffn_out_b_, full_ln_w_, full_ln_b_;
  // The activations of a call, kept for the next one: allocated afresh, their ~10 MB came back as new pages
  // every sentence, faulted in one by one inside the products (~1600 faults, ~2-3 ms, per 363-token sentence
  // on this project's VMs). One set per model; a call that finds it in use (another session's acoustic
  // worker at the same moment) allocates its own.
  struct Workspace {
    Tensor e, x, q, k, v, ctx, attn, f, f2;
    Int8Rows xq;
  };
  struct KeptWorkspace {
    std::mutex mutex;
    Workspace w;
  };
  std::unique_ptr<KeptWorkspace> kept_ = std::make_unique<KeptWorkspace>();  // a pointer: Albert stays movable
};

}  // namespace kokoro
