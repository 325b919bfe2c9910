#include "core/precision.h"

#include <atomic>
#include <cstdlib>

#include "core/error.h"
#include "core/int8_gemm.h"

namespace kokoro {

namespace {

void require_supported(Precision p, const std::string& origin) {
  if (p != Precision::fp32 && !bf16_supported())
    throw Error(origin + ": bf16 needs AVX512-BF16 (avx512_bf16 in /proc/cpuinfo, and the x86-64-v4 kernels or a "
                "-march=native build on such a CPU); use fp32");
  if (p == Precision::int8 && !int8_precision_supported())
    throw Error(origin + ": int8 needs AVX512-VNNI (avx512_vnni in /proc/cpuinfo) beside AVX512-BF16; use bf16-all");
}

Precision initial_precision() {
  const char* env = std::getenv("KOKORO_PRECISION");
  if (!env || !*env) return Precision::fp32;
  const Precision p = parse_precision(env, "KOKORO_PRECISION");
  require_supported(p, "KOKORO_PRECISION=" + std::string(env));
  return p;
}

std::atomic<int>& current() {
  static std::atomic<int> p{static_cast<int>(initial_precision())};
  return p;
}

}  // namespace

bool bf16_supported() {
#if defined(__AVX512BF16__) && defined(__AVX512F__)
  static const bool cpu = [] {
    __builtin_cpu_init();
    return __builtin_cpu_supports("avx512bf16") != 0;
  }();
  return cpu;
#else
  return false;
#endif
}

bool int8_precision_supported() { return bf16_supported() && int8_supported(); }

Precision parse_precision(const std::string& name, const std::string& what) {
  if (name == "fp32") return Precision::fp32;
  if (name == "bf16") return Precision::bf16;
  if (name == "bf16-all") return Precision::bf16_all;
  if (name == "int8") return Precision::int8;
  throw Error(what + ": unknown precision '" + name + "' (expected fp32, bf16, bf16-all or int8)");
}

const char* precision_name(Precision p) {
  switch (p) {
    case Precision::bf16: return "bf16";
    case Precision::bf16_all: return "bf16-all";
    case Precision::int8: return "int8";
    default: return "fp32";
  }
}

Precision recommended_precision() {
  if (int8_precision_supported()) return Precision::int8;
  return bf16_supported() ? Precision::bf16_all : Precision::fp32;
}

void set_precision(Precision p) {
  require_supported(p, "set_precision");
  current().store(static_cast<int>(p));
}

Precision precision() { return static_cast<Precision>(current().load(std::memory_order_relaxed)); }

namespace {
thread_local int t_override = -1;  // -1: none
}

Precision kernel_precision() { return t_override >= 0 ? static_cast<Precision>(t_override) : precision(); }

ScopedKernelPrecision::ScopedKernelPrecision(Precision p) : saved_(t_override) { t_override = static_cast<int>(p); }
ScopedKernelPrecision::~ScopedKernelPrecision() { t_override = saved_; }

}  // namespace kokoro
