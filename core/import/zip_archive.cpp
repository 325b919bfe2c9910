#include "core/import/zip_archive.h"

#include <sys/stat.h>
#include <zip.h>

#include <cerrno>
#include <cstring>

#include "core/error.h"

namespace kokoro::ckpt {

namespace {

// Deflate cannot expand data by more than about 1032:1; a larger stated ratio is a lie (or a zip bomb).
constexpr uint64_t kMaxDeflateRatio = 1032;

std::string libzip_message(int code) {
  zip_error_t e;
  zip_error_init_with_code(&e, code);
  std::string msg = zip_error_strerror(&e);
  zip_error_fini(&e);
  return msg;
}

}  // namespace

ZipArchive::ZipArchive(zip* handle, uint64_t archive_size, std::string label)
    : handle_(handle), archive_size_(archive_size), label_(std::move(label)) {
  const zip_int64_t n = zip_get_num_entries(handle_, 0);
  if (n < 0) {
    zip_discard(handle_);
    handle_ = nullptr;
    throw Error(label_ + ": cannot list the zip entries");
  }
  names_.reserve(static_cast<size_t>(n));
  for (zip_int64_t i = 0; i < n; ++i) {
    const char* name = zip_get_name(handle_, static_cast<zip_uint64_t>(i), ZIP_FL_ENC_RAW);
    names_.emplace_back(name ? name : "");
    index_.emplace(names_.back(), names_.size() - 1);
  }
}

ZipArchive::ZipArchive(ZipArchive&& other) noexcept
    : handle_(other.handle_),
      archive_size_(other.archive_size_),
      label_(std::move(other.label_)),
      names_(std::move(other.names_)),
      index_(std::move(other.index_)) {
  other.handle_ = nullptr;
}

ZipArchive::~ZipArchive() {
  if (handle_) zip_discard(handle_);
}

ZipArchive ZipArchive::open_file(const std::string& path, const std::string& label) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) throw Error(label + ": cannot open: " + std::strerror(errno));
  if (!S_ISREG(st.st_mode)) throw Error(label + ": not a regular file");
  if (st.st_size == 0) throw Error(label + ": empty file");
  int code = 0;
  zip* z = zip_open(path.c_str(), ZIP_RDONLY | ZIP_CHECKCONS, &code);
  if (!z) {
    if (code == ZIP_ER_NOZIP) throw Error(label + ": not a zip archive");
    throw Error(label + ": cannot open as zip: " + libzip_message(code));
  }
  return ZipArchive(z, static_cast<uint64_t>(st.st_size), label);
}

ZipArchive ZipArchive::open_memory(const void* data, size_t size, const std::string& label) {
  if (size == 0) throw Error(label + ": empty file");
  zip_error_t error;
  zip_error_init(&error);
  zip_source_t* src = zip_source_buffer_create(data, size, 0, &error);
  if (!src) {
    const std::string msg = zip_error_strerror(&error);
    zip_error_fini(&error);
    throw Error(label + ": " + msg);
  }
  zip* z = zip_open_from_source(src, ZIP_RDONLY | ZIP_CHECKCONS, &error);
  if (!z) {
    zip_source_free(src);
    const int code = zip_error_code_zip(&error);
    const std::string msg = zip_error_strerror(&error);
    zip_error_fini(&error);
    if (code == ZIP_ER_NOZIP) throw Error(label + ": not a zip archive");
    throw Error(label + ": cannot open as zip: " + msg);
  }
  zip_error_fini(&error);
  return ZipArchive(z, size, label);
}

int64_t ZipArchive::index_of(const std::string& entry) const {
  auto it = index_.find(entry);
  return it == index_.end() ? -1 : static_cast<int64_t>(it->second);
}

bool ZipArchive::has(const std::string& entry) const { return index_of(entry) >= 0; }

uint64_t ZipArchive::entry_size(const std::string& entry) const {
  const int64_t index = index_of(entry);
  if (index < 0) throw Error(label_ + ": missing entry " + entry);
  zip_stat_t st;
  zip_stat_init(&st);
  if (zip_stat_index(handle_, static_cast<zip_uint64_t>(index), 0, &st) != 0 || !(st.valid & ZIP_STAT_SIZE))
    throw Error(label_ + ": entry " + entry + ": cannot read its size");
  return st.size;
}

std::vector<uint8_t> ZipArchive::read(const std::string& entry, uint64_t max_size) const {
  auto fail = [&](const std::string& what) { return Error(label_ + ": entry " + entry + ": " + what); };
  const int64_t index = index_of(entry);
  if (index < 0) throw Error(label_ + ": missing entry " + entry);
  zip_stat_t st;
  zip_stat_init(&st);
  if (zip_stat_index(handle_, static_cast<zip_uint64_t>(index), 0, &st) != 0) throw fail("cannot stat");
  const zip_uint64_t needed = ZIP_STAT_SIZE | ZIP_STAT_COMP_SIZE | ZIP_STAT_COMP_METHOD;
  if ((st.valid & needed) != needed) throw fail("sizes missing from the directory");
  if ((st.valid & ZIP_STAT_ENCRYPTION_METHOD) && st.encryption_method != ZIP_EM_NONE) throw fail("encrypted");
  if (st.size > max_size)
    throw fail(std::to_string(st.size) + " bytes is more than the " + std::to_string(max_size) + " expected");
  if (st.comp_size > archive_size_)
    throw fail("compressed size " + std::to_string(st.comp_size) + " exceeds the archive's " +
               std::to_string(archive_size_) + " bytes");
  if (st.comp_method == ZIP_CM_STORE) {
    if (st.size != st.comp_size) throw fail("stored entry whose sizes differ (corrupt directory)");
  } else if (st.comp_method == ZIP_CM_DEFLATE) {
    if (st.size / kMaxDeflateRatio > st.comp_size + 1)
      throw fail("claims " + std::to_string(st.size) + " bytes from " + std::to_string(st.comp_size) +
                 " compressed (impossible for deflate)");
  } else {
    throw fail("compression method " + std::to_string(st.comp_method) + " is not supported (stored or deflate only)");
  }

  zip_file_t* f = zip_fopen_index(handle_, static_cast<zip_uint64_t>(index), 0);
  if (!f) throw fail(std::string("cannot open: ") + zip_strerror(handle_));
  std::vector<uint8_t> bytes(static_cast<size_t>(st.size));
  uint64_t got = 0;
  std::string error;
  while (got < st.size) {
    const zip_int64_t n = zip_fread(f, bytes.data() + got, st.size - got);
    if (n < 0) {
      error = zip_file_strerror(f);
      break;
    }
    if (n == 0) {
      error = "ends after " + std::to_string(got) + " of " + std::to_string(st.size) + " bytes";
      break;
    }
    got += static_cast<uint64_t>(n);
  }
  if (error.empty()) {
    // Reading past the end is what makes libzip verify the CRC (and notice surplus data).
    uint8_t extra;
    const zip_int64_t n = zip_fread(f, &extra, 1);
    if (n < 0) error = zip_file_strerror(f);
    else if (n > 0) error = "holds more data than its stated " + std::to_string(st.size) + " bytes";
  }
  zip_fclose(f);
  if (!error.empty()) throw fail(error);
  return bytes;
}

}  // namespace kokoro::ckpt
