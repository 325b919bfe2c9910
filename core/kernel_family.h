// Which kernel family this process runs: the compute library (core, vocoder, acoustic) is built once per
// x86-64 level and the dynamic loader picks the variant for the CPU (docs/architecture.md, "Kernel families").
// The answer is fixed when the variant is compiled, so it names what actually got loaded.
#pragma once
#include <string>

#include "core/tensor.h"

namespace kokoro {

// "x86-64", "x86-64-v3" (AVX2+FMA), "x86-64-v4" (AVX-512), with "+bf16" when the AVX512-BF16 kernels are
// compiled in (they run only where bf16_supported()); a native build says so: "native: x86-64-v4+bf16".
const char* kernel_family();

// The x86-64 level alone ("x86-64", "x86-64-v2", "x86-64-v3" or "x86-64-v4"): what KOKORO_KERNELS names.
const char* kernel_level();

// KOKORO_KERNELS asks tests and benchmarks to prove which family they run: a level (x86-64, x86-64-v2,
// x86-64-v3, x86-64-v4) or its alias (baseline, avx2, avx512). The variant is chosen by the loader
// (LD_LIBRARY_PATH=<build>/lib/kernels/<level> forces one), so the request cannot change it; this throws
// kokoro::Error when the loaded family is not the requested one, or the name is unknown. Unset: no check.
void check_requested_kernel_family();

// c = a * b with this family's Eigen GEMM: what kokoro-bench's "GEMM peak" measures, so that the peak is the
// loaded variant's and not that of the caller's own compile flags.
void family_gemm(const RowMatrix& a, const RowMatrix& b, RowMatrix& c);

}  // namespace kokoro
