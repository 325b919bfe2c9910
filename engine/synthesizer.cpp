#include "engine/synthesizer.h"

#include "core/error.h"
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

SynthesisResult Synthesizer::synthesize_with_style(const std::vector<int64_t>& ids, const float* style, float speed,
                                                   NoiseSource* noise, const Trace* trace) const {
  std::vector<int64_t> with_bounds;
  with_bounds.reserve(ids.size() + 2);
  with_bounds.push_back(0);
  with_bounds.insert(with_bounds.end(), ids.begin(), ids.end());
  with_bounds.push_back(0);
  AlignedFeatures feats;
  acoustic_.forward(with_bounds, style, speed, feats, trace);
  const bool release = feats.frames() >= kReleasePagesFromFrames;
  if (release) model_->release_resident_pages();
  SeededNoise default_noise(0);
  // Decoder::forward in its two halves, with the model's fp32 weight pages released after each part that
  // reads its own: those the acoustic model and the decoder read are not needed by the generator, where a
  // long segment's memory peaks (ModelFile::release_resident_pages). (In slice mode the vocoder worker
  // releases them after the decoder half; the acoustic worker does not, so that each segment's acoustic model
  // does not fault its weights in again: releasing there did not lower slice mode's peak, docs/benchmarks.md.)
  Tensor x, audio;
  decoder_.features(feats.asr, feats.f0, feats.n, style, x, trace);
  if (release) model_->release_resident_pages();
  decoder_.generator().forward(x, feats.f0.data(), style, noise ? *noise : default_noise, audio, trace);
  if (release) model_->release_resident_pages();  // and the generator's: the next segment reads others first
  x = Tensor();
  kokoro::trace(trace, "audio", audio);

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
