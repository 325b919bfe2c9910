// Arithmetic precision of the heaviest products, chosen at run time. fp32 is the default and the only one
// the golden tests check; bf16 is an opt-in speed option (AVX512-BF16 dot products with fp32 accumulation,
// core/bf16_gemm.h) whose fidelity against fp32 is measured in docs/benchmarks.md.
//
// The default comes from KOKORO_PRECISION (fp32 | bf16) when set. Asking for bf16 on a CPU (or a build)
// without AVX512-BF16 throws kokoro::Error instead of silently running fp32.
#pragma once
#include <string>

namespace kokoro {

enum class Precision { fp32, bf16 };

// True when this binary was compiled with AVX512-BF16 and the CPU reports it.
bool bf16_supported();

// "fp32" / "bf16" -> Precision; anything else throws, naming `what` (e.g. "--precision").
Precision parse_precision(const std::string& name, const std::string& what);
const char* precision_name(Precision p);

// Takes effect at the next kernel call. Throws when bf16 is asked for and not supported.
void set_precision(Precision p);
// The current setting; the first call reads KOKORO_PRECISION (throws on an unknown or unsupported value).
Precision precision();

}  // namespace kokoro
