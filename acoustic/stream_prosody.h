// The prosody predictor's F0 and energy branches chunk by chunk, for slice mode's early start
// (engine/stream_engine_early.cpp): the shared BiLSTM's output [H, F] goes in a few columns at a time, the F0
// and energy curves (2 values per frame) come out as far as the blocks' right context allows. Every AdaIN
// layer is normalised by a NormPolicy (the early predictor's statistics) instead of the whole segment's, so
// that a long segment's first frames need not wait for the branches over the whole segment (~20 ms of a
// 15 s sentence's first audio). The same blocks and weights as ProsodyPredictor::curves_from_shared, run by
// the decoder's stateful blocks (vocoder/stream_blocks.h): given the whole segment's own statistics
// (SuppliedStats) the curves are the offline ones, whatever the chunks (tests/test_stream_prosody.cpp).
#pragma once
#include <memory>
#include <vector>

#include "acoustic/prosody.h"
#include "vocoder/stream_blocks.h"
#include "vocoder/stream_norm.h"

namespace kokoro {

class StreamProsody {
 public:
  explicit StreamProsody(const ProsodyPredictor& predictor);
  // prosody_style: the voice row's second half (ref_s[128:]); policy bound to layers() here.
  void begin(const float* prosody_style, NormPolicy& policy, int64_t segment_frames);
  // The next columns of the shared output ([H, m], m >= 0; last: the segment's end). Appends the curves'
  // values completed by them to f0 and n (as many to each).
  void push(const Tensor& shared, bool last, std::vector<float>& f0, std::vector<float>& n);
  // The branches' AdaIN layers: the F0 branch's, then the energy branch's.
  const std::vector<NormLayer>& layers() const { return layers_; }

 private:
  struct Branch {
    std::vector<std::unique_ptr<StreamAdainResBlk1d>> blocks;
    const TensorView* proj_w = nullptr;
    const TensorView* proj_b = nullptr;
  };
  void push_branch(Branch& b, const Tensor& shared, bool last, std::vector<float>& out);

  std::vector<NormLayer> layers_;
  Branch f0_, n_;
  Tensor a_, c_, proj_;
};

}  // namespace kokoro
