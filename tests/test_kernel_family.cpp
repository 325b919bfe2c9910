// kokoro::kernel_family() names what this process loaded and KOKORO_KERNELS checks it (core/kernel_family.h).
#include <gtest/gtest.h>

#include <cstdlib>
#include <string>

#include "core/error.h"
#include "core/kernel_family.h"
#include "core/precision.h"

namespace {

// Sets an environment variable for one scope, restoring the old value.
class ScopedEnv {
 public:
  ScopedEnv(const char* name, const char* value) : name_(name) {
    if (const char* old = std::getenv(name)) old_ = old, had_ = true;
    setenv(name, value, 1);
  }
  ~ScopedEnv() { had_ ? setenv(name_, old_.c_str(), 1) : unsetenv(name_); }

 private:
  const char* name_;
  std::string old_;
  bool had_ = false;
};

TEST(KernelFamily, NamesALevelThatMatchesTheCompiledIsa) {
  const std::string family = kokoro::kernel_family();
  const std::string level = kokoro::kernel_level();
  EXPECT_NE(family.find(level), std::string::npos) << family;
  // The bf16 kernels are in the family name exactly when this library can run them on some CPU.
  if (kokoro::bf16_supported()) {
    EXPECT_NE(family.find("+bf16"), std::string::npos) << family;
  }
  if (level != "x86-64-v4") {
    EXPECT_FALSE(kokoro::bf16_supported()) << family;
  }
}

TEST(KernelFamily, RequestOfTheLoadedLevelPassesAnyOtherThrows) {
  const std::string level = kokoro::kernel_level();
  {
    ScopedEnv env("KOKORO_KERNELS", level.c_str());
    EXPECT_NO_THROW(kokoro::check_requested_kernel_family());
  }
  const char* other = level == "x86-64-v3" ? "avx512" : "avx2";
  ScopedEnv env("KOKORO_KERNELS", other);
  try {
    kokoro::check_requested_kernel_family();
    FAIL() << "KOKORO_KERNELS=" << other << " accepted by " << kokoro::kernel_family();
  } catch (const kokoro::Error& e) {
    EXPECT_NE(std::string(e.what()).find(kokoro::kernel_family()), std::string::npos) << e.what();
  }
}

TEST(KernelFamily, UnknownRequestIsAnError) {
  ScopedEnv env("KOKORO_KERNELS", "sse9");
  EXPECT_THROW(kokoro::check_requested_kernel_family(), kokoro::Error);
}

TEST(KernelFamily, FamilyGemmIsTheProduct) {
  kokoro::RowMatrix a(2, 3), b(3, 2), c;
  a << 1, 2, 3, 4, 5, 6;
  b << 1, 0, 0, 1, 1, 1;
  kokoro::family_gemm(a, b, c);
  kokoro::RowMatrix expected(2, 2);
  expected << 4, 5, 10, 11;
  EXPECT_EQ(c, expected);
}

}  // namespace
