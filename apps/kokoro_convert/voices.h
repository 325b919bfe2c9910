// Voice conversion: official voices/*.pt (one tensor each), kokoro-onnx's voices-v1.0.bin (an .npz of all
// voices) and raw .bin packs -> raw float32 [510, 1, 256] .bin packs, the format the engine loads.
#pragma once
#include <string>
#include <vector>

namespace kokoro {

// Converts `input` and writes the pack(s): for a single voice (.pt or .bin) `output` is the .bin path (or a
// directory, then <name>.bin inside it); for an .npz it must be a directory. Returns the files written.
// Throws kokoro::Error naming the file (and voice) on a wrong shape, non-finite values or unreadable input.
std::vector<std::string> convert_voices(const std::string& input, const std::string& output);

}  // namespace kokoro
