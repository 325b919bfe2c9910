#include "core/verified_files.h"

#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <functional>
#include <sstream>

#include "core/assets.h"

namespace kokoro {

namespace fs = std::filesystem;

namespace {

// One record file per checked path, named by a hash of its absolute path.
std::string record_path(const std::string& path) {
  const std::string dir = user_cache_dir();
  if (dir.empty()) return "";
  std::error_code ec;
  const fs::path abs = fs::absolute(path, ec);
  const std::string key = ec ? path : abs.lexically_normal().string();
  char name[32];
  std::snprintf(name, sizeof name, "%016zx", std::hash<std::string>{}(key));
  return dir + "/verified/" + name;
}

}  // namespace

std::string file_identity(const struct stat& st, const std::string& what) {
  std::ostringstream s;
  s << what << " dev " << st.st_dev << " ino " << st.st_ino << " size " << st.st_size << " mtime "
    << st.st_mtim.tv_sec << "." << st.st_mtim.tv_nsec << " ctime " << st.st_ctim.tv_sec << "." << st.st_ctim.tv_nsec;
  return s.str();
}

std::optional<std::string> verified_note(const std::string& path, const std::string& identity) {
  const std::string rec = record_path(path);
  if (rec.empty()) return std::nullopt;
  std::ifstream in(rec);
  std::string recorded_path, recorded_identity, note;
  if (!std::getline(in, recorded_path) || !std::getline(in, recorded_identity)) return std::nullopt;
  std::getline(in, note);
  std::error_code ec;
  if (recorded_identity != identity || recorded_path != fs::absolute(path, ec).lexically_normal().string())
    return std::nullopt;
  return note;
}

bool was_verified(const std::string& path, const std::string& identity) {
  return verified_note(path, identity).has_value();
}

void record_verified(const std::string& path, const std::string& identity, const std::string& note) {
  const std::string rec = record_path(path);
  if (rec.empty()) return;
  std::error_code ec;
  fs::create_directories(fs::path(rec).parent_path(), ec);
  const std::string tmp = rec + ".tmp" + std::to_string(::getpid());
  {
    std::ofstream out(tmp, std::ios::trunc);
    if (!out) return;
    out << fs::absolute(path, ec).lexically_normal().string() << "\n" << identity << "\n" << note << "\n";
    if (!out.flush()) {
      out.close();
      std::remove(tmp.c_str());
      return;
    }
  }
  if (std::rename(tmp.c_str(), rec.c_str()) != 0) std::remove(tmp.c_str());
}

}  // namespace kokoro
