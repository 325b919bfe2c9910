#include "acoustic/stream_prosody.h"

#include "core/error.h"
#include "core/kernels.h"

namespace kokoro {

StreamProsody::StreamProsody(const ProsodyPredictor& p) {
  // One column per frame into each branch; its upsampling block doubles the rate from its second layer on.
  for (auto [blocks, branch] : {std::pair{&p.f0_blocks(), &f0_}, std::pair{&p.n_blocks(), &n_}}) {
    int64_t columns_per_frame = 1;
    for (const AdainResBlk1d& b : *blocks) {
      branch->blocks.push_back(std::make_unique<StreamAdainResBlk1d>(b, columns_per_frame, layers_));
      if (b.upsample()) columns_per_frame *= 2;
    }
  }
  f0_.proj_w = &p.f0_proj_weight();
  f0_.proj_b = &p.f0_proj_bias();
  n_.proj_w = &p.n_proj_weight();
  n_.proj_b = &p.n_proj_bias();
}

void StreamProsody::begin(const float* prosody_style, NormPolicy& policy, int64_t segment_frames) {
  if (!prosody_style) throw Error("stream prosody: no style vector");
  policy.bind(layers_);
  policy.begin_segment(segment_frames);
  for (Branch* b : {&f0_, &n_})
    for (auto& blk : b->blocks) blk->begin(prosody_style, policy);
}

void StreamProsody::push_branch(Branch& b, const Tensor& shared, bool last, std::vector<float>& out) {
  a_ = shared;
  for (auto& blk : b.blocks) {
    blk->push(a_, last, c_);
    std::swap(a_, c_);
  }
  if (a_.dim(1) == 0) return;
  // The 1x1 projection: each column alone, no state.
  conv1d(a_, *b.proj_w, b.proj_b, 1, 0, 1, proj_);
  out.insert(out.end(), proj_.data(), proj_.data() + proj_.numel());
}

void StreamProsody::push(const Tensor& shared, bool last, std::vector<float>& f0, std::vector<float>& n) {
  const size_t f0_before = f0.size(), n_before = n.size();
  push_branch(f0_, shared, last, f0);
  push_branch(n_, shared, last, n);
  if (f0.size() - f0_before != n.size() - n_before)
    throw Error("stream prosody: the F0 and energy branches completed " + std::to_string(f0.size() - f0_before) + " and " +
                std::to_string(n.size() - n_before) + " values (internal)");
}

}  // namespace kokoro
