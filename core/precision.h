// Arithmetic precision of the heaviest products, chosen at run time. fp32 is the default and the only one
// the golden tests check; bf16 is an opt-in speed option (AVX512-BF16 dot products with fp32 accumulation,
// core/bf16_gemm.h) whose fidelity against fp32 is measured in docs/benchmarks.md.
//
// The default comes from KOKORO_PRECISION (fp32 | bf16) when set. Asking for bf16 on a CPU (or a build)
// without AVX512-BF16 throws kokoro::Error instead of silently running fp32.
#pragma once
#include <string>

namespace kokoro {

// fp32:     everything in fp32 (the reference's arithmetic; golden-tested).
// bf16:     the vocoder's convolutions (decoder + generator) in bf16; the acoustic model stays fp32, so
//           durations and F0 are exactly the fp32 ones and only the vocoder's own rounding shows.
// bf16_all: also the acoustic model (ALBERT's linear layers, the prosody convolutions): a faster text side,
//           but a duration can move by a frame now and then (durations are rounded sums).
// int8:     bf16_all, and ALBERT's linear layers in 8-bit integers (core/int8_gemm.h, AVX512-VNNI: twice
//           bf16's rate, ALBERT ~1.6x faster): the largest piece of a long sentence's first audio. Coarser
//           than bf16 (8 bits relative to a row's range, not to each value), so durations move by a frame
//           ~5x as often as in bf16_all (docs/benchmarks.md). The acoustic model's LSTMs too (their input
//           projections and recurrent products, core/lstm.h: ~25 ms of a 63-word sentence's ~150); the
//           other kernels treat it as bf16.
enum class Precision { fp32, bf16, bf16_all, int8 };

// True when this binary was compiled with AVX512-BF16 and the CPU reports it.
bool bf16_supported();
// True when int8 can run: bf16_supported() and the VNNI kernels (int8_supported(), core/int8_gemm.h).
bool int8_precision_supported();

// "fp32" / "bf16" / "bf16-all" / "int8" -> Precision; anything else throws, naming `what` (e.g. "--precision").
Precision parse_precision(const std::string& name, const std::string& what);
const char* precision_name(Precision p);

// The programs' default (kokoro-say, kokoro-jack, sd_kokoro, the C API, kokoro-bench) when neither an option
// nor KOKORO_PRECISION names one: int8 where the CPU has AVX512-BF16 and AVX512-VNNI, else bf16_all where it
// has AVX512-BF16, else fp32. Both are measured transparent to a listener (docs/benchmarks.md: the quality
// corpus' transcripts and DNSMOS as fp32's; durations move by a frame in some files) and int8 takes ~5 ms
// (short sentences) to 25-50 ms (50 words) off first audio. The library's own default stays fp32, the reference.
Precision recommended_precision();

// Takes effect at the next kernel call. Throws when bf16 is asked for and not supported.
void set_precision(Precision p);
// The current setting; the first call reads KOKORO_PRECISION (throws on an unknown or unsupported value).
Precision precision();

// What the kernels of the calling thread use now: the setting, unless a ScopedKernelPrecision overrides it.
// Kernels only ask whether it is fp32 (bf16 and bf16_all mean the same to a kernel).
Precision kernel_precision();

// Overrides kernel_precision() on this thread for its lifetime (the acoustic model runs its kernels in
// fp32 unless the setting is bf16_all). Kernels decide on their calling thread, before any parallel task.
class ScopedKernelPrecision {
 public:
  explicit ScopedKernelPrecision(Precision p);
  ~ScopedKernelPrecision();
  ScopedKernelPrecision(const ScopedKernelPrecision&) = delete;
  ScopedKernelPrecision& operator=(const ScopedKernelPrecision&) = delete;

 private:
  int saved_;
};

}  // namespace kokoro
