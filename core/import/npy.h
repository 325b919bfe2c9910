// One .npy array (numpy's format: magic, a Python-dict header with descr/fortran_order/shape, raw data),
// and .npz archives of them.
#pragma once
#include <cstddef>
#include <cstdint>
#include <string>

#include "core/import/state_dict.h"
#include "core/import/zip_archive.h"

namespace kokoro::ckpt {

// Parses a whole .npy file held in memory. Throws Error("<what>: ...") on a bad magic, header or dtype, or
// data that does not have exactly the size the header promises.
LoadedTensor parse_npy(const uint8_t* bytes, size_t size, const std::string& what);

// Every array of an .npz archive (read_npz opens the file and calls this).
StateDict read_npz_archive(const ZipArchive& zip);

}  // namespace kokoro::ckpt
