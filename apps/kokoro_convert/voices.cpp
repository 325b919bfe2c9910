#include "apps/kokoro_convert/voices.h"

#include <cmath>
#include <filesystem>
#include <fstream>

#include "core/error.h"
#include "core/import/npz.h"
#include "core/import/torch_checkpoint.h"
#include "core/voice.h"

namespace kokoro {

namespace fs = std::filesystem;

namespace {

void check_pack(const LoadedTensor& t, const std::string& what) {
  const Shape a{kVoiceRows, 1, kStyleDim}, b{kVoiceRows, kStyleDim};
  if (t.shape != a && t.shape != b)
    throw Error(what + ": shape " + shape_to_string(t.shape) + ", expected [510, 1, 256]");
  for (size_t i = 0; i < t.data.size(); ++i)
    if (!std::isfinite(t.data[i])) throw Error(what + ": non-finite value at element " + std::to_string(i));
}

std::string write_pack(const LoadedTensor& t, const std::string& path) {
  const std::string tmp = path + ".tmp";
  {
    std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
    out.write(reinterpret_cast<const char*>(t.data.data()), static_cast<std::streamsize>(t.data.size() * sizeof(float)));
    if (!out.flush()) throw Error("cannot write " + tmp);
  }
  fs::rename(tmp, path);
  return path;
}

std::string target(const std::string& output, const std::string& name) {
  std::error_code ec;
  if (fs::is_directory(output, ec)) return (fs::path(output) / (name + ".bin")).string();
  return output;
}

}  // namespace

std::vector<std::string> convert_voices(const std::string& input, const std::string& output) {
  const std::string ext = fs::path(input).extension().string();
  const std::string name = fs::path(input).stem().string();
  std::vector<std::string> written;
  if (ext == ".pt") {
    LoadedTensor t = read_torch_tensor(input);
    check_pack(t, "voice file " + input);
    written.push_back(write_pack(t, target(output, name)));
  } else if (ext == ".npz" || (ext == ".bin" && fs::file_size(input) != sizeof(float) * kVoiceRows * kStyleDim)) {
    // kokoro-onnx ships its voices as an .npz named voices-v1.0.bin.
    std::error_code ec;
    if (!fs::is_directory(output, ec)) throw Error("voice archive " + input + ": --voice-out must be a directory");
    for (const auto& [voice, t] : read_npz(input)) {
      check_pack(t, "voice archive " + input + ", voice " + voice);
      written.push_back(write_pack(t, (fs::path(output) / (voice + ".bin")).string()));
    }
  } else if (ext == ".bin") {
    const VoicePack v = VoicePack::load_bin(input);  // validates size and values
    written.push_back(write_pack(LoadedTensor{{kVoiceRows, 1, kStyleDim}, v.data(), "float32"}, target(output, name)));
  } else {
    throw Error("voice file " + input + ": unknown kind (expected .pt, .npz or .bin)");
  }
  return written;
}

}  // namespace kokoro
