// The model's phoneme vocabulary (config.json "vocab": {"symbol": id}) and phoneme-string tokenization.
#pragma once
#include <nlohmann/json.hpp>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace kokoro {

class Vocab {
 public:
  Vocab() = default;
  // Reads "vocab" from a config.json file; throws kokoro::Error naming the file when it is missing,
  // malformed, has a key that is not exactly one code point, or an id outside [1, 2^31).
  static Vocab load(const std::string& config_path);
  // The same from an already parsed config; `source` names it in error messages.
  static Vocab from_config(const nlohmann::json& config, const std::string& source);

  std::optional<int64_t> id(char32_t symbol) const;
  size_t size() const { return ids_.size(); }

 private:
  std::unordered_map<char32_t, int64_t> ids_;
};

// The ids of a phoneme string's symbols, one per code point, in order. Symbols the vocab lacks (and
// bytes that are not valid UTF-8) are dropped, each with an spdlog debug message. The boundary token 0
// that the model expects at both ends is NOT added: the engine adds it.
std::vector<int64_t> tokenize(std::string_view phonemes, const Vocab& vocab);

}  // namespace kokoro
