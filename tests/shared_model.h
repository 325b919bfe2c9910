// The real model (engine/model.h), opened once per test binary, for the tests that make sessions on it
// (test_sessions.cpp, test_text_stream.cpp). REQUIRE_MODEL(m) fails the test, naming the file, without it.
#pragma once
#include <gtest/gtest.h>

#include <memory>
#include <string>

#include "core/assets.h"
#include "engine/model.h"

namespace kokoro::test {

inline const std::shared_ptr<Model>& shared_model(std::string* error) {
  static std::string err;
  static const std::shared_ptr<Model> m = []() -> std::shared_ptr<Model> {
    try {
      ModelOptions o;
      o.model_path = default_model_path();
      o.assets_dir = find_assets_dir();
      return Model::open(o);
    } catch (const std::exception& e) {
      err = std::string(e.what()) + " (sessions need the real converted weights: scripts/fetch-assets)";
      return nullptr;
    }
  }();
  *error = err;
  return m;
}

}  // namespace kokoro::test

#define REQUIRE_MODEL(m)                                      \
  std::string model_error;                                    \
  const auto& m = ::kokoro::test::shared_model(&model_error); \
  ASSERT_TRUE(m) << model_error
