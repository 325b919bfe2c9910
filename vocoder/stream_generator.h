// The Generator (generator.h) run chunk by chunk: F0 values and decoder output columns in, audio out.
//
//   F0 curve ──► SineGenStream ──► StftStream ──► har ─┬─► noise_convs_0 ► noise_res_0 ─┐
//                                                      └─► noise_convs_1 ► noise_res_1 ─┼─┐
//   x [512, gen frames] ─► lrelu ► ups_0 ──────────────────────────────────────── + ◄──┘ │
//        ► mean of 3 resblocks ► lrelu ► ups_1 ► reflect pad (1, 0) ───────────── + ◄────┘
//        ► mean of 3 resblocks ► lrelu ► conv_post ► exp / sin ► IstftStream ► audio
//
// Branches meet through column queues: each side delivers columns at its own delay and the sum is formed
// for the columns both have. The F0 curve is taken as soon as it arrives (it is an input of the segment, not
// produced by the decoder), so the source path runs ahead of the decoder path.
#pragma once
#include <memory>
#include <vector>

#include "vocoder/generator.h"
#include "vocoder/stream_blocks.h"

namespace kokoro {

class StreamGenerator {
 public:
  // columns_per_frame: generator frames per asr frame (2 for Kokoro), for the statistics registry.
  StreamGenerator(const Generator& generator, int64_t columns_per_frame, std::vector<NormLayer>& registry);
  void begin(const float* style, NoiseSource& noise, NormPolicy& policy);
  // f0: the next n_f0 values of the F0 curve (one per generator frame); x: the next decoder output columns
  // [upsample_initial_channel, m]. Appends the audio samples now final to `audio`.
  void push(const float* f0, int64_t n_f0, const Tensor& x, bool last, Tensor& audio);

 private:
  struct Stage {
    std::unique_ptr<StreamConv1d> noise_conv;
    std::unique_ptr<StreamSnakeResBlock> noise_res;
    std::unique_ptr<StreamConvTranspose1d> ups;
    std::vector<std::unique_ptr<StreamSnakeResBlock>> resblocks;
    ColumnQueue source_q, up_q;
    std::vector<ColumnQueue> res_q;
    bool reflect_pad = false;
    Tensor held;  // reflection pad: columns held until column 1 exists
    bool pad_done = false;
  };
  void reflect_pad_left1(Stage& s, Tensor& up, bool last);

  const Generator& g_;
  SineGenStream source_;
  StftStream stft_;
  IstftStream istft_;
  std::vector<Stage> stages_;
  std::unique_ptr<StreamConv1d> post_;
  // This push's columns (nothing in them outlives a push; the state is in the layers and queues above).
  Tensor excitation_, har_, xs_, xr_, up_, src_cols_, sum_, out_, part_, x_, post_out_, spec_, phase_, scratch_;
  std::vector<Tensor> res_;  // each resblock's output, until the three are summed
};

}  // namespace kokoro
