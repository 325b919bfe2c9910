// The offline (exact) engine: phoneme token ids + voice + speed -> 24 kHz audio, durations and timings.
// It is KModel.forward_with_tokens: the acoustic model produces frame-aligned features, the decoder turns
// them into audio. The streaming engine (engine/stream_*) reuses both stages with the same semantics.
#pragma once
#include <memory>
#include <string>
#include <vector>

#include "acoustic/acoustic_model.h"
#include "core/model_file.h"
#include "core/trace.h"
#include "core/voice.h"
#include "vocoder/decoder.h"

namespace kokoro {

inline constexpr int kSampleRate = 24000;
inline constexpr int kSamplesPerFrame = 600;  // one duration unit: 25 ms at 24 kHz
// Segments at least this long release the weights' pages between their parts (ModelFile::release_resident_pages):
// their activations are where the process's memory peaks. Shorter ones do not: their peak is far below a long
// one's, and faulting every weight in again cost short sentences 2-4 % of their time (kokoro-bench, exact).
inline constexpr int64_t kReleasePagesFromFrames = 160;  // 4 s

struct TokenTiming {
  int64_t token_index;  // index into the ids passed in (without boundary tokens)
  double start_s, end_s;
};

struct SynthesisResult {
  std::vector<float> audio;                // mono, 24 kHz
  std::vector<int64_t> durations;          // frames per token, including both boundary tokens
  std::vector<TokenTiming> timings;        // one per phoneme token
  double seconds() const { return static_cast<double>(audio.size()) / kSampleRate; }
};

class Synthesizer {
 public:
  explicit Synthesizer(std::shared_ptr<const ModelFile> model);
  static Synthesizer open(const std::string& model_path);

  // ids: phoneme token ids WITHOUT the boundary tokens (the engine adds them). n_phonemes: the length of
  // the phoneme string the ids came from (code points, before vocab filtering), which picks the style
  // row pack[n_phonemes - 1] as KPipeline does; pass ids.size() when they are the same.
  SynthesisResult synthesize(const std::vector<int64_t>& ids, const VoicePack& voice, float speed,
                             int64_t n_phonemes, NoiseSource* noise = nullptr, const Trace* trace = nullptr) const;
  // Same with an explicit 256-float style row (ref_s).
  SynthesisResult synthesize_with_style(const std::vector<int64_t>& ids, const float* style, float speed,
                                        NoiseSource* noise = nullptr, const Trace* trace = nullptr) const;

  const AcousticModel& acoustic() const { return acoustic_; }
  const Decoder& decoder() const { return decoder_; }
  // Decoder::forward over one segment's aligned features, in its two halves: a segment of
  // kReleasePagesFromFrames or more releases the weights' pages after the first and after each generator stage
  // (ModelFile::release_resident_pages), so that the generator's last stage, where a long segment's memory
  // peaks, has only its own weights resident. Exact mode of the offline path and of the streaming engine.
  // `progress` is called on this thread after the decoder half and after each piece of the generator with
  // the fraction of the work done (weighted by multiply-adds, vocoder/work_progress.h), last with 1; the
  // streaming engine's pre-roll follows it.
  // `release_pages` false: keep the pages (another session on the same model is computing with them).
  void vocode(const Tensor& asr, const Tensor& f0, const Tensor& n, const float* style, NoiseSource& noise,
              Tensor& audio, const Trace* trace = nullptr, const ProgressCallback* progress = nullptr,
              bool release_pages = true) const;
  const ModelFile& model() const { return *model_; }

 private:
  std::shared_ptr<const ModelFile> model_;
  AcousticModel acoustic_;
  Decoder decoder_;
};

}  // namespace kokoro
