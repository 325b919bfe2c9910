// Voice packs: float32 [510, 1, 256] as distributed with Kokoro v1.0 (raw little-endian ".bin"). Row i is
// the style for an utterance of i+1 phonemes, chosen as the reference does: pack[len(phonemes) - 1], where
// len counts the characters of the phoneme string (before vocab filtering), i.e. without the two
// boundary tokens. Columns 0..127 feed the decoder, 128..255 the prosody predictor.
#pragma once
#include <string>
#include <vector>

#include "core/tensor.h"

namespace kokoro {

inline constexpr int kVoiceRows = 510;
inline constexpr int kStyleDim = 256;
inline constexpr int kMaxPhonemes = kVoiceRows;  // one style row per phoneme count

class VoicePack {
 public:
  VoicePack() = default;
  VoicePack(std::string name, std::vector<float> data);  // data must hold 510*256 floats

  // Loads a raw .bin pack; throws kokoro::Error naming the file on a missing or wrong-sized file or
  // non-finite values.
  static VoicePack load_bin(const std::string& path);
  // Resolves a voice spec as users of kokoro write it:
  //   "af_heart"                      a name in <assets>/voices/, or a path to a .bin file
  //   "af_heart,af_bella"             the mean of the packs (KPipeline's blending)
  //   "af_heart:0.6,af_bella:0.4"     a weighted blend; weights are normalised to sum to 1
  static VoicePack resolve(const std::string& spec, const std::string& assets_dir);
  // Names of the packs in <assets>/voices, sorted.
  static std::vector<std::string> list(const std::string& assets_dir);

  const std::string& name() const { return name_; }
  // The 256-float style row for an utterance of n phonemes (1 <= n <= 510); throws otherwise.
  const float* style_for(int n_phonemes) const;
  const std::vector<float>& data() const { return data_; }

 private:
  std::string name_;
  std::vector<float> data_;
};

}  // namespace kokoro
