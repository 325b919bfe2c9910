#include "engine/synthesizer.h"

#include "core/error.h"
#include "core/heap.h"
#include "core/trace.h"

namespace kokoro {

Synthesizer::Synthesizer(std::shared_ptr<const ModelFile> model)
    : model_(model), acoustic_(model), decoder_(model) {}

Synthesizer Synthesizer::open(const std::string& model_path) { return Synthesizer(ModelFile::open(model_path)); }

SynthesisResult Synthesizer::synthesize(const std::vector<int64_t>& ids, const VoicePack& voice, float speed,
                                        int64_t n_phonemes, NoiseSource* noise, const Trace* trace) const {
  if (ids.empty()) throw Error("nothing to synthesize: no phoneme tokens");
  return synthesize_with_style(ids, voice.style_for(static_cast<int>(n_phonemes)), speed, noise, trace);
}

void Synthesizer::vocode(const Tensor& asr, const Tensor& f0, const Tensor& n, const float* style, NoiseSource& noise,
                         Tensor& audio, const Trace* trace, const ProgressCallback* progress,
                         bool release_pages) const {
  // The weights' pages, and the heap's free pages: the heap keeps what a part freed resident (glibc returns
  // only its top by itself), ~80-130 MB by the generator's last stage in a process that prepared its weights
  // itself and freed the heap copies when it wrote the store.
  const bool release = release_pages && asr.dim(1) >= kReleasePagesFromFrames;
  auto give_back = [&] {
    if (!release) return;
    model_->release_resident_pages();
    return_free_heap_pages();
  };
  const WorkProgress generator_part{progress, decoder_.features_macs_per_frame() / decoder_.macs_per_frame(), 1.0};
  Tensor x;
  decoder_.features(asr, f0, n, style, x, trace);
  report_progress(&generator_part, 0.0);
  give_back();  // the decoder half's
  // And each generator stage's: the last stage, the peak of a long segment, needs only its own.
  decoder_.generator().forward(x, f0.data(), style, noise, audio, trace, &generator_part,
                               [&](size_t) { give_back(); });
  kokoro::trace(trace, "audio", audio);
}

SynthesisResult Synthesizer::synthesize_with_style(const std::vector<int64_t>& ids, const float* style, float speed,
                                                   NoiseSource* noise, const Trace* trace) const {
  std::vector<int64_t> with_bounds;
  with_bounds.reserve(ids.size() + 2);
  with_bounds.push_back(0);
  with_bounds.insert(with_bounds.end(), ids.begin(), ids.end());
  with_bounds.push_back(0);
  AlignedFeatures feats;
  acoustic_.forward(with_bounds, style, speed, feats, trace);
  // The acoustic model's weights are not read again before the next segment. (The streaming engine's
  // acoustic worker does not release them: that did not lower slice mode's peak and made every segment's
  // acoustic model fault its weights in again, docs/benchmarks.md.)
  if (feats.frames() >= kReleasePagesFromFrames) model_->release_resident_pages();
  SeededNoise default_noise(0);
  Tensor audio;
  vocode(feats.asr, feats.f0, feats.n, style, noise ? *noise : default_noise, audio, trace);

  SynthesisResult r;
  r.audio.assign(audio.data(), audio.data() + audio.numel());
  r.durations = feats.durations;
  int64_t frame = feats.durations.front();
  for (size_t i = 0; i < ids.size(); ++i) {
    const int64_t d = feats.durations[i + 1];
    r.timings.push_back({static_cast<int64_t>(i), frame * double(kSamplesPerFrame) / kSampleRate,
                         (frame + d) * double(kSamplesPerFrame) / kSampleRate});
    frame += d;
  }
  return r;
}

}  // namespace kokoro
