#include "core/import/npz.h"

#include "core/error.h"
#include "core/import/npy.h"
#include "core/import/zip_archive.h"

namespace kokoro {

namespace ckpt {

StateDict read_npz_archive(const ZipArchive& zip) {
  StateDict out;
  for (const std::string& entry : zip.entry_names()) {
    if (!entry.ends_with(".npy") || entry.size() == 4)
      throw Error(zip.label() + ": entry " + entry + " is not a .npy array");
    const std::string name = entry.substr(0, entry.size() - 4);
    if (out.count(name)) throw Error(zip.label() + ": array " + name + " appears twice");
    // Any stated size is accepted here; read() checks it against the archive's real size first.
    const std::vector<uint8_t> bytes = zip.read(entry, zip.entry_size(entry));
    out[name] = parse_npy(bytes.data(), bytes.size(), zip.label() + ": entry " + entry);
  }
  return out;
}

}  // namespace ckpt

StateDict read_npz(const std::string& path) {
  return ckpt::read_npz_archive(ckpt::ZipArchive::open_file(path, "npz archive " + path));
}

}  // namespace kokoro
