// Weights prepared once per model for a particular kernel (e.g. Winograd-transformed and packed to bf16),
// instead of on every call. Keyed by the weight's address and a kind string that names the preparation and
// its parameters. Only weights inside a registered region are cached: ModelFile registers its read-only
// mapping at open and unregisters it (dropping every entry in it) before unmapping, so an address can never
// be reused for different values while an entry for it exists. Weights anywhere else (tests' own tensors)
// are not cached; callers then prepare per call.
//
// Thread-safe: lookups take a mutex (not for real-time threads); a missing entry is built outside the lock.
#pragma once
#include <cstddef>
#include <functional>
#include <memory>
#include <string>
#include <vector>

namespace kokoro {

// A tensor of a file-backed region: [offset, offset + bytes) from the region's begin.
struct WeightExtent {
  size_t offset = 0, bytes = 0;
};
// Registers a region whose weights may be cached. `file_tensors` (sorted by offset) may only be given for a
// read-only MAP_PRIVATE file mapping (ModelFile): once a prepared form of a weight is cached, the pages lying
// wholly inside its tensor are released (madvise MADV_DONTNEED), since the engine now reads the prepared
// form. Such pages are clean copies of the file: if anything reads them again the kernel maps them back
// from the page cache, so releasing them is invisible except in the resident size. Without file_tensors
// (tests' heap buffers) nothing is released.
void register_weight_region(const void* begin, size_t bytes, std::vector<WeightExtent> file_tensors = {});
void unregister_weight_region(const void* begin);

// The cached object for (data, kind), built by make() on first use; nullptr when data is not in a
// registered region (make is then not called).
std::shared_ptr<const void> cached_weights(const void* data, const std::string& kind,
                                           const std::function<std::shared_ptr<const void>()>& make);

template <class T>
std::shared_ptr<const T> cached_weights_as(const void* data, const std::string& kind,
                                           const std::function<std::shared_ptr<const T>()>& make) {
  return std::static_pointer_cast<const T>(
      cached_weights(data, kind, [&]() -> std::shared_ptr<const void> { return make(); }));
}

}  // namespace kokoro
