#include "core/weight_cache.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <map>
#include <mutex>
#include <set>
#include <utility>
#include <vector>

#include "core/heap.h"
#include "core/page_residency.h"
#include "core/verified_files.h"

namespace kokoro {

namespace {

// A store file mapped read-only: entries by (offset in the region, kind).
struct StoreEntry {
  size_t file_offset = 0, bytes = 0;
  uint64_t hash = 0;
};
struct Store {
  const char* base = nullptr;
  size_t size = 0;
  std::map<std::pair<size_t, std::string>, StoreEntry> entries;
  // Every entry matched its hash in an earlier process (a record in verified_files.h): entries are used
  // without hashing them again, which read all ~190 MB on the first sentence of every process (issue 28).
  bool verified = false;
  std::string path;
  ~Store() {
    if (base) munmap(const_cast<char*>(base), size);
  }
};

struct Region {
  const char* begin;
  size_t bytes;
  std::map<std::pair<const void*, std::string>, PreparedBytes> entries;
  std::vector<WeightExtent> file_tensors;  // empty: not a file mapping, never released
  std::string store_path;                  // empty: no store file
  std::shared_ptr<const Store> store;      // the store file as found at registration (may be null)
  size_t made = 0;                         // entries prepared here, not read from the store
  size_t store_checked = 0;                // entries of `store` whose hash this process has checked
  std::shared_ptr<const Store> released_store;  // the store whose pages the last release dropped ...
  PageRuns released_runs;                       // ... and those that were mapped before it, until restored
};

// Store file layout (little-endian, all offsets from the file's start):
//   "KOKOROPW" | u32 version | u32 count | count x { u64 region offset, u64 file offset, u64 bytes,
//   u64 content hash, u32 kind length, kind } | data, each entry 64-byte aligned.
constexpr char kStoreMagic[8] = {'K', 'O', 'K', 'O', 'R', 'O', 'P', 'W'};
constexpr uint32_t kStoreVersion = 1;

bool store_disabled() {
  const char* e = std::getenv("KOKORO_PREPARED_CACHE");
  return e && std::strcmp(e, "0") == 0;
}

constexpr const char* kStoreCheck = "prepared store v1 hashes";

// Whether the open store file `fd` was recorded as checked (its entries all matching their hashes), keeping
// the record through the "last used" time set here: the record names the file's times (core/verified_files.h),
// so any other write to it since (damage, a replacement) makes it check the hashes again.
bool touch_and_check_record(int fd, const std::string& path) {
  struct stat st {};
  const bool verified = fstat(fd, &st) == 0 && was_verified(path, file_identity(st, kStoreCheck));
  futimens(fd, nullptr);  // "last used", for prune_prepared_stores (fails harmlessly on a read-only cache)
  if (verified && fstat(fd, &st) == 0) record_verified(path, file_identity(st, kStoreCheck));
  return verified;
}

// Records that every entry of the store file at path matched its hash (a writer that just wrote them, or a
// reader that has checked them all).
void record_store_checked(const std::string& path) {
  struct stat st {};
  if (::stat(path.c_str(), &st) == 0) record_verified(path, file_identity(st, kStoreCheck));
}

// The store file at path, or null when it is missing or does not parse (then it is simply rebuilt).
std::shared_ptr<const Store> map_store(const std::string& path) {
  if (path.empty() || store_disabled()) return nullptr;
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return nullptr;
  const bool verified = touch_and_check_record(fd, path);
  struct stat st {};
  if (fstat(fd, &st) != 0 || st.st_size < 16) {
    ::close(fd);
    return nullptr;
  }
  void* p = mmap(nullptr, static_cast<size_t>(st.st_size), PROT_READ, MAP_SHARED, fd, 0);
  ::close(fd);
  if (p == MAP_FAILED) return nullptr;
  auto s = std::make_shared<Store>();
  s->base = static_cast<const char*>(p);
  s->size = static_cast<size_t>(st.st_size);
  s->verified = verified;
  s->path = path;
  size_t at = 0;
  auto read = [&](void* dst, size_t n) {
    if (n > s->size - at) return false;
    std::memcpy(dst, s->base + at, n);
    at += n;
    return true;
  };
  char magic[8];
  uint32_t version = 0, count = 0;
  if (!read(magic, 8) || std::memcmp(magic, kStoreMagic, 8) != 0 || !read(&version, 4) ||
      version != kStoreVersion || !read(&count, 4))
    return nullptr;
  for (uint32_t i = 0; i < count; ++i) {
    uint64_t region_offset = 0, file_offset = 0, bytes = 0, hash = 0;
    uint32_t kind_len = 0;
    if (!read(&region_offset, 8) || !read(&file_offset, 8) || !read(&bytes, 8) || !read(&hash, 8) ||
        !read(&kind_len, 4) || kind_len > 4096 || kind_len > s->size - at)
      return nullptr;
    std::string kind(s->base + at, kind_len);
    at += kind_len;
    if (file_offset > s->size || bytes > s->size - file_offset) return nullptr;
    s->entries[{static_cast<size_t>(region_offset), kind}] = {static_cast<size_t>(file_offset),
                                                              static_cast<size_t>(bytes), hash};
  }
  return s;
}

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

uint64_t prepared_content_hash(const void* data, size_t bytes) {
  constexpr uint64_t kMul = 0x9E3779B97F4A7C15ull;
  uint64_t lane[4] = {bytes, bytes ^ 0x5bd1e995ull, bytes + kMul, ~bytes};
  const auto* p = static_cast<const unsigned char*>(data);
  size_t i = 0;
  for (; i + 32 <= bytes; i += 32)
    for (int l = 0; l < 4; ++l) {
      uint64_t w;
      std::memcpy(&w, p + i + 8 * l, 8);
      const uint64_t x = (lane[l] ^ w) * kMul;
      lane[l] = (x << 29) | (x >> 35);
    }
  uint64_t h = lane[0] ^ (lane[1] * 3) ^ (lane[2] * 5) ^ (lane[3] * 7);
  for (; i < bytes; ++i) h = (h ^ p[i]) * kMul;
  return h ^ (h >> 31);
}

void register_weight_region(const void* begin, size_t bytes, std::vector<WeightExtent> file_tensors,
                            std::string store_path) {
  std::sort(file_tensors.begin(), file_tensors.end(),
            [](const WeightExtent& a, const WeightExtent& b) { return a.offset < b.offset; });
  std::shared_ptr<const Store> store = map_store(store_path);
  // A store in use is pruned around as well as one just written, so that stores left by older model files
  // go even where nothing new is ever written (a directory listing of a few files: microseconds).
  if (store) prune_prepared_stores(std::filesystem::path(store_path).parent_path().string(), store_path);
  Cache& c = cache();
  std::lock_guard<std::mutex> lock(c.mutex);
  c.regions.push_back(Region{static_cast<const char*>(begin), bytes, {}, std::move(file_tensors),
                             std::move(store_path), std::move(store), 0, 0, nullptr, {}});
}

namespace {
// After a store file is written: the forms this process prepared are read from the file from now on, and
// their heap copies are freed (once no call still holds one). File pages can leave the resident set between
// the parts of a segment (release_prepared_store_pages); heap copies cannot, so without this the process that
// prepared the forms kept ~200 MB of them resident for its whole life (kokoro-bench on a fresh clone: 446 MB
// peak in slice mode against 358 MB for a process that found the store). Only entries whose bytes the new
// file holds under the hash just written are switched; a file replaced meanwhile by another process simply
// matches fewer of them.
void adopt_written_store(const void* region_begin, const std::string& path,
                         const std::vector<std::pair<std::pair<size_t, std::string>, PreparedBytes>>& written,
                         const std::vector<uint64_t>& hashes) {
  std::shared_ptr<const Store> store = map_store(path);
  if (!store) return;
  std::map<std::pair<size_t, std::string>, uint64_t> hash_of;
  for (size_t i = 0; i < written.size(); ++i) hash_of[written[i].first] = hashes[i];
  Cache& c = cache();
  std::lock_guard<std::mutex> lock(c.mutex);
  Region* r = region_of(c, region_begin);
  if (!r || r->begin != region_begin || r->store_path != path) return;
  size_t still_made = 0;
  for (auto& [key, value] : r->entries) {
    const std::pair<size_t, std::string> at{static_cast<size_t>(static_cast<const char*>(key.first) - r->begin), key.second};
    const auto e = store->entries.find(at);
    const auto h = hash_of.find(at);
    if (e == store->entries.end() || h == hash_of.end() || e->second.hash != h->second ||
        e->second.bytes != value.bytes) {
      if (value.owner != r->store) ++still_made;
      continue;
    }
    value = PreparedBytes{store, store->base + e->second.file_offset, e->second.bytes};
  }
  r->store = std::move(store);
  r->made = still_made;
  r->store_checked = 0;
}
}  // namespace

namespace {
// A store in use whose hashes no process has recorded as checked (written before records existed, or by a
// build that did not record them, or used only in part): checks every entry now and records the file if
// all match, so that the next processes skip hashing (off the audio path: when the caller persists). The
// pages of entries this process does not use are let go again once read (as persisting does).
void check_whole_store(const std::shared_ptr<const Store>& store, const std::set<std::pair<size_t, std::string>>& in_use) {
  const uintptr_t page = static_cast<uintptr_t>(sysconf(_SC_PAGESIZE));
  for (const auto& [key, e] : store->entries) {
    const char* p = store->base + e.file_offset;
    const bool ok = prepared_content_hash(p, e.bytes) == e.hash;
    if (!in_use.count(key)) {
      const uintptr_t a = (reinterpret_cast<uintptr_t>(p) + page - 1) / page * page;
      const uintptr_t b = (reinterpret_cast<uintptr_t>(p) + e.bytes) / page * page;
      if (b > a) madvise(reinterpret_cast<void*>(a), b - a, MADV_DONTNEED);
    }
    if (!ok) return;
  }
  record_store_checked(store->path);
}
}  // namespace

size_t persist_prepared_weights(const void* region_begin) {
  if (store_disabled()) return 0;
  std::string path;
  std::vector<std::pair<std::pair<size_t, std::string>, PreparedBytes>> entries;
  std::vector<std::pair<std::pair<size_t, std::string>, StoreEntry>> stored;
  std::shared_ptr<const Store> store;
  {
    Cache& c = cache();
    std::unique_lock<std::mutex> lock(c.mutex);
    Region* r = nullptr;
    for (auto& reg : c.regions)
      if (reg.begin == region_begin) r = &reg;
    if (r && r->made == 0 && r->store && !r->store->verified) {
      store = r->store;
      std::set<std::pair<size_t, std::string>> in_use;
      for (const auto& [key, value] : r->entries)
        if (value.owner == store) in_use.insert({static_cast<size_t>(static_cast<const char*>(key.first) - r->begin), key.second});
      lock.unlock();
      check_whole_store(store, in_use);
      return 0;
    }
    if (!r || r->store_path.empty() || r->made == 0) return 0;
    path = r->store_path;
    for (const auto& [key, value] : r->entries)
      entries.push_back({{static_cast<size_t>(static_cast<const char*>(key.first) - r->begin), key.second}, value});
    // What the store file held and this process did not use (another precision's forms) is kept too, so
    // that processes with different settings do not keep replacing each other's forms.
    if (r->store)
      for (const auto& [key, e] : r->store->entries)
        if (!r->entries.count({r->begin + key.first, key.second}))
          stored.push_back({key, e});
    store = r->store;
  }
  // Reading the old store's forms faults their pages in; while the heap copies are still alive that was the
  // process's peak (kokoro-bench from a fresh store, slice mode: 399 MB). Each form's pages go again once read.
  auto let_go = [&](const char* p, size_t n) {
    if (!store || !store->base || p < store->base || p >= store->base + store->size) return;
    const uintptr_t page = static_cast<uintptr_t>(sysconf(_SC_PAGESIZE));
    const uintptr_t a = reinterpret_cast<uintptr_t>(p) / page * page;
    const uintptr_t b = std::min(reinterpret_cast<uintptr_t>(p) + n, reinterpret_cast<uintptr_t>(store->base) + store->size);
    madvise(reinterpret_cast<void*>(a), b - a, MADV_DONTNEED);
  };
  for (const auto& [key, e] : stored) {
    const char* p = store->base + e.file_offset;
    if (prepared_content_hash(p, e.bytes) == e.hash) entries.push_back({key, PreparedBytes{store, p, e.bytes}});
    let_go(p, e.bytes);
  }
  namespace fs = std::filesystem;
  std::error_code ec;
  fs::create_directories(fs::path(path).parent_path(), ec);
  std::string tmp = path + ".XXXXXX";
  const int fd = mkstemp(tmp.data());
  if (fd < 0) return 0;
  FILE* f = fdopen(fd, "wb");
  if (!f) {
    ::close(fd);
    ::unlink(tmp.c_str());
    return 0;
  }
  // Index first (its size is known before any data is placed), then the data, 64-byte aligned.
  size_t index_bytes = 16;
  for (const auto& e : entries) index_bytes += 36 + e.first.second.size();
  size_t offset = (index_bytes + 63) / 64 * 64;
  bool ok = std::fwrite(kStoreMagic, 1, 8, f) == 8;
  const uint32_t version = kStoreVersion, count = static_cast<uint32_t>(entries.size());
  ok = ok && std::fwrite(&version, 4, 1, f) == 1 && std::fwrite(&count, 4, 1, f) == 1;
  std::vector<uint64_t> at, hashes;
  for (const auto& [key, value] : entries) {
    const uint64_t region_offset = key.first, file_offset = offset, bytes = value.bytes;
    const uint64_t hash = prepared_content_hash(value.data, value.bytes);
    let_go(static_cast<const char*>(value.data), value.bytes);
    hashes.push_back(hash);
    const uint32_t kind_len = static_cast<uint32_t>(key.second.size());
    ok = ok && std::fwrite(&region_offset, 8, 1, f) == 1 && std::fwrite(&file_offset, 8, 1, f) == 1 &&
         std::fwrite(&bytes, 8, 1, f) == 1 && std::fwrite(&hash, 8, 1, f) == 1 &&
         std::fwrite(&kind_len, 4, 1, f) == 1 && std::fwrite(key.second.data(), 1, kind_len, f) == kind_len;
    at.push_back(offset);
    offset = (offset + value.bytes + 63) / 64 * 64;
  }
  size_t written = index_bytes;
  static const char zeros[64] = {};
  for (size_t i = 0; ok && i < entries.size(); ++i) {
    ok = std::fwrite(zeros, 1, at[i] - written, f) == at[i] - written;
    const PreparedBytes& b = entries[i].second;
    ok = ok && std::fwrite(b.data, 1, b.bytes, f) == b.bytes;
    let_go(static_cast<const char*>(b.data), b.bytes);
    written = at[i] + b.bytes;
  }
  ok = (std::fclose(f) == 0) && ok;
  if (!ok || std::rename(tmp.c_str(), path.c_str()) != 0) {
    ::unlink(tmp.c_str());
    return 0;
  }
  record_store_checked(path);  // its hashes were computed from the forms just written
  prune_prepared_stores(fs::path(path).parent_path().string(), path);
  adopt_written_store(region_begin, path, entries, hashes);
  const size_t count_written = entries.size();
  entries.clear();  // the last references to the heap copies, unless a call still holds one
  return_free_heap_pages();
  return count_written;
}

size_t prune_prepared_stores(const std::string& dir, const std::string& keep, size_t max_files, int max_age_days) {
  namespace fs = std::filesystem;
  using Clock = fs::file_time_type::clock;
  std::error_code ec;
  const auto now = Clock::now();
  const auto day = std::chrono::hours(24);
  struct Candidate {
    fs::path path;
    fs::file_time_type used;
  };
  std::vector<Candidate> stores;
  size_t removed = 0;
  auto remove = [&](const fs::path& p) {
    std::error_code e;
    if (fs::remove(p, e)) ++removed;
  };
  for (fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
    std::error_code e;
    if (!it->is_regular_file(e)) continue;
    const fs::path& p = it->path();
    const std::string name = p.filename().string();
    const auto used = it->last_write_time(e);
    if (e) continue;
    const size_t dot = name.rfind(".kwc");
    if (dot == std::string::npos) continue;
    if (dot + 4 == name.size()) {
      if (!fs::equivalent(p, keep, e)) stores.push_back({p, used});
    } else if (name.size() == dot + 11 && name[dot + 4] == '.' && now - used > day) {
      remove(p);  // "<hash>.kwc.XXXXXX": a write that never finished
    }
  }
  // Most recently used first; `keep` takes one of the max_files places.
  std::sort(stores.begin(), stores.end(), [](const Candidate& a, const Candidate& b) { return a.used > b.used; });
  for (size_t i = 0; i < stores.size(); ++i)
    if (i + 1 >= max_files || now - stores[i].used > max_age_days * day) remove(stores[i].path);
  return removed;
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

void release_prepared_store_pages(const void* region_begin) {
  std::shared_ptr<const Store> store;
  {
    std::lock_guard<std::mutex> lock(cache().mutex);
    if (Region* r = region_of(cache(), region_begin)) store = r->store;
  }
  if (!store || !store->base) return;
  PageRuns mapped = mapped_page_runs(store->base, store->size);  // outside the cache's lock: ~1-3 ms
  madvise(const_cast<char*>(store->base), store->size, MADV_DONTNEED);
  std::lock_guard<std::mutex> lock(cache().mutex);
  if (Region* r = region_of(cache(), region_begin)) {
    if (r->released_store != store) r->released_runs.clear();  // a store adopted since: its pages only
    r->released_store = store;
    merge_page_runs(r->released_runs, mapped);
  }
}

size_t restore_prepared_store_pages(const void* region_begin) {
  std::shared_ptr<const Store> store;
  PageRuns runs;
  {
    std::lock_guard<std::mutex> lock(cache().mutex);
    Region* r = region_of(cache(), region_begin);
    if (!r || !r->released_store) return 0;
    store = std::move(r->released_store);
    runs.swap(r->released_runs);
  }
  return map_page_runs_back(store->base, runs);
}

PreparedBytes cached_weights(const void* data, const std::string& kind, const std::function<PreparedBytes()>& make) {
  Cache& c = cache();
  const auto key = std::make_pair(data, kind);
  std::shared_ptr<const Store> store;
  StoreEntry stored;
  {
    std::lock_guard<std::mutex> lock(c.mutex);
    Region* r = region_of(c, data);
    if (!r) return {};
    if (auto it = r->entries.find(key); it != r->entries.end()) return it->second;
    if (r->store) {
      const size_t offset = static_cast<size_t>(static_cast<const char*>(data) - r->begin);
      if (auto it = r->store->entries.find({offset, kind}); it != r->store->entries.end()) {
        store = r->store;
        stored = it->second;
      }
    }
  }
  PreparedBytes made;
  bool from_store = false, hashed = false;
  if (store) {
    const char* p = store->base + stored.file_offset;
    // Checked at first use, unless an earlier process checked the whole file (Store::verified): a damaged or
    // foreign entry is prepared again instead.
    hashed = !store->verified;
    if (store->verified || prepared_content_hash(p, stored.bytes) == stored.hash) {
      made = {store, p, stored.bytes};
      from_store = true;
    }
  }
  if (!from_store) made = make();
  bool all_checked = false;
  {
    std::lock_guard<std::mutex> lock(c.mutex);
    Region* r = region_of(c, data);
    if (!r) return made;  // unregistered meanwhile: use it once, keep nothing
    const auto [it, inserted] = r->entries.emplace(key, std::move(made));  // first one in wins
    if (inserted) {
      if (!from_store) ++r->made;
      release_source_pages(*r, data);
      if (from_store && hashed && r->store == store)
        all_checked = ++r->store_checked == store->entries.size();
    }
    made = it->second;
  }
  // The last unchecked entry of the file matched: later processes need not hash them again.
  if (all_checked) record_store_checked(store->path);
  return made;
}

}  // namespace kokoro
