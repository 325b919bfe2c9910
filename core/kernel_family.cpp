#include "core/kernel_family.h"

#include <cstdlib>
#include <cstring>

#include "core/error.h"

#ifndef KOKORO_KERNEL_VARIANT
#error "kernel_family.cpp is compiled once per kernel variant (cmake/KokoroKernels.cmake sets KOKORO_KERNEL_VARIANT)"
#endif

namespace kokoro {

namespace {

// From the compiler's own ISA macros, so that a native build names what -march=native gave it.
constexpr const char* compiled_level() {
#if defined(__AVX512F__) && defined(__AVX512BW__) && defined(__AVX512DQ__) && defined(__AVX512VL__)
  return "x86-64-v4";
#elif defined(__AVX2__) && defined(__FMA__) && defined(__BMI2__)
  return "x86-64-v3";
#elif defined(__SSE4_2__) && defined(__POPCNT__)
  return "x86-64-v2";
#else
  return "x86-64";
#endif
}

// The bf16 kernel files get -mavx512bf16 in the variants that have it (KOKORO_BF16_KERNELS); this file
// itself does not, so it asks CMake's answer rather than __AVX512BF16__ (which only the native build sets
// everywhere).
constexpr bool compiled_bf16() {
#if defined(__AVX512BF16__) || defined(KOKORO_BF16_KERNELS)
  return true;
#else
  return false;
#endif
}

std::string family_name() {
  std::string name = compiled_level();
  if (compiled_bf16()) name += "+bf16";
  if (std::strcmp(KOKORO_KERNEL_VARIANT, "native") == 0) name = "native: " + name;
  return name;
}

const char* level_of_request(const std::string& request) {
  if (request == "baseline" || request == "x86-64") return "x86-64";
  if (request == "x86-64-v2") return "x86-64-v2";
  if (request == "avx2" || request == "x86-64-v3") return "x86-64-v3";
  if (request == "avx512" || request == "x86-64-v4") return "x86-64-v4";
  return nullptr;
}

}  // namespace

const char* kernel_family() {
  static const std::string name = family_name();
  return name.c_str();
}

const char* kernel_level() { return compiled_level(); }

void check_requested_kernel_family() {
  const char* env = std::getenv("KOKORO_KERNELS");
  if (!env || !*env) return;
  const char* level = level_of_request(env);
  if (!level)
    throw Error("KOKORO_KERNELS=" + std::string(env) +
                ": unknown kernel family (x86-64, x86-64-v2, x86-64-v3, x86-64-v4, or baseline, avx2, avx512)");
  if (std::strcmp(level, kernel_level()) != 0)
    throw Error("KOKORO_KERNELS=" + std::string(env) + " asks for " + level + " kernels but the loaded compute " +
                "library is " + kernel_family() + " (force one with LD_LIBRARY_PATH=<build>/lib/kernels/" + level +
                ")");
}

void family_gemm(const RowMatrix& a, const RowMatrix& b, RowMatrix& c) { c.noalias() = a * b; }

}  // namespace kokoro
