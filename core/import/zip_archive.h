// Read-only access to a zip archive through libzip, with the size checks a hostile file needs: an entry is
// only read if its stated sizes are consistent with the archive's real size, so a few corrupt bytes cannot
// make us allocate gigabytes; CRCs are verified on the way.
#pragma once
#include <cstddef>
#include <cstdint>
#include <string>
#include <unordered_map>
#include <vector>

struct zip;

namespace kokoro::ckpt {

class ZipArchive {
 public:
  // `label` names the archive in error messages ("checkpoint /x/kokoro-v1_0.pth").
  static ZipArchive open_file(const std::string& path, const std::string& label);
  // The bytes must outlive the archive.
  static ZipArchive open_memory(const void* data, size_t size, const std::string& label);
  ~ZipArchive();
  ZipArchive(ZipArchive&& other) noexcept;
  ZipArchive& operator=(ZipArchive&&) = delete;
  ZipArchive(const ZipArchive&) = delete;

  const std::string& label() const { return label_; }
  const std::vector<std::string>& entry_names() const { return names_; }
  bool has(const std::string& entry) const;
  // The entry's uncompressed size as recorded in the archive (not yet verified).
  uint64_t entry_size(const std::string& entry) const;
  // The whole entry, stored or deflated. Throws Error naming the archive and entry if it is missing,
  // larger than max_size, inconsistent with the archive size, encrypted, otherwise compressed, short or
  // fails its CRC.
  std::vector<uint8_t> read(const std::string& entry, uint64_t max_size) const;

 private:
  ZipArchive(zip* handle, uint64_t archive_size, std::string label);
  int64_t index_of(const std::string& entry) const;

  zip* handle_ = nullptr;
  uint64_t archive_size_ = 0;
  std::string label_;
  std::vector<std::string> names_;
  std::unordered_map<std::string, size_t> index_;  // first entry of each name
};

}  // namespace kokoro::ckpt
