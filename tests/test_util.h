// Helpers shared by tests: scratch directories, byte-level file edits, the message of an expected error, a
// watchdog that turns a hang into a loud failure.
#pragma once
#include <gtest/gtest.h>

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <unistd.h>
#include <vector>

#include "core/error.h"

namespace kokoro::test {

// A fresh directory under $TMPDIR, removed when the object goes out of scope.
class TempDir {
 public:
  TempDir() {
    std::string tmpl = (std::filesystem::temp_directory_path() / "kokoro-test-XXXXXX").string();
    if (!mkdtemp(tmpl.data())) std::abort();
    path_ = tmpl;
  }
  ~TempDir() {
    std::error_code ec;
    std::filesystem::remove_all(path_, ec);
  }
  std::string file(const std::string& name) const { return (std::filesystem::path(path_) / name).string(); }
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

inline std::vector<char> read_bytes(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::vector<char>((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
}

inline void write_bytes(const std::string& path, const std::vector<char>& bytes) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
}

// What kokoro::Error f throws says; a test failure (and "") when it throws nothing.
inline std::string error_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const Error& e) {
    return e.what();
  }
  ADD_FAILURE() << "no error";
  return "";
}

// Points the user cache (records of verified files) at a scratch directory for one test.
class ScratchCache {
 public:
  ScratchCache() {
    if (const char* old = std::getenv("XDG_CACHE_HOME")) old_ = old;
    setenv("XDG_CACHE_HOME", dir_.path().c_str(), 1);
  }
  ~ScratchCache() {
    if (old_)
      setenv("XDG_CACHE_HOME", old_->c_str(), 1);
    else
      unsetenv("XDG_CACHE_HOME");
  }

 private:
  TempDir dir_;
  std::optional<std::string> old_;
};

// Resident kB of the mapping that contains p (/proc/self/smaps), or -1 when it is not found.
inline long resident_kb_of_mapping(const void* p) {
  std::ifstream f("/proc/self/smaps");
  const auto a = reinterpret_cast<uintptr_t>(p);
  bool inside = false;
  for (std::string line; std::getline(f, line);) {
    unsigned long lo = 0, hi = 0;
    if (std::sscanf(line.c_str(), "%lx-%lx ", &lo, &hi) == 2 && line.find(':') > line.find(' ')) {
      inside = a >= lo && a < hi;
      continue;
    }
    if (inside && line.rfind("Rss:", 0) == 0) return std::strtol(line.c_str() + 4, nullptr, 10);
  }
  return -1;
}

// Aborts the process (failing the test loudly) if not disarmed within `seconds`: a hang must never look
// like a slow pass, and ctest's own timeout is much longer.
class Watchdog {
 public:
  Watchdog(double seconds, std::string what) : what_(std::move(what)) {
    thread_ = std::thread([this, seconds] {
      std::unique_lock<std::mutex> lock(m_);
      if (!cv_.wait_for(lock, std::chrono::duration<double>(seconds), [this] { return done_; })) {
        std::fprintf(stderr, "WATCHDOG: %s did not finish within %.1f s\n", what_.c_str(), seconds);
        std::fflush(stderr);
        std::abort();
      }
    });
  }
  ~Watchdog() {
    {
      std::lock_guard<std::mutex> lock(m_);
      done_ = true;
    }
    cv_.notify_all();
    thread_.join();
  }

 private:
  std::string what_;
  std::mutex m_;
  std::condition_variable cv_;
  bool done_ = false;
  std::thread thread_;
};

}  // namespace kokoro::test
