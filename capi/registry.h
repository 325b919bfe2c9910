// The C API's registries of live handles (capi/kokoro.cpp): a handle passed back after it was closed, or
// never returned by this library, is looked up here and refused, never dereferenced.
#pragma once
#include <map>
#include <memory>
#include <mutex>

namespace kokoro::capi {

// A set of live handles of one kind.
template <typename T>
class Registry {
 public:
  void add(const std::shared_ptr<T>& p) {
    std::lock_guard<std::mutex> lock(mutex_);
    live_.emplace(p.get(), p);
  }
  std::shared_ptr<T> find(const T* handle) {
    if (!handle) return nullptr;
    std::lock_guard<std::mutex> lock(mutex_);
    auto it = live_.find(handle);
    return it == live_.end() ? nullptr : it->second;
  }
  std::shared_ptr<T> take(const T* handle) {
    std::lock_guard<std::mutex> lock(mutex_);
    auto it = live_.find(handle);
    if (it == live_.end()) return nullptr;
    std::shared_ptr<T> p = std::move(it->second);
    live_.erase(it);
    return p;
  }

 private:
  std::mutex mutex_;
  std::map<const T*, std::shared_ptr<T>> live_;
};

}  // namespace kokoro::capi
