// The steps behind read_torch_checkpoint, exposed for tests and fuzzers: find the tensors in an unpickled
// torch.save object tree, then copy them out of storage bytes that a StorageReader supplies (the archive's
// <archive>/data/<key> records in real use).
#pragma once
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "core/import/pickle_reader.h"
#include "core/import/state_dict.h"
#include "core/import/zip_archive.h"

namespace kokoro::ckpt {

inline constexpr size_t kMaxPickleBytes = size_t{64} << 20;  // kokoro-v1_0.pth's data.pkl is ~100 KB
inline constexpr size_t kMaxNestingDepth = 64;
inline constexpr size_t kMaxNameLength = 1024;
inline constexpr size_t kMaxTensors = size_t{1} << 18;

struct NamedTensor {
  std::string name;
  uint32_t tensor = 0;  // index into Unpickled::tensors
};

// Walks nested dicts from the root, joining keys with '.' and dropping a leading "module." from each key.
// Throws Error("<what>: key <name>: ...") for non-string keys, values that are neither tensors nor dicts,
// names that collide, and dicts reached twice (shared or cyclic).
std::vector<NamedTensor> collect_state_dict(const Unpickled& graph, const std::string& what);
// The root itself must be a tensor.
uint32_t collect_single_tensor(const Unpickled& graph, const std::string& what);

using StorageReader = std::function<std::vector<uint8_t>(const StorageRef&)>;

// Decodes every named tensor. Each storage is read once and released after its last tensor; the total
// output is capped at a small multiple of the storage sizes (a tensor may be named many times).
StateDict materialise(const Unpickled& graph, const std::vector<NamedTensor>& tensors, const StorageReader& read,
                      const std::string& what);

// Whole-archive readers (the public functions open the file and call these).
StateDict read_state_dict(const ZipArchive& zip);
LoadedTensor read_single_tensor(const ZipArchive& zip);

}  // namespace kokoro::ckpt
