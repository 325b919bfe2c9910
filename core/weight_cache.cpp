#include "core/weight_cache.h"

#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>

#include <map>
#include <mutex>
#include <utility>
#include <vector>

namespace kokoro {

namespace {

struct Region {
  const char* begin;
  size_t bytes;
  std::map<std::pair<const void*, std::string>, std::shared_ptr<const void>> entries;
  std::vector<WeightExtent> file_tensors;  // empty: not a file mapping, never released
};

struct Cache {
  std::mutex mutex;
  std::vector<Region> regions;
};

// Never destroyed: a model held by a static object (a test's shared Synthesizer) unregisters its region at
// exit, possibly after function-local statics like this one would have been destroyed.
Cache& cache() {
  static Cache* c = new Cache;
  return *c;
}

Region* region_of(Cache& c, const void* p) {
  const char* q = static_cast<const char*>(p);
  for (auto& r : c.regions)
    if (q >= r.begin && q < r.begin + r.bytes) return &r;
  return nullptr;
}

}  // namespace

// The pages wholly inside the tensor holding p, once its prepared form exists (see the header).
// KOKORO_KEEP_WEIGHT_PAGES=1 keeps them (to measure what releasing saves).
void release_source_pages(const Region& r, const void* p) {
  if (r.file_tensors.empty()) return;
  static const bool keep = [] {
    const char* e = std::getenv("KOKORO_KEEP_WEIGHT_PAGES");
    return e && *e && *e != '0';
  }();
  if (keep) return;
  const size_t at = static_cast<size_t>(static_cast<const char*>(p) - r.begin);
  auto it = std::upper_bound(r.file_tensors.begin(), r.file_tensors.end(), at,
                             [](size_t v, const WeightExtent& t) { return v < t.offset; });
  if (it == r.file_tensors.begin()) return;
  --it;
  if (at >= it->offset + it->bytes) return;
  static const size_t page = static_cast<size_t>(sysconf(_SC_PAGESIZE));
  const uintptr_t first = (reinterpret_cast<uintptr_t>(r.begin) + it->offset + page - 1) / page * page;
  const uintptr_t last = (reinterpret_cast<uintptr_t>(r.begin) + it->offset + it->bytes) / page * page;
  if (last > first) madvise(reinterpret_cast<void*>(first), last - first, MADV_DONTNEED);
}

void register_weight_region(const void* begin, size_t bytes, std::vector<WeightExtent> file_tensors) {
  std::sort(file_tensors.begin(), file_tensors.end(),
            [](const WeightExtent& a, const WeightExtent& b) { return a.offset < b.offset; });
  Cache& c = cache();
  std::lock_guard<std::mutex> lock(c.mutex);
  c.regions.push_back(Region{static_cast<const char*>(begin), bytes, {}, std::move(file_tensors)});
}

void unregister_weight_region(const void* begin) {
  Cache& c = cache();
  std::lock_guard<std::mutex> lock(c.mutex);
  for (auto it = c.regions.begin(); it != c.regions.end(); ++it)
    if (it->begin == begin) {
      c.regions.erase(it);
      return;
    }
}

std::shared_ptr<const void> cached_weights(const void* data, const std::string& kind,
                                           const std::function<std::shared_ptr<const void>()>& make) {
  Cache& c = cache();
  const auto key = std::make_pair(data, kind);
  {
    std::lock_guard<std::mutex> lock(c.mutex);
    Region* r = region_of(c, data);
    if (!r) return nullptr;
    if (auto it = r->entries.find(key); it != r->entries.end()) return it->second;
  }
  std::shared_ptr<const void> made = make();
  std::lock_guard<std::mutex> lock(c.mutex);
  Region* r = region_of(c, data);
  if (!r) return made;  // unregistered meanwhile: use it once, keep nothing
  const auto [it, inserted] = r->entries.emplace(key, std::move(made));  // first one in wins
  if (inserted) release_source_pages(*r, data);
  return it->second;
}

}  // namespace kokoro
