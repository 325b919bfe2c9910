#include "core/weight_cache.h"

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

void register_weight_region(const void* begin, size_t bytes) {
  Cache& c = cache();
  std::lock_guard<std::mutex> lock(c.mutex);
  c.regions.push_back(Region{static_cast<const char*>(begin), bytes, {}});
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
  return r->entries.emplace(key, std::move(made)).first->second;  // first one in wins
}

}  // namespace kokoro
