#include "core/onednn_matmul.h"

#include <dnnl.hpp>
#include <omp.h>

#include <map>
#include <memory>
#include <mutex>
#include <unordered_map>
#include <tuple>
#include <vector>

#include "core/error.h"

namespace kokoro {

namespace {

using dnnl::memory;

// Never destroyed: worker threads' streams may outlive function-local statics at exit.
dnnl::engine& cpu_engine() {
  static auto* engine = new dnnl::engine(dnnl::engine::kind::cpu, 0);
  return *engine;
}

// Products run on the calling thread only (see the header for why).
void keep_openmp_single_threaded() {
  thread_local const bool done = [] {
    omp_set_num_threads(1);
    return true;
  }();
  (void)done;
}

struct Linear {
  dnnl::matmul primitive;
  memory::desc src, weights, bias, dst;
};

using LinearKey = std::tuple<int64_t, int64_t, int64_t, int64_t, bool>;  // K, N, ldb, ldy, has bias

// The number of rows is a run-time dimension, so one primitive serves every sentence length.
std::shared_ptr<const Linear> make_linear(int64_t K, int64_t N, int64_t ldb, int64_t ldy, bool has_bias) {
  const memory::dim rows = DNNL_RUNTIME_DIM_VAL;
  auto l = std::make_shared<Linear>();
  l->src = memory::desc({rows, K}, memory::data_type::f32, memory::dims{K, 1});
  l->weights = memory::desc({K, N}, memory::data_type::f32, memory::dims{ldb, 1});
  l->dst = memory::desc({rows, N}, memory::data_type::f32, memory::dims{ldy, 1});
  if (has_bias) l->bias = memory::desc({1, N}, memory::data_type::f32, memory::dims{N, 1});
  const auto desc = has_bias ? dnnl::matmul::desc(l->src, l->weights, l->bias, l->dst)
                             : dnnl::matmul::desc(l->src, l->weights, l->dst);
  l->primitive = dnnl::matmul(dnnl::matmul::primitive_desc(desc, cpu_engine()));
  return l;
}

std::shared_ptr<const Linear> linear_for(int64_t K, int64_t N, int64_t ldb, int64_t ldy, bool has_bias) {
  // Never destroyed, like the engine: at exit, a C API session's thread may still be in a product while the
  // library's globals are destroyed (it is joined after the function-local statics made since it started).
  static auto* mutex = new std::mutex;
  static auto* cache = new std::map<LinearKey, std::shared_ptr<const Linear>>;
  const LinearKey key{K, N, ldb, ldy, has_bias};
  std::lock_guard<std::mutex> lock(*mutex);
  auto& slot = (*cache)[key];
  if (!slot) slot = make_linear(K, N, ldb, ldy, has_bias);
  return slot;
}

}  // namespace

void onednn_matmul_f32(const float* x, int64_t M, int64_t K, const float* b, int64_t ldb, const float* bias,
                       int64_t N, float* y, int64_t ldy) {
  if (M <= 0 || N <= 0) return;
  keep_openmp_single_threaded();
  try {
    const auto l = linear_for(K, N, ldb, ldy, bias != nullptr);
    thread_local dnnl::stream stream(cpu_engine());
    // Memory objects with the actual row count (the primitive's descriptors leave it open).
    auto& engine = cpu_engine();
    memory src(memory::desc({M, K}, memory::data_type::f32, memory::dims{K, 1}), engine, const_cast<float*>(x));
    memory weights(l->weights, engine, const_cast<float*>(b));
    memory dst(memory::desc({M, N}, memory::data_type::f32, memory::dims{ldy, 1}), engine, y);
    std::unordered_map<int, memory> args{{DNNL_ARG_SRC, src}, {DNNL_ARG_WEIGHTS, weights}, {DNNL_ARG_DST, dst}};
    if (bias) args.emplace(DNNL_ARG_BIAS, memory(l->bias, engine, const_cast<float*>(bias)));
    l->primitive.execute(stream, args);
    stream.wait();
  } catch (const dnnl::error& e) {
    throw Error(std::string("oneDNN matmul [") + std::to_string(M) + "x" + std::to_string(K) + "] x [" +
                std::to_string(K) + "x" + std::to_string(N) + "]: " + e.what());
  }
}

void onednn_warm_up() {
  // 16 x 64 x 64 takes the blocked GEMM path a sentence's products take (measured: afterwards the first
  // 32 x 768 x 768 product runs in 1.3-2.2 ms instead of 26-36 ms).
  constexpr int64_t M = 16, K = 64, N = 64;
  std::vector<float> x(M * K, 0.0f), b(K * N, 0.0f), y(M * N);
  onednn_matmul_f32(x.data(), M, K, b.data(), N, nullptr, N, y.data(), N);
}

const char* onednn_isa() {
  switch (dnnl::get_effective_cpu_isa()) {
    case dnnl::cpu_isa::sse41: return "sse41";
    case dnnl::cpu_isa::avx: return "avx";
    case dnnl::cpu_isa::avx2: return "avx2";
    case dnnl::cpu_isa::avx2_vnni: return "avx2_vnni";
    case dnnl::cpu_isa::avx512_core: return "avx512_core";
    case dnnl::cpu_isa::avx512_core_vnni: return "avx512_core_vnni";
    case dnnl::cpu_isa::avx512_core_bf16: return "avx512_core_bf16";
    case dnnl::cpu_isa::avx512_core_amx: return "avx512_core_amx";
    default: return "other";
  }
}

}  // namespace kokoro
