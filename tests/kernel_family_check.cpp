// Linked into the test binaries that ctest runs with a forced kernel family (label kernels): before any test,
// the loaded compute library must be the family KOKORO_KERNELS names, else every test of the binary fails.
// A forced run that silently loaded another variant would test that variant twice and call it coverage.
#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>

#include "core/error.h"
#include "core/kernel_family.h"

namespace {

class KernelFamilyCheck : public ::testing::Environment {
 public:
  void SetUp() override {
    try {
      kokoro::check_requested_kernel_family();
    } catch (const kokoro::Error& e) {
      FAIL() << e.what();
    }
    if (const char* env = std::getenv("KOKORO_KERNELS"))
      std::fprintf(stderr, "kernel family: %s (KOKORO_KERNELS=%s)\n", kokoro::kernel_family(), env);
  }
};

const ::testing::Environment* const registered = ::testing::AddGlobalTestEnvironment(new KernelFamilyCheck);

}  // namespace
