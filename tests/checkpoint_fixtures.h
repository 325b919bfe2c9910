// The checkpoint fixtures written by tools/fixtures/make_checkpoint_fixtures.py with real torch and numpy:
// tests/data/checkpoints/*.pth|.pt|.npz plus expected.json / expected.f32, the values torch itself reports.
#pragma once
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <cstring>
#include <fstream>
#include <map>
#include <stdexcept>
#include <string>
#include <vector>

#include "core/import/state_dict.h"

namespace kokoro::test {

inline std::string checkpoint_fixture(const std::string& name) {
  return std::string(KOKORO_SOURCE_DIR) + "/tests/data/checkpoints/" + name;
}

// A missing or unreadable fixture throws, which fails the test that asked for it.
class ExpectedCheckpoints {
 public:
  ExpectedCheckpoints() {
    std::ifstream index(checkpoint_fixture("expected.json"));
    if (!index) throw std::runtime_error("missing fixture " + checkpoint_fixture("expected.json"));
    meta_ = nlohmann::json::parse(index);
    std::ifstream blob(checkpoint_fixture("expected.f32"), std::ios::binary);
    if (!blob) throw std::runtime_error("missing fixture " + checkpoint_fixture("expected.f32"));
    blob.seekg(0, std::ios::end);
    values_.resize(static_cast<size_t>(blob.tellg()) / sizeof(float));
    blob.seekg(0);
    blob.read(reinterpret_cast<char*>(values_.data()), static_cast<std::streamsize>(values_.size() * sizeof(float)));
  }

  // section: "tensors" (what the reader must return) or "folded" (torch's weight-norm .weight).
  StateDict get(const std::string& file, const std::string& section = "tensors") const {
    StateDict out;
    for (const auto& [name, e] : meta_.at("files").at(file).at(section).items()) {
      LoadedTensor t;
      t.shape = e.at("shape").get<Shape>();
      t.source_dtype = e.at("dtype").get<std::string>();
      const size_t offset = e.at("offset").get<size_t>(), n = static_cast<size_t>(shape_numel(t.shape));
      if (offset + n > values_.size()) throw std::runtime_error("expected.f32 too short for " + file + " " + name);
      t.data.assign(values_.begin() + offset, values_.begin() + offset + n);
      out[name] = std::move(t);
    }
    return out;
  }

 private:
  nlohmann::json meta_;
  std::vector<float> values_;
};

// Bitwise equality (NaN payloads and signed zeros included).
inline bool same_bits(const std::vector<float>& a, const std::vector<float>& b) {
  return a.size() == b.size() && (a.empty() || std::memcmp(a.data(), b.data(), a.size() * sizeof(float)) == 0);
}

inline bool same_state_dict(const StateDict& a, const StateDict& b) {
  if (a.size() != b.size()) return false;
  for (const auto& [name, t] : a) {
    auto it = b.find(name);
    if (it == b.end() || it->second.shape != t.shape || it->second.source_dtype != t.source_dtype ||
        !same_bits(it->second.data, t.data))
      return false;
  }
  return true;
}

// Same names, shapes and source dtypes, and bit-identical values; reports every difference.
inline void expect_bit_exact(const StateDict& actual, const StateDict& expected, const std::string& file) {
  for (const auto& [name, t] : expected)
    EXPECT_TRUE(actual.count(name)) << file << ": missing " << name;
  for (const auto& [name, t] : actual) {
    auto it = expected.find(name);
    if (it == expected.end()) {
      ADD_FAILURE() << file << ": unexpected tensor " << name;
      continue;
    }
    EXPECT_EQ(t.shape, it->second.shape) << file << " " << name;
    EXPECT_EQ(t.source_dtype, it->second.source_dtype) << file << " " << name;
    EXPECT_TRUE(same_bits(t.data, it->second.data)) << file << " " << name << ": values differ from torch's";
  }
}

}  // namespace kokoro::test
