// Weights prepared once per model for a particular kernel (e.g. Winograd-transformed and packed to bf16),
// instead of on every call. Keyed by the weight's address and a kind string that names the preparation and
// its parameters. Only weights inside a registered region are cached: ModelFile registers its read-only
// mapping at open and unregisters it (dropping every entry in it) before unmapping, so an address can never
// be reused for different values while an entry for it exists. Weights anywhere else (tests' own tensors)
// are not cached; callers then prepare per call.
//
// Prepared weights can also persist across processes: a region registered with a store file reads the
// prepared forms it finds there (mapped, each checked against its content hash at first use) instead of
// preparing them, and persist_prepared_weights() writes the region's prepared forms to that file. Preparing
// the model's ~200 MB of packed and Winograd-transformed weights takes a few hundred ms of the first
// sentence of every process, which is what a one-shot `kokoro-say "Hi"` waits for (issue 12, "instant
// start"). The store file's name encodes the model file's identity and the kernel family
// (ModelFile::open), so a changed model or another family never reads a stale form.
//
// Thread-safe: lookups take a mutex (not for real-time threads); a missing entry is built outside the lock.
#pragma once
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

namespace kokoro {

// A tensor of a file-backed region: [offset, offset + bytes) from the region's begin.
struct WeightExtent {
  size_t offset = 0, bytes = 0;
};

// Bytes of a prepared weight, valid while `owner` lives (a vector, or the mapping of a store file).
struct PreparedBytes {
  std::shared_ptr<const void> owner;
  const void* data = nullptr;
  size_t bytes = 0;
};

// The typed view callers use: `size` elements of T at `data`.
template <class T>
struct Prepared {
  std::shared_ptr<const void> owner;
  const T* data = nullptr;
  size_t size = 0;
  explicit operator bool() const { return data != nullptr; }
};

template <class T>
Prepared<T> prepared_from(std::shared_ptr<const std::vector<T>> v) {
  const T* d = v->data();
  const size_t n = v->size();
  return {std::move(v), d, n};
}

// Registers a region whose weights may be cached. `file_tensors` (sorted by offset) may only be given for a
// read-only MAP_PRIVATE file mapping (ModelFile): once a prepared form of a weight is cached, the pages lying
// wholly inside its tensor are released (madvise MADV_DONTNEED), since the engine now reads the prepared
// form. Such pages are clean copies of the file: if anything reads them again the kernel maps them back
// from the page cache, so releasing them is invisible except in the resident size. Without file_tensors
// (tests' heap buffers) nothing is released. `store_path` (may be empty: none) is the region's store file.
void register_weight_region(const void* begin, size_t bytes, std::vector<WeightExtent> file_tensors = {},
                            std::string store_path = "");
void unregister_weight_region(const void* begin);

// Writes every prepared weight of the region to its store file (a new file renamed into place), unless
// each of them came from that file already. Returns how many were written (0: nothing to do, no store
// file, or the file could not be written: the store is an optimisation, never an error). Not for real-time
// threads: it writes up to a few hundred MB.
size_t persist_prepared_weights(const void* region_begin);

// The cached bytes for (data, kind): from the region's entries, else from its store file, else built by
// make(). Empty (data == nullptr) when data is not in a registered region (make is then not called).
PreparedBytes cached_weights(const void* data, const std::string& kind, const std::function<PreparedBytes()>& make);

// The typed form: outside a registered region (tests' own weights) make() runs and its result is used
// once, uncached, so callers never need a fallback of their own.
template <class T>
Prepared<T> cached_weights_as(const void* data, const std::string& kind,
                              const std::function<std::shared_ptr<const std::vector<T>>()>& make) {
  const PreparedBytes b = cached_weights(data, kind, [&] {
    std::shared_ptr<const std::vector<T>> v = make();
    const void* d = v->data();
    const size_t n = v->size() * sizeof(T);
    return PreparedBytes{std::move(v), d, n};
  });
  if (!b.data) return prepared_from(make());
  return {b.owner, static_cast<const T*>(b.data), b.bytes / sizeof(T)};
}

// Drops this process's resident pages of the region's store file (madvise MADV_DONTNEED on its read-only
// shared mapping: clean file pages, mapped back from the page cache, 16 at a time by the kernel's fault-around,
// at the next read). Prepared forms read from the store are file pages: without this, the decoder's (~60 MB in
// bf16-all) stay resident through the generator, where the memory peak is, and everything stays resident
// while the engine is idle. ModelFile::release_resident_pages calls it. Not for real-time threads.
// It remembers which pages were mapped (core/page_residency.h) for restore_prepared_store_pages.
void release_prepared_store_pages(const void* region_begin);
// Maps back the store pages the last release dropped (once; ModelFile::restore_released_pages calls it).
// Returns the bytes mapped back. Not for real-time threads.
size_t restore_prepared_store_pages(const void* region_begin);

// Keeps a store directory from growing without bound. Every re-converted or replaced model file, and every
// kernel family, gets a store file of its own (~200-400 MB), and nothing else ever deletes the old ones: a
// user who re-ran fetch-assets a few times had gigabytes of them. Removes the `*.kwc` files of `dir` other
// than `keep` that were last used (modification time; a store is touched whenever it is read) more than
// `max_age_days` ago, then the least recently used ones beyond `max_files` (counting `keep`), and temporary
// files of an interrupted write (`*.kwc.XXXXXX`) older than a day. A process that still maps a removed file
// keeps reading it (the mapping outlives the name). Returns how many files were removed; errors are ignored
// (the store is an optimisation). Called after a store file is written and when one is mapped for use.
size_t prune_prepared_stores(const std::string& dir, const std::string& keep, size_t max_files = 3,
                             int max_age_days = 30);

// The content hash the store file keeps per entry (64-bit, four interleaved multiply-rotate lanes: reads
// at memory speed, catches truncation and damaged blocks; not a cryptographic hash).
uint64_t prepared_content_hash(const void* data, size_t bytes);

}  // namespace kokoro
