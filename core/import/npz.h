// Reads numpy .npz archives (np.savez / np.savez_compressed: a zip of .npy files, stored or deflated), such
// as kokoro-onnx's voices-v1.0.bin (voice name -> float32 [510, 1, 256]).
#pragma once
#include <string>

#include "core/import/state_dict.h"

namespace kokoro {

// Array names are the entry names without ".npy". Little-endian float32/float16/float64 arrays (and
// integer/bool arrays whose values are exact in float) are returned as float, C or Fortran order. Object
// arrays, big-endian data and anything malformed throw kokoro::Error naming the file and the entry.
StateDict read_npz(const std::string& path);

}  // namespace kokoro
