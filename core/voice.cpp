#include "core/voice.h"

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>

#include "core/error.h"

namespace kokoro {

namespace fs = std::filesystem;

VoicePack::VoicePack(std::string name, std::vector<float> data) : name_(std::move(name)), data_(std::move(data)) {
  if (data_.size() != static_cast<size_t>(kVoiceRows) * kStyleDim)
    throw Error("voice " + name_ + ": expected 510*256 floats, got " + std::to_string(data_.size()));
}

VoicePack VoicePack::load_bin(const std::string& path) {
  std::ifstream in(path, std::ios::binary | std::ios::ate);
  if (!in) throw Error("voice file " + path + ": cannot open");
  const std::streamoff size = in.tellg();
  const std::streamoff expected = static_cast<std::streamoff>(kVoiceRows) * kStyleDim * sizeof(float);
  if (size != expected)
    throw Error("voice file " + path + ": " + std::to_string(size) + " bytes, expected " + std::to_string(expected) +
                " (float32 [510, 1, 256])");
  std::vector<float> data(static_cast<size_t>(kVoiceRows) * kStyleDim);
  in.seekg(0);
  in.read(reinterpret_cast<char*>(data.data()), expected);
  if (!in) throw Error("voice file " + path + ": read failed");
  for (size_t i = 0; i < data.size(); ++i)
    if (!std::isfinite(data[i])) throw Error("voice file " + path + ": non-finite value at element " + std::to_string(i));
  return VoicePack(fs::path(path).stem().string(), std::move(data));
}

static std::string trim(const std::string& s) {
  const auto b = s.find_first_not_of(" \t");
  const auto e = s.find_last_not_of(" \t");
  return b == std::string::npos ? "" : s.substr(b, e - b + 1);
}

static std::string voice_path(const std::string& name, const std::string& assets_dir) {
  std::error_code ec;
  if (fs::is_regular_file(name, ec)) return name;
  const fs::path p = fs::path(assets_dir) / "voices" / (name + ".bin");
  if (fs::is_regular_file(p, ec)) return p.string();
  throw Error("unknown voice '" + name + "': no file " + p.string() + " (see --list-voices)");
}

VoicePack VoicePack::resolve(const std::string& spec, const std::string& assets_dir) {
  std::vector<std::pair<std::string, double>> parts;
  // Split on ',' keeping empty items, so that "a," is reported rather than silently read as "a".
  std::vector<std::string> items(1);
  for (char c : spec) {
    if (c == ',') items.emplace_back();
    else items.back().push_back(c);
  }
  for (std::string item : items) {
    item = trim(item);
    if (item.empty()) throw Error("voice spec '" + spec + "': empty voice name");
    double w = 1.0;
    // A ':' followed by a number is a weight; a path may contain ':' elsewhere.
    if (auto colon = item.rfind(':'); colon != std::string::npos) {
      const std::string num = trim(item.substr(colon + 1));
      char* end = nullptr;
      const double v = std::strtod(num.c_str(), &end);
      if (!num.empty() && end && *end == '\0') {
        if (!(v > 0) || !std::isfinite(v)) throw Error("voice spec '" + spec + "': weight must be positive");
        w = v;
        item = trim(item.substr(0, colon));
      }
    }
    parts.emplace_back(item, w);
  }
  if (parts.empty()) throw Error("empty voice spec");
  if (parts.size() == 1) return load_bin(voice_path(parts[0].first, assets_dir));
  double total = 0;
  for (auto& p : parts) total += p.second;
  std::vector<float> mix(static_cast<size_t>(kVoiceRows) * kStyleDim, 0.0f);
  for (auto& [name, w] : parts) {
    const VoicePack v = load_bin(voice_path(name, assets_dir));
    const float wf = static_cast<float>(w / total);
    for (size_t i = 0; i < mix.size(); ++i) mix[i] += wf * v.data_[i];
  }
  return VoicePack(spec, std::move(mix));
}

std::vector<std::string> VoicePack::list(const std::string& assets_dir) {
  std::vector<std::string> names;
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(fs::path(assets_dir) / "voices", ec))
    if (e.path().extension() == ".bin") names.push_back(e.path().stem().string());
  std::sort(names.begin(), names.end());
  return names;
}

const float* VoicePack::style_for(int n_phonemes) const {
  if (n_phonemes < 1 || n_phonemes > kMaxPhonemes)
    throw Error("voice " + name_ + ": no style row for " + std::to_string(n_phonemes) +
                " phonemes (1..510; split longer text)");
  return data_.data() + static_cast<size_t>(n_phonemes - 1) * kStyleDim;
}

}  // namespace kokoro
