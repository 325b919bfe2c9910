// The engine's model file (".kokoro"): one file per model, read with mmap, no parsing of weights at load.
//
//   bytes 0..7    magic "KOKORORT"
//   bytes 8..11   format version, uint32 little-endian (currently 1)
//   bytes 12..15  reserved, zero
//   bytes 16..23  header length H in bytes, uint64 little-endian
//   bytes 24..    header: UTF-8 JSON {"config": {...}, "tensors": [{"name", "dtype", "shape", "offset",
//                 "nbytes"}...], "source": "...", "converter": "..."}
//   then          tensor data; every tensor starts at a 64-byte aligned absolute file offset
//
// "config" is the model's config.json (hyper-parameters and phoneme vocab). Tensor names are the official
// KModel state-dict names (e.g. "decoder.generator.ups.0.weight") with weight norm already folded into
// ".weight". Tensors are "f32"; small data files may also store "f16" (IEEE half, read as fp32 copies with
// get_floats; the converted models never do). docs/model-format.md describes it for other readers.
#pragma once
#include <nlohmann/json.hpp>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "core/page_residency.h"
#include "core/tensor.h"

namespace kokoro {

inline constexpr char kModelMagic[8] = {'K', 'O', 'K', 'O', 'R', 'O', 'R', 'T'};
inline constexpr uint32_t kModelVersion = 1;
inline constexpr uint64_t kModelAlignment = 64;

// How a tensor's elements are stored. f16 (IEEE binary16) halves a file whose precision needs are modest
// (the statistics predictor); the engine reads it as fp32 copies (ModelFile::get_floats).
enum class DType { f32, f16 };
const char* to_string(DType dtype);
size_t dtype_size(DType dtype);

struct TensorInfo {
  std::string name;
  DType dtype = DType::f32;
  Shape shape;
  uint64_t offset = 0;  // absolute, in bytes
  uint64_t nbytes = 0;
};

class ModelFile {
 public:
  // When to scan every weight for NaN/Inf (it reads the whole file: ~0.1-0.5 s for the 325 MB model).
  //   once    if this version of the file (core/verified_files.h: device, inode, size, times) has not passed
  //           the scan before, scan it and record that it passed; otherwise skip it (the default)
  //   always  scan at every open (kokoro-convert --check)
  //   never   no scan (tests of other checks)
  enum class FiniteCheck { once, always, never };
  // Opens and validates the whole file: magic, version, header JSON, every tensor inside the file, sizes
  // matching shapes, and (as `check` says) no NaN/Inf in any weight. Throws kokoro::Error naming the file
  // and the tensor. The scan reads with pread, not through the mapping, so that it leaves no weight pages
  // resident: only the weights the engine uses become so.
  static std::shared_ptr<const ModelFile> open(const std::string& path, FiniteCheck check = FiniteCheck::once);
  // Whether the last open of this object ran the NaN/Inf scan (false: skipped as already verified).
  bool scanned_finite() const { return scanned_finite_; }
  // Writes the prepared forms of the weights used so far to the user's cache (core/weight_cache.h), so
  // that the next process reads them instead of preparing them on its first sentence. Returns how many
  // were written (0: all came from there already, or it cannot be written). Not for real-time threads.
  size_t persist_prepared_weights() const;
  // Drops this process's resident pages of the file (madvise MADV_DONTNEED on the read-only private mapping:
  // they are clean copies of the file, which the kernel maps back from the page cache at the next read, so
  // nothing changes but the resident size and a few page faults). The engine calls it between the parts of
  // a segment that read different weights: in bf16-all ~44 MB of fp32 weights (AdaIN style projections,
  // 1x1 convolutions, ...) are read as they are, and those of the acoustic model and the decoder would
  // otherwise stay resident through the generator, where the memory peak is. The same for the pages of the
  // prepared-weights store file (release_prepared_store_pages). KOKORO_KEEP_WEIGHT_PAGES=1
  // keeps them (to measure what releasing saves). Not for real-time threads (a system call).
  // It remembers which pages were mapped (core/page_residency.h), for restore_released_pages.
  void release_resident_pages() const;
  // Maps back the pages (of the file and of the store) that the last release dropped, if none has since
  // been restored: what the next segment reads then costs no page faults on its way to first audio. For a
  // thread that would otherwise wait (the engine's vocoder worker at a pause in streamed text). Returns
  // the bytes mapped back. Not for real-time threads (system calls; ~3-12 ms for 30-390 MB).
  // KOKORO_RESTORE_WEIGHT_PAGES=0 turns it off (to measure what it saves).
  size_t restore_released_pages() const;
  ~ModelFile();
  ModelFile(const ModelFile&) = delete;
  ModelFile& operator=(const ModelFile&) = delete;

  const std::string& path() const { return path_; }
  const nlohmann::json& config() const { return config_; }
  const nlohmann::json& header() const { return header_; }
  const std::vector<TensorInfo>& tensors() const { return tensors_; }
  bool has(const std::string& name) const { return index_.count(name) != 0; }
  uint64_t file_size() const { return size_; }

  // The named weight, checked against the shape the engine expects; throws naming file and tensor (also for
  // a tensor not stored as f32: those are read with get_floats).
  TensorView get(const std::string& name, const Shape& expected) const;
  TensorView get(const std::string& name) const;
  // The named tensor as fp32 values, whatever its dtype (a copy), checked against the expected shape.
  std::vector<float> get_floats(const std::string& name, const Shape& expected) const;
  // The same values written to out (expected's element count), for a reader that has its own storage.
  void read_floats(const std::string& name, const Shape& expected, float* out) const;

 private:
  ModelFile() = default;
  std::string path_;
  const uint8_t* base_ = nullptr;
  uint64_t size_ = 0;
  bool scanned_finite_ = false;
  nlohmann::json header_;
  nlohmann::json config_;
  std::vector<TensorInfo> tensors_;
  std::map<std::string, size_t> index_;
  mutable std::mutex released_mutex_;
  mutable PageRuns released_;  // the file's pages mapped before the last release, until restored
};

// Collects named float32 tensors and writes them as a model file.
class ModelWriter {
 public:
  explicit ModelWriter(nlohmann::json config) : config_(std::move(config)) {}
  void set_source(std::string source) { source_ = std::move(source); }
  // Copies the data, stored as `dtype` (f16: rounded to nearest). Rejects duplicate names, non-finite values
  // and values beyond the dtype's range (naming the tensor).
  void add(const std::string& name, const Shape& shape, const float* data, DType dtype = DType::f32);
  void add(const std::string& name, const Tensor& t) { add(name, t.shape(), t.data()); }
  bool has(const std::string& name) const;
  size_t size() const { return names_.size(); }
  // Writes to path + ".tmp" then renames, so a failed conversion never leaves a half file behind.
  void write(const std::string& path) const;

 private:
  nlohmann::json config_;
  std::string source_;
  std::vector<std::string> names_;
  std::vector<Shape> shapes_;
  std::vector<DType> dtypes_;
  std::vector<std::vector<uint8_t>> data_;  // the stored bytes
};

}  // namespace kokoro
