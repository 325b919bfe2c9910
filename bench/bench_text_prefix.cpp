// The text encoder of a sentence whose text streamed in (acoustic/text_encoder.h): computed whole at its end,
// against completed from the columns computed while its words arrived, alternated in one process on the
// real model, with the cost of each word's extend(). Tokens are synthetic (the arithmetic does not depend on
// which); words of 6 tokens arrive, the last one (`--last` tokens) and the end token come at the end.
//
//   build/bin/bench_text_prefix [tokens...]        (default 87 218 363: the paragraph corpus' sentences)
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "acoustic/text_encoder.h"
#include "bench/gemm_peak.h"
#include "core/assets.h"
#include "core/model_file.h"
#include "core/parallel.h"
#include "core/precision.h"

namespace {

using namespace kokoro;
using Clock = std::chrono::steady_clock;

double ms_since(Clock::time_point t0) { return std::chrono::duration<double, std::milli>(Clock::now() - t0).count(); }

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

}  // namespace

int main(int argc, char** argv) {
  int last = 8;
  std::vector<int> lengths;
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--last") == 0 && i + 1 < argc) last = std::atoi(argv[++i]);
    else lengths.push_back(std::atoi(argv[i]));
  }
  if (lengths.empty()) lengths = {87, 218, 363};
  try {
    set_precision(recommended_precision());
    const TextEncoder encoder(ModelFile::open(default_model_path()));
    // The acoustic model's kernel precision (acoustic/acoustic_model.cpp): int8 (its LSTMs in 8 bits), bf16 for
    // bf16-all, else fp32 (which computes nothing ahead).
    const Precision p = precision();
    const ScopedKernelPrecision kernels(p == Precision::int8       ? Precision::int8
                                        : p == Precision::bf16_all ? Precision::bf16
                                                                   : Precision::fp32);
    const bench::GemmPeak peak = bench::measure_gemm_peak(num_threads());  // the machine's speed in this run
    std::printf("precision %s, %d threads, GEMM peak %.1f GFLOP/s on 1 thread, %.1f on %d; words of 6 tokens, the "
                "last of %d\n%s",
                precision_name(precision()), num_threads(), peak.gflops_1, peak.gflops_n, peak.threads, last,
                bench::contended_warning(peak).c_str());
    for (const int T : lengths) {
      std::vector<int64_t> ids(static_cast<size_t>(T));
      for (int i = 0; i < T; ++i) ids[static_cast<size_t>(i)] = i == 0 || i == T - 1 ? 0 : 1 + (i * 37) % 170;
      std::vector<double> whole, ahead, per_word;
      for (int rep = 0; rep < 21; ++rep) {
        TextEncoderPrefix prefix;
        double extend_ms = 0;
        int words = 0;
        for (int n = 6; n <= T - 1 - last; n += 6, ++words) {
          const auto t0 = Clock::now();
          encoder.extend(std::vector<int64_t>(ids.begin(), ids.begin() + n), prefix);
          extend_ms += ms_since(t0);
        }
        Tensor a, b;
        auto t0 = Clock::now();
        encoder.forward(ids, a);
        whole.push_back(ms_since(t0));
        t0 = Clock::now();
        encoder.forward(ids, b, &prefix);
        ahead.push_back(ms_since(t0));
        per_word.push_back(words ? extend_ms / words : 0);
        if (a.numel() != b.numel() || std::memcmp(a.data(), b.data(), sizeof(float) * static_cast<size_t>(a.numel())) != 0) {
          std::fprintf(stderr, "bench_text_prefix: %d tokens: the completed prefix differs from the whole\n", T);
          return 1;
        }
      }
      std::printf("%4d tokens: whole %.2f ms, completed from the prefix %.2f ms (x %.2f), extend per word %.3f ms (medians of 21)\n",
                  T, median(whole), median(ahead), median(ahead) / median(whole), median(per_word));
    }
  } catch (const std::exception& e) {
    std::fprintf(stderr, "bench_text_prefix: %s\n", e.what());
    return 1;
  }
  return 0;
}
