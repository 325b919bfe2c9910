#include "core/model_file.h"

#include <fcntl.h>
#if defined(__x86_64__)
#include <immintrin.h>
#endif
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <functional>

#include "core/assets.h"
#include "core/error.h"
#include "core/kernel_family.h"
#include "core/verified_files.h"
#include "core/weight_cache.h"

namespace kokoro {

namespace {

constexpr uint64_t kPrefixSize = 24;
constexpr uint64_t kRecordVerifiedFrom = 16u << 20;  // bytes

uint64_t align_up(uint64_t v) { return (v + kModelAlignment - 1) / kModelAlignment * kModelAlignment; }

template <typename T>
T read_le(const uint8_t* p) {
  T v;
  std::memcpy(&v, p, sizeof(T));  // x86-64 only: little-endian host
  return v;
}

// Index of the first NaN/Inf among n floats, or -1. Exponent bits all ones <=> not finite; the loop
// without early exit vectorizes.
int64_t first_non_finite(const float* f, int64_t n) {
  const auto* u = reinterpret_cast<const uint32_t*>(f);
  uint32_t any = 0;
  for (int64_t i = 0; i < n; ++i) any |= static_cast<uint32_t>((u[i] & 0x7f800000u) == 0x7f800000u);
  if (!any) return -1;
  for (int64_t i = 0; i < n; ++i)
    if (!std::isfinite(f[i])) return i;
  return -1;
}

// IEEE binary16 <-> fp32, round to nearest even, in plain integer arithmetic: the compilers and targets the
// project builds with do not all have _Float16 (clang 14 on x86-64 does not), and the baseline kernel family
// has no F16C. Checked against GCC's _Float16 on all 2^32 floats and all 2^16 halves (identical bits; NaNs
// stay NaNs).
uint16_t f16_bits(float v) {
  uint32_t x;
  std::memcpy(&x, &v, sizeof x);
  const uint32_t sign = (x >> 16) & 0x8000u, a = x & 0x7fffffffu;
  if (a >= 0x7f800000u) return static_cast<uint16_t>(sign | 0x7c00u | (a > 0x7f800000u ? 0x200u : 0u));
  if (a >= 0x477ff000u) return static_cast<uint16_t>(sign | 0x7c00u);
  const uint32_t e = a >> 23;
  if (e < 113) {
    if (e < 102) return static_cast<uint16_t>(sign);
    const uint32_t m = (a & 0x7fffffu) | 0x800000u, shift = 126 - e;
    uint32_t k = m >> shift;
    const uint32_t rem = m & ((1u << shift) - 1u), half = 1u << (shift - 1u);
    if (rem > half || (rem == half && (k & 1u))) ++k;
    return static_cast<uint16_t>(sign | k);
  }
  uint32_t k = ((e - 112u) << 10) | ((a & 0x7fffffu) >> 13);
  const uint32_t rem = a & 0x1fffu;
  if (rem > 0x1000u || (rem == 0x1000u && (k & 1u))) ++k;
  return static_cast<uint16_t>(sign | k);
}

float f16_value(uint16_t b) {
  const uint32_t sign = static_cast<uint32_t>(b & 0x8000u) << 16, e = (b >> 10) & 0x1fu, m = b & 0x3ffu;
  float f;
  if (e == 0) {
    f = static_cast<float>(m) * 0x1p-24f;
    return sign ? -f : f;
  }
  const uint32_t x = e == 31 ? sign | 0x7f800000u | (m << 13) : sign | ((e + 112u) << 23) | (m << 13);
  std::memcpy(&f, &x, sizeof f);
  return f;
}

#if defined(__x86_64__)
// Eight halves at a time with the F16C instruction (exact, as f16_value): the statistics predictor's
// ~1 M values took ~6 ms one by one, on the start-up path of every process in slice mode.
__attribute__((target("avx,f16c"))) void f16_to_f32_f16c(const uint16_t* h, float* out, int64_t n) {
  int64_t i = 0;
  for (; i + 8 <= n; i += 8)
    _mm256_storeu_ps(out + i, _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(h + i))));
  for (; i < n; ++i) out[i] = f16_value(h[i]);
}
#endif

void f16_to_f32(const uint16_t* h, float* out, int64_t n) {
#if defined(__x86_64__)
  // AVX2 as the test: every x86-64-v3 CPU has F16C beside it, and clang's __builtin_cpu_supports knows no "f16c".
  static const bool f16c = __builtin_cpu_supports("avx2");
  if (f16c) return f16_to_f32_f16c(h, out, n);
#endif
  for (int64_t i = 0; i < n; ++i) out[i] = f16_value(h[i]);
}

// Index of the first NaN/Inf among n halves (exponent bits all ones), or -1.
int64_t first_non_finite_f16(const uint16_t* h, int64_t n) {
  for (int64_t i = 0; i < n; ++i)
    if ((h[i] & 0x7c00u) == 0x7c00u) return i;
  return -1;
}

// Scans one tensor's bytes read from fd (not through the mapping: nothing stays resident); returns the
// element index of the first non-finite value or -1.
int64_t scan_tensor(int fd, const TensorInfo& t, std::vector<float>& buf, std::string& io_error) {
  const uint64_t element = dtype_size(t.dtype);
  uint64_t done = 0;
  while (done < t.nbytes) {
    const uint64_t want = std::min<uint64_t>(buf.size() * sizeof(float), t.nbytes - done);
    const ssize_t got = ::pread(fd, buf.data(), want, static_cast<off_t>(t.offset + done));
    if (got <= 0 || got % element != 0) {
      io_error = got < 0 ? std::strerror(errno) : "short read";
      return -1;
    }
    const int64_t n = got / static_cast<int64_t>(element);
    const int64_t bad = t.dtype == DType::f16 ? first_non_finite_f16(reinterpret_cast<const uint16_t*>(buf.data()), n)
                                              : first_non_finite(buf.data(), n);
    if (bad >= 0) return static_cast<int64_t>(done / element) + bad;
    done += static_cast<uint64_t>(got);
  }
  return -1;
}

}  // namespace

const char* to_string(DType dtype) { return dtype == DType::f16 ? "f16" : "f32"; }
size_t dtype_size(DType dtype) { return dtype == DType::f16 ? 2 : 4; }

namespace {
// Where the prepared forms of this file's weights persist (core/weight_cache.h): named by the file's
// identity (device, inode, size, times) and the kernel family, so that a changed or replaced model and
// another family's kernels never read them. Only for model-sized files (tests' small ones prepare anew).
std::string prepared_store_path(const struct stat& st) {
  if (static_cast<uint64_t>(st.st_size) < kRecordVerifiedFrom) return "";
  const std::string dir = user_cache_dir();
  if (dir.empty()) return "";
  const std::string key = file_identity(st, "kokoro model v" + std::to_string(kModelVersion)) + " kernels " + kernel_family();
  char name[40];
  std::snprintf(name, sizeof name, "%016zx.kwc", std::hash<std::string>{}(key));
  return dir + "/prepared/" + name;
}
}  // namespace

std::shared_ptr<const ModelFile> ModelFile::open(const std::string& path, FiniteCheck check) {
  auto fail = [&](const std::string& what) { return Error("model file " + path + ": " + what); };
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) throw fail(std::string("cannot open: ") + std::strerror(errno));
  struct stat st {};
  if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    ::close(fd);
    throw fail("not a regular file");
  }
  std::shared_ptr<ModelFile> m(new ModelFile());
  m->path_ = path;
  m->size_ = static_cast<uint64_t>(st.st_size);
  if (m->size_ < kPrefixSize) {
    ::close(fd);
    throw fail("truncated: " + std::to_string(m->size_) + " bytes is smaller than the 24-byte prefix");
  }
  void* p = mmap(nullptr, m->size_, PROT_READ, MAP_PRIVATE, fd, 0);
  if (p == MAP_FAILED) {
    ::close(fd);
    throw fail(std::string("mmap failed: ") + std::strerror(errno));
  }
  // Closed on every way out; the scan below reads through it.
  std::unique_ptr<int, void (*)(int*)> fd_guard(new int(fd), [](int* f) {
    ::close(*f);
    delete f;
  });
  m->base_ = static_cast<const uint8_t*>(p);

  if (std::memcmp(m->base_, kModelMagic, 8) != 0)
    throw fail("wrong magic (not a kokoro-rt model; convert checkpoints with kokoro-convert)");
  const uint32_t version = read_le<uint32_t>(m->base_ + 8);
  if (version != kModelVersion)
    throw fail("format version " + std::to_string(version) + ", this build reads version " +
               std::to_string(kModelVersion));
  const uint64_t header_len = read_le<uint64_t>(m->base_ + 16);
  if (header_len > m->size_ - kPrefixSize) throw fail("truncated: header runs past the end of the file");
  try {
    m->header_ = nlohmann::json::parse(m->base_ + kPrefixSize, m->base_ + kPrefixSize + header_len);
    m->config_ = m->header_.at("config");
    for (const auto& t : m->header_.at("tensors")) {
      TensorInfo info;
      info.name = t.at("name").get<std::string>();
      const std::string dtype = t.at("dtype").get<std::string>();
      if (dtype == "f16")
        info.dtype = DType::f16;
      else if (dtype != "f32")
        throw fail("tensor " + info.name + ": dtype " + t.at("dtype").dump() + " is not supported");
      info.shape = t.at("shape").get<Shape>();
      info.offset = t.at("offset").get<uint64_t>();
      info.nbytes = t.at("nbytes").get<uint64_t>();
      m->index_[info.name] = m->tensors_.size();
      m->tensors_.push_back(std::move(info));
    }
  } catch (const nlohmann::json::exception& e) {
    throw fail(std::string("corrupt header: ") + e.what());
  }
  const uint64_t data_start = kPrefixSize + header_len;
  for (const TensorInfo& t : m->tensors_) {
    for (int64_t d : t.shape)
      if (d < 0) throw fail("tensor " + t.name + ": negative dimension in " + shape_to_string(t.shape));
    if (t.nbytes != static_cast<uint64_t>(shape_numel(t.shape)) * dtype_size(t.dtype))
      throw fail("tensor " + t.name + ": " + std::to_string(t.nbytes) + " bytes do not match shape " +
                 shape_to_string(t.shape));
    if (t.offset % kModelAlignment != 0 || t.offset < data_start)
      throw fail("tensor " + t.name + ": misplaced offset " + std::to_string(t.offset));
    if (t.offset > m->size_ || t.nbytes > m->size_ - t.offset)
      throw fail("truncated: tensor " + t.name + " ends at byte " + std::to_string(t.offset + t.nbytes) +
                 " but the file has " + std::to_string(m->size_));
  }
  // Prepared forms of its weights may be cached, and the file pages of a prepared weight released
  // (core/weight_cache.h). (The destructor unregisters; unregistering an unknown region is harmless.)
  std::vector<WeightExtent> extents;
  for (const TensorInfo& t : m->tensors_) extents.push_back({static_cast<size_t>(t.offset), static_cast<size_t>(t.nbytes)});
  register_weight_region(m->base_, m->size_, std::move(extents), prepared_store_path(st));
  const std::string identity = file_identity(st, "kokoro model v" + std::to_string(kModelVersion) + " finite");
  if (check == FiniteCheck::always || (check == FiniteCheck::once && !was_verified(path, identity))) {
    std::vector<float> buf(1 << 20);
    for (const TensorInfo& t : m->tensors_) {
      std::string io_error;
      const int64_t bad = scan_tensor(fd, t, buf, io_error);
      if (!io_error.empty()) throw fail("tensor " + t.name + ": read failed: " + io_error);
      if (bad >= 0) throw fail("tensor " + t.name + ": non-finite value at element " + std::to_string(bad));
    }
    m->scanned_finite_ = true;
    // Small files are cheap to scan again: only worth a record for files like the real model.
    if (m->size_ >= kRecordVerifiedFrom) record_verified(path, identity);
  }
  return m;
}

size_t ModelFile::persist_prepared_weights() const { return base_ ? kokoro::persist_prepared_weights(base_) : 0; }

void ModelFile::release_resident_pages() const {
  static const bool keep = [] {
    const char* e = std::getenv("KOKORO_KEEP_WEIGHT_PAGES");
    return e && *e && *e != '0';
  }();
  if (!base_ || keep) return;
  PageRuns mapped = mapped_page_runs(base_, size_);  // read before the lock: ~1 ms
  {
    std::lock_guard<std::mutex> lock(released_mutex_);
    madvise(const_cast<uint8_t*>(base_), size_, MADV_DONTNEED);
    merge_page_runs(released_, mapped);
  }
  release_prepared_store_pages(base_);
}

size_t ModelFile::restore_released_pages() const {
  static const bool off = [] {
    const char* e = std::getenv("KOKORO_RESTORE_WEIGHT_PAGES");
    return e && std::string(e) == "0";
  }();
  if (!base_ || off) return 0;
  PageRuns runs;
  {
    std::lock_guard<std::mutex> lock(released_mutex_);
    runs.swap(released_);
  }
  return map_page_runs_back(base_, runs) + restore_prepared_store_pages(base_);
}

ModelFile::~ModelFile() {
  if (!base_) return;
  unregister_weight_region(base_);  // drops the prepared weights before the addresses can be reused
  munmap(const_cast<uint8_t*>(base_), size_);
}

TensorView ModelFile::get(const std::string& name) const {
  auto it = index_.find(name);
  if (it == index_.end()) throw Error("model file " + path_ + ": missing tensor " + name);
  const TensorInfo& t = tensors_[it->second];
  if (t.dtype != DType::f32)
    throw Error("model file " + path_ + ": tensor " + name + " is stored as " + to_string(t.dtype) + ", not f32");
  return TensorView{reinterpret_cast<const float*>(base_ + t.offset), t.shape};
}

void ModelFile::read_floats(const std::string& name, const Shape& expected, float* out) const {
  auto it = index_.find(name);
  if (it == index_.end()) throw Error("model file " + path_ + ": missing tensor " + name);
  const TensorInfo& t = tensors_[it->second];
  if (t.shape != expected)
    throw Error("model file " + path_ + ": tensor " + name + " has shape " + shape_to_string(t.shape) + ", expected " +
                shape_to_string(expected));
  const int64_t n = shape_numel(t.shape);
  if (t.dtype == DType::f32) {
    std::memcpy(out, base_ + t.offset, n * sizeof(float));
  } else {
    f16_to_f32(reinterpret_cast<const uint16_t*>(base_ + t.offset), out, n);  // 64-byte aligned offset
  }
}

std::vector<float> ModelFile::get_floats(const std::string& name, const Shape& expected) const {
  std::vector<float> out(shape_numel(expected));
  read_floats(name, expected, out.data());
  return out;
}

TensorView ModelFile::get(const std::string& name, const Shape& expected) const {
  TensorView v = get(name);
  if (v.shape != expected)
    throw Error("model file " + path_ + ": tensor " + name + " has shape " + shape_to_string(v.shape) +
                ", expected " + shape_to_string(expected));
  return v;
}

void ModelWriter::add(const std::string& name, const Shape& shape, const float* data, DType dtype) {
  if (has(name)) throw Error("duplicate tensor " + name);
  const int64_t n = shape_numel(shape);
  for (int64_t i = 0; i < n; ++i)
    if (!std::isfinite(data[i])) throw Error("tensor " + name + ": non-finite value at element " + std::to_string(i));
  std::vector<uint8_t> bytes(n * dtype_size(dtype));
  if (dtype == DType::f32) {
    std::memcpy(bytes.data(), data, bytes.size());
  } else {
    auto* h = reinterpret_cast<uint16_t*>(bytes.data());
    for (int64_t i = 0; i < n; ++i) {
      h[i] = f16_bits(data[i]);
      if ((h[i] & 0x7c00u) == 0x7c00u)
        throw Error("tensor " + name + ": value " + std::to_string(data[i]) + " at element " + std::to_string(i) +
                    " is beyond f16's range");
    }
  }
  names_.push_back(name);
  shapes_.push_back(shape);
  dtypes_.push_back(dtype);
  data_.push_back(std::move(bytes));
}

bool ModelWriter::has(const std::string& name) const {
  for (const auto& n : names_)
    if (n == name) return true;
  return false;
}

void ModelWriter::write(const std::string& path) const {
  // The header's size depends on the offsets it lists: lay the data out assuming a header of bounded size,
  // then pad the header JSON with spaces up to that size.
  nlohmann::json tensors = nlohmann::json::array();
  for (size_t i = 0; i < names_.size(); ++i)
    tensors.push_back({{"name", names_[i]}, {"dtype", to_string(dtypes_[i])}, {"shape", shapes_[i]}, {"offset", 0},
                       {"nbytes", data_[i].size()}});
  nlohmann::json header = {{"config", config_}, {"tensors", tensors}, {"source", source_},
                           {"converter", "kokoro-convert 1"}};
  // Offsets are at most 20 digits; reserve room for every one of them.
  const uint64_t header_budget = header.dump().size() + 24 * names_.size() + 64;
  uint64_t offset = align_up(kPrefixSize + header_budget);
  for (size_t i = 0; i < names_.size(); ++i) {
    header["tensors"][i]["offset"] = offset;
    offset = align_up(offset + data_[i].size());
  }
  std::string text = header.dump();
  if (text.size() > header_budget) throw Error("internal error: model header exceeds its budget");
  text.append(header_budget - text.size(), ' ');

  const std::string tmp = path + ".tmp";
  {
    std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
    if (!out) throw Error("cannot write " + tmp);
    out.write(kModelMagic, 8);
    const uint32_t version = kModelVersion, reserved = 0;
    const uint64_t hlen = text.size();
    out.write(reinterpret_cast<const char*>(&version), 4);
    out.write(reinterpret_cast<const char*>(&reserved), 4);
    out.write(reinterpret_cast<const char*>(&hlen), 8);
    out.write(text.data(), static_cast<std::streamsize>(text.size()));
    uint64_t pos = kPrefixSize + text.size();
    const std::vector<char> zeros(kModelAlignment, 0);
    for (size_t i = 0; i < names_.size(); ++i) {
      const uint64_t at = header["tensors"][i]["offset"].get<uint64_t>();
      out.write(zeros.data(), static_cast<std::streamsize>(at - pos));
      out.write(reinterpret_cast<const char*>(data_[i].data()), static_cast<std::streamsize>(data_[i].size()));
      pos = at + data_[i].size();
    }
    if (!out.flush()) throw Error("write failed: " + tmp);
  }
  if (std::rename(tmp.c_str(), path.c_str()) != 0) throw Error("cannot rename " + tmp + " to " + path);
}

}  // namespace kokoro
