// Micro-benchmarks of the hot kernels at the generator's shapes (2 s of audio: stage 0 has 256 channels x
// 1600 columns, stage 1 128 x 9601), each new implementation beside the one it replaces, in the same run,
// so that ratios hold even on a loaded machine:
//   conv1d: baseline (conv1d_gemm_per_tap, the first implementation) vs direct (chunked, threaded) vs
//           winograd (core/winograd.h), for kernel 3/7/11 at dilation 1 and 5
//   conv1d at the decoder's shapes: fp32 direct vs bf16 (conv1d_bf16)
//   linear_rows at ALBERT's shapes: Eigen (the first implementation) vs oneDNN fp32 (the current one) vs the
//           engine's own bf16 GEMM vs oneDNN's bf16 matmul (weights prepared once for both bf16 rows)
//   conv_transpose1d (ups_0, ups_1), LSTM (bilstm, 640 -> 2x256 over 60 steps), AdaIN + Snake, iSTFT.
// The argument of each benchmark is the thread count. Counter GFLOPs = direct-convolution work per second.
//
//   build/bin/bench_kernels --benchmark_filter=conv1d          (compare the Time columns row by row)
#include <benchmark/benchmark.h>
#include <dnnl.hpp>

#include <cmath>
#include <random>
#include <vector>

#include "core/kernels.h"
#include "core/parallel.h"
#include "core/precision.h"
#include "core/weight_cache.h"
#include "core/winograd.h"
#include "vocoder/stft.h"

namespace {

using namespace kokoro;

struct ConvData {
  Tensor x;
  std::vector<float> w, b;
  TensorView wv, bv;
  ConvData(int64_t ci, int64_t co, int64_t k, int64_t T) : x({ci, T}), w(co * ci * k), b(co) {
    std::mt19937 rng(1);
    std::normal_distribution<float> n(0, 1);
    for (int64_t i = 0; i < x.numel(); ++i) x[i] = n(rng);
    for (auto& v : w) v = n(rng) * 0.05f;
    for (auto& v : b) v = n(rng);
    wv = TensorView{w.data(), {co, ci, k}};
    bv = TensorView{b.data(), {co}};
  }
};

enum ConvImpl { kBaseline, kDirect, kWinograd };

// args: impl, channels, kernel, dilation, threads
void BM_conv1d(benchmark::State& state) {
  const auto impl = static_cast<ConvImpl>(state.range(0));
  const int64_t C = state.range(1), k = state.range(2);
  const int d = static_cast<int>(state.range(3));
  set_num_threads(static_cast<int>(state.range(4)));
  const int64_t T = C == 256 ? 1600 : 9601;
  ConvData cd(C, C, k, T);
  const int pad = static_cast<int>((k * d - d) / 2);
  Tensor y;
  for (auto _ : state) {
    if (impl == kBaseline) conv1d_gemm_per_tap(cd.x, cd.wv, &cd.bv, 1, pad, d, y);
    if (impl == kDirect) conv1d_direct(cd.x, cd.wv, &cd.bv, pad, d, y);
    if (impl == kWinograd) conv1d_winograd(cd.x, cd.wv, &cd.bv, pad, d, *winograd_for_kernel(k), y);
    benchmark::DoNotOptimize(y.data());
  }
  state.counters["GFLOPs"] = benchmark::Counter(2.0 * C * C * k * T, benchmark::Counter::kIsIterationInvariantRate,
                                                benchmark::Counter::kIs1000);
  state.SetLabel(impl == kBaseline ? "baseline" : impl == kDirect ? "direct" : "winograd");
}
void conv_args(benchmark::internal::Benchmark* b) {
  for (int threads : {1, 2})
    for (int C : {256, 128})
      for (int k : {3, 7, 11})
        for (int d : {1, 5})
          for (int impl : {kBaseline, kDirect, kWinograd}) b->Args({impl, C, k, d, threads});
}
BENCHMARK(BM_conv1d)->Apply(conv_args)->Unit(benchmark::kMillisecond)->UseRealTime();

// A convolution C -> C (kernel k, dilation d, "same" padding) over T columns at `precision`, its weights
// registered as a model's (bf16 forms prepared on the first call, before the timed ones).
template <typename Conv>
void time_conv(benchmark::State& state, int64_t C, int64_t k, int d, int64_t T, Precision precision, Conv conv) {
  ConvData cd(C, C, k, T);
  register_weight_region(cd.w.data(), cd.w.size() * sizeof(float));
  const int pad = static_cast<int>((k * d - d) / 2);
  Tensor y;
  set_precision(precision);
  conv(cd, pad, y);
  for (auto _ : state) {
    conv(cd, pad, y);
    benchmark::DoNotOptimize(y.data());
  }
  set_precision(Precision::fp32);
  unregister_weight_region(cd.w.data());
  state.counters["GFLOPs"] = benchmark::Counter(2.0 * C * C * k * T, benchmark::Counter::kIsIterationInvariantRate,
                                                benchmark::Counter::kIs1000);
}

// Winograd convolution in fp32 (weights transformed per call) vs bf16 (weights transformed and packed once,
// as for a model's weights: the buffer is registered with core/weight_cache.h), at full-sentence lengths
// (1600 / 9601 columns) and at a streaming chunk's (240 / 1440: 12 frames).
// args: precision (0 fp32, 1 bf16), channels, kernel, dilation, columns, threads
void BM_conv1d_precision(benchmark::State& state) {
  const bool bf16 = state.range(0) == 1;
  const int64_t k = state.range(2);
  const int d = static_cast<int>(state.range(3));
  set_num_threads(static_cast<int>(state.range(5)));
  time_conv(state, state.range(1), k, d, state.range(4), bf16 ? Precision::bf16 : Precision::fp32,
            [&](const ConvData& cd, int pad, Tensor& y) {
              conv1d_winograd(cd.x, cd.wv, &cd.bv, pad, d, *winograd_for_kernel(k), y);
            });
  state.SetLabel(bf16 ? "bf16 prepared" : "fp32 per call");
}
void precision_args(benchmark::internal::Benchmark* b) {
  if (!bf16_supported()) return;
  for (int threads : {1, 2})
    for (int C : {256, 128})
      for (int chunk : {0, 1})
        for (int k : {3, 7, 11})
          for (int d : {1, 5})
            for (int p : {0, 1}) b->Args({p, C, k, d, chunk ? (C == 256 ? 240 : 1440) : (C == 256 ? 1600 : 9601), threads});
}
BENCHMARK(BM_conv1d_precision)->Apply(precision_args)->Unit(benchmark::kMillisecond)->UseRealTime();

// Where Winograd starts to beat the direct convolution in bf16 (weights prepared once for both), on the
// short inputs of a streamed slice and of a sentence's first audio (the generator's resblocks see 45-270
// columns there; the text encoder a sentence's 20-150 tokens): core/kernels.cpp winograd_min_columns.
// args: implementation (0 direct conv1d_bf16, 1 winograd), channels, kernel, dilation, columns, threads
void BM_conv1d_short(benchmark::State& state) {
  const bool winograd = state.range(0) == 1;
  const int64_t k = state.range(2);
  const int d = static_cast<int>(state.range(3));
  set_num_threads(static_cast<int>(state.range(5)));
  time_conv(state, state.range(1), k, d, state.range(4), Precision::bf16, [&](const ConvData& cd, int pad, Tensor& y) {
    if (winograd) conv1d_winograd(cd.x, cd.wv, &cd.bv, pad, d, *winograd_for_kernel(k), y);
    else conv1d_bf16(cd.x, cd.wv, &cd.bv, pad, d, y);
  });
  state.SetLabel(winograd ? "bf16 winograd" : "bf16 direct");
}
void short_args(benchmark::internal::Benchmark* b) {
  if (!bf16_supported()) return;
  const int64_t shapes[][3] = {{512, 5, 1}, {256, 3, 1}, {256, 7, 3}, {256, 11, 1}, {256, 7, 5}, {256, 11, 3},
                               {256, 11, 5}, {128, 11, 5}};
  for (const auto& s : shapes)
    for (int T : {48, 64, 96, 128})
      for (int impl : {0, 1}) b->Args({impl, s[0], s[1], s[2], T, 2});
}
BENCHMARK(BM_conv1d_short)->Apply(short_args)->Unit(benchmark::kMicrosecond)->UseRealTime();

// Is an int8 path worth building for the generator's convolutions (issue 12)? oneDNN's int8 convolution
// (VNNI: 64 multiply-adds per instruction, twice vdpbf16ps' 32) as an engine would run it: s8 weights with
// per-output-channel scales quantized once, the input quantized per call with one dynamic scale (its
// max-abs), f32 output; one thread, beside the engine's bf16 Winograd convolution (weights prepared once)
// on the same shapes and the same thread count. GFLOPs count direct-convolution work for both.
// args: implementation (0 engine bf16 Winograd, 1 oneDNN int8 direct), channels, kernel, dilation, columns
void BM_conv1d_int8(benchmark::State& state) {
  const int64_t C = state.range(1), k = state.range(2), T = state.range(4);
  const int d = static_cast<int>(state.range(3));
  set_num_threads(1);
  ConvData cd(C, C, k, T);
  const int pad = static_cast<int>((k * d - d) / 2);
  Tensor y({C, T});
  if (state.range(0) == 0) {
    register_weight_region(cd.w.data(), cd.w.size() * sizeof(float));
    set_precision(Precision::bf16);
    conv1d_winograd(cd.x, cd.wv, &cd.bv, pad, d, *winograd_for_kernel(k), y);  // prepares the weights
    for (auto _ : state) {
      conv1d_winograd(cd.x, cd.wv, &cd.bv, pad, d, *winograd_for_kernel(k), y);
      benchmark::DoNotOptimize(y.data());
    }
    set_precision(Precision::fp32);
    unregister_weight_region(cd.w.data());
    state.SetLabel("engine bf16 winograd");
  } else {
    using dnnl::memory;
    using dt = memory::data_type;
    using tag = memory::format_tag;
    dnnl::engine eng(dnnl::engine::kind::cpu, 0);
    dnnl::stream strm(eng);
    // Weights: s8 with one scale per output channel (max-abs / 127), quantized once.
    std::vector<float> w_scale(C);
    std::vector<int8_t> w_q(cd.w.size());
    for (int64_t o = 0; o < C; ++o) {
      float m = 0;
      for (int64_t i = 0; i < C * k; ++i) m = std::max(m, std::abs(cd.w[o * C * k + i]));
      w_scale[o] = m > 0 ? m / 127.0f : 1.0f;
      for (int64_t i = 0; i < C * k; ++i)
        w_q[o * C * k + i] = static_cast<int8_t>(std::lrint(cd.w[o * C * k + i] / w_scale[o]));
    }
    const memory::desc src_md({1, C, T}, dt::s8, tag::any), w_md({C, C, k}, dt::s8, tag::any),
        dst_md({1, C, T}, dt::f32, tag::any);
    const dnnl::convolution_forward::desc cdesc(dnnl::prop_kind::forward_inference, dnnl::algorithm::convolution_direct,
                                                src_md, w_md, dst_md, {1}, {d - 1}, {pad}, {pad});
    // Per-output-channel weight scales fixed in the primitive (oneDNN 2.6 has no run-time scales for
    // convolutions); the input's dynamic scale multiplies the output afterwards, within the timing.
    dnnl::primitive_attr attr;
    attr.set_output_scales(2, w_scale);
    const dnnl::convolution_forward::primitive_desc pd(cdesc, attr, eng);
    dnnl::convolution_forward conv(pd);
    memory w_user({{C, C, k}, dt::s8, tag::oiw}, eng, w_q.data()), w_packed(pd.weights_desc(), eng);
    dnnl::reorder(w_user, w_packed).execute(strm, w_user, w_packed);
    std::vector<int8_t> xq(static_cast<size_t>(C * T));
    memory x_user({{1, C, T}, dt::s8, tag::ncw}, eng, xq.data()), x_conv(pd.src_desc(), eng);
    memory dst_conv(pd.dst_desc(), eng);
    memory dst_user({{1, C, T}, dt::f32, tag::ncw}, eng, y.data());
    const bool src_same = pd.src_desc() == x_user.get_desc(), dst_same = pd.dst_desc() == dst_user.get_desc();
    for (auto _ : state) {
      // Dynamic activation quantization: one scale for the input, then s8 in the primitive's layout.
      float m = 0;
      for (int64_t i = 0; i < cd.x.numel(); ++i) m = std::max(m, std::abs(cd.x[i]));
      const float xs = m > 0 ? m / 127.0f : 1.0f, inv = 1.0f / xs;
      for (int64_t i = 0; i < cd.x.numel(); ++i) xq[i] = static_cast<int8_t>(std::lrint(cd.x[i] * inv));
      if (!src_same) dnnl::reorder(x_user, x_conv).execute(strm, x_user, x_conv);
      conv.execute(strm, {{DNNL_ARG_SRC, src_same ? x_user : x_conv}, {DNNL_ARG_WEIGHTS, w_packed},
                          {DNNL_ARG_DST, dst_same ? dst_user : dst_conv}});
      if (!dst_same) dnnl::reorder(dst_conv, dst_user).execute(strm, dst_conv, dst_user);
      strm.wait();
      for (int64_t o = 0; o < C; ++o)
        for (int64_t t = 0; t < T; ++t) y[o * T + t] = y[o * T + t] * xs + cd.b[o];
      benchmark::DoNotOptimize(y.data());
    }
    state.SetLabel(std::string("onednn int8 ") + pd.impl_info_str());
  }
  state.counters["GFLOPs"] = benchmark::Counter(2.0 * C * C * k * T, benchmark::Counter::kIsIterationInvariantRate,
                                                benchmark::Counter::kIs1000);
}
void int8_args(benchmark::internal::Benchmark* b) {
  if (!bf16_supported()) return;
  for (int C : {256, 128})
    for (int k : {3, 7, 11})
      for (int d : {1, 5})
        for (int impl : {0, 1}) b->Args({impl, C, k, d, C == 256 ? 1600 : 9601});
}
BENCHMARK(BM_conv1d_int8)->Apply(int8_args)->Unit(benchmark::kMillisecond)->UseRealTime();

// ALBERT's products for a 20-token sentence (Q/K/V/O: 768 -> 768, FFN: 768 -> 2048 -> 768), a 60-token one,
// and the text encoder's/prosody's longest (200 rows).
// args: implementation (0 Eigen, 1 oneDNN fp32, 2 engine bf16, 3 oneDNN bf16), rows, in, out, threads
void BM_linear_rows(benchmark::State& state) {
  const int impl = static_cast<int>(state.range(0));
  const int64_t T = state.range(1), in = state.range(2), out = state.range(3);
  set_num_threads(static_cast<int>(state.range(4)));
  std::mt19937 rng(5);
  std::normal_distribution<float> n(0, 1);
  Tensor x({T, in}), y({T, out});
  for (int64_t i = 0; i < x.numel(); ++i) x[i] = n(rng);
  std::vector<float> w(out * in), b(out);
  for (auto& v : w) v = n(rng) * 0.03f;
  for (auto& v : b) v = n(rng);
  const TensorView wv{w.data(), {out, in}}, bv{b.data(), {out}};
  register_weight_region(w.data(), w.size() * sizeof(float));
  if (impl == 3) {
    // oneDNN's bf16 matmul as an application would use it: fixed shape, weights reordered once, one thread
    // (OpenMP is not used by the engine, see core/onednn_matmul.h).
    using dnnl::memory;
    dnnl::engine eng(dnnl::engine::kind::cpu, 0);
    dnnl::stream strm(eng);
    const memory::desc src_md({T, in}, memory::data_type::bf16, memory::format_tag::ab);
    const memory::desc w_md({in, out}, memory::data_type::bf16, memory::format_tag::any);
    const memory::desc b_md({1, out}, memory::data_type::f32, memory::format_tag::ab);
    const memory::desc dst_md({T, out}, memory::data_type::f32, memory::format_tag::ab);
    const dnnl::matmul::primitive_desc pd(dnnl::matmul::desc(src_md, w_md, b_md, dst_md), eng);
    dnnl::matmul mm(pd);
    memory w_user({{in, out}, memory::data_type::f32, memory::format_tag::ba}, eng, w.data());
    memory w_packed(pd.weights_desc(), eng);
    dnnl::reorder(w_user, w_packed).execute(strm, w_user, w_packed);
    memory x_user({{T, in}, memory::data_type::f32, memory::format_tag::ab}, eng, x.data());
    memory x_bf16(src_md, eng), bias(b_md, eng, b.data()), dst(dst_md, eng, y.data());
    for (auto _ : state) {
      dnnl::reorder(x_user, x_bf16).execute(strm, x_user, x_bf16);
      mm.execute(strm, {{DNNL_ARG_SRC, x_bf16}, {DNNL_ARG_WEIGHTS, w_packed}, {DNNL_ARG_BIAS, bias}, {DNNL_ARG_DST, dst}});
      strm.wait();
      benchmark::DoNotOptimize(y.data());
    }
    state.SetLabel(std::string("onednn bf16 1 thread ") + pd.impl_info_str());
  } else {
    set_precision(impl == 2 ? Precision::bf16 : Precision::fp32);
    auto run = [&] { impl == 0 ? linear_rows_eigen(x, wv, &bv, y) : linear_rows(x, wv, &bv, y); };
    run();  // bf16: packs the weights once
    for (auto _ : state) {
      run();
      benchmark::DoNotOptimize(y.data());
    }
    set_precision(Precision::fp32);
    state.SetLabel(impl == 0 ? "eigen" : impl == 1 ? "onednn fp32" : "engine bf16");
  }
  unregister_weight_region(w.data());
  state.counters["GFLOPs"] = benchmark::Counter(2.0 * T * in * out, benchmark::Counter::kIsIterationInvariantRate,
                                                benchmark::Counter::kIs1000);
}
void linear_args(benchmark::internal::Benchmark* b) {
  const int64_t shapes[][3] = {{20, 768, 768}, {20, 768, 2048}, {20, 2048, 768}, {60, 768, 2048}, {200, 768, 2048}};
  for (int threads : {1, 2})
    for (const auto& s : shapes)
      for (int impl : {0, 1, 2, 3}) {
        if (impl >= 2 && !bf16_supported()) continue;
        if (impl == 3 && threads != 1) continue;
        b->Args({impl, s[0], s[1], s[2], threads});
      }
}
BENCHMARK(BM_linear_rows)->Apply(linear_args)->Unit(benchmark::kMicrosecond)->UseRealTime();

// The decoder's convolutions (1090 -> 1024 and 1024 -> 1024, k 3) for a 5.8 s sentence (464 frames): the
// fp32 direct convolution (Eigen) vs fp32 through oneDNN vs bf16 (conv1d_bf16) vs bf16 Winograd F(5, 3) (what
// conv1d takes in bf16 from 64 columns on), weights prepared once; the 1090 -> 1024 one also at 40 and 64
// frames (around where Winograd starts to pay) and 620 (a 15 s sentence); and the prosody predictor's 512 ->
// 512 over 60 frames.
// args: implementation (0 fp32 direct, 1 bf16, 2 fp32 oneDNN, 3 bf16 Winograd), in, frames, threads, out
void BM_conv1d_decoder(benchmark::State& state) {
  const int impl = static_cast<int>(state.range(0));
  const bool bf16 = impl == 1 || impl == 3;
  const int64_t in = state.range(1), T = state.range(2), out = state.range(4);
  set_num_threads(static_cast<int>(state.range(3)));
  ConvData cd(in, out, 3, T);
  register_weight_region(cd.w.data(), cd.w.size() * sizeof(float));
  Tensor y;
  set_precision(bf16 ? Precision::bf16 : Precision::fp32);
  auto run = [&] {
    if (impl == 0) conv1d_direct(cd.x, cd.wv, &cd.bv, 1, 1, y);
    else if (impl == 1) conv1d_bf16(cd.x, cd.wv, &cd.bv, 1, 1, y);
    else if (impl == 3) conv1d_winograd(cd.x, cd.wv, &cd.bv, 1, 1, *winograd_for_kernel(3), y);
    else conv1d_onednn(cd.x, cd.wv, &cd.bv, 1, 1, y);
  };
  run();  // prepares the weights
  for (auto _ : state) {
    run();
    benchmark::DoNotOptimize(y.data());
  }
  set_precision(Precision::fp32);
  unregister_weight_region(cd.w.data());
  state.counters["GFLOPs"] = benchmark::Counter(2.0 * in * out * 3 * T, benchmark::Counter::kIsIterationInvariantRate,
                                                benchmark::Counter::kIs1000);
  state.SetLabel(impl == 0 ? "fp32 (conv1d_direct)" : impl == 1 ? "bf16 (conv1d_bf16)" : impl == 3 ? "bf16 (winograd F(5,3))"
                                                                                      : "fp32 (conv1d_onednn)");
}
void decoder_args(benchmark::internal::Benchmark* b) {
  const int64_t shapes[][3] = {{1090, 464, 1024}, {1024, 464, 1024}, {1090, 40, 1024}, {1090, 64, 1024},
                               {1090, 620, 1024}, {512, 60, 512}};
  for (int threads : {1, 2})
    for (const auto& s : shapes)
      for (int impl : {0, 2, 1, 3}) {
        if ((impl == 1 || impl == 3) && !bf16_supported()) continue;
        b->Args({impl, s[0], s[1], threads, s[2]});
      }
}
BENCHMARK(BM_conv1d_decoder)->Apply(decoder_args)->Unit(benchmark::kMillisecond)->UseRealTime();

// ups_0: 512 -> 256, k 20, stride 10 on 160 columns; ups_1: 256 -> 128, k 12, stride 6 on 1600 columns.
void BM_conv_transpose1d(benchmark::State& state) {
  const bool first = state.range(0) == 0;
  set_num_threads(static_cast<int>(state.range(1)));
  const int64_t ci = first ? 512 : 256, co = ci / 2, k = first ? 20 : 12, s = first ? 10 : 6, T = first ? 160 : 1600;
  std::vector<float> w(ci * co * k, 0.01f), b(co, 0.1f);
  Tensor x({ci, T}), y;
  for (int64_t i = 0; i < x.numel(); ++i) x[i] = std::sin(0.1f * i);
  const TensorView wv{w.data(), {ci, co, k}}, bv{b.data(), {co}};
  for (auto _ : state) {
    conv_transpose1d(x, wv, &bv, static_cast<int>(s), static_cast<int>((k - s) / 2), 0, y);
    benchmark::DoNotOptimize(y.data());
  }
  state.SetLabel(first ? "ups_0" : "ups_1");
}
BENCHMARK(BM_conv_transpose1d)->ArgsProduct({{0, 1}, {1, 2}})->Unit(benchmark::kMillisecond)->UseRealTime();

// The prosody predictor's BiLSTM shape: 640 inputs, 256 hidden per direction, 60 steps.
// args: implementation (0 baseline, 1 current, 2 current in bf16: W_hh packed to bf16 once), threads
void BM_bilstm(benchmark::State& state) {
  const bool baseline = state.range(0) == 0;
  if (state.range(0) == 2 && !bf16_supported()) return state.SkipWithError("no AVX512-BF16 on this CPU");
  const ScopedKernelPrecision precision(state.range(0) == 2 ? Precision::bf16 : Precision::fp32);
  set_num_threads(static_cast<int>(state.range(1)));
  const int64_t in = 640, H = 256, T = 60;
  std::vector<float> wih(4 * H * in), whh(4 * H * H), bih(4 * H, 0.01f), bhh(4 * H, 0.01f);
  std::mt19937 rng(3);
  std::normal_distribution<float> n(0, 0.05f);
  for (auto& v : wih) v = n(rng);
  for (auto& v : whh) v = n(rng);
  // As weights of a model: prepared forms (transposed, bf16-packed) are made once, outside the timing.
  register_weight_region(whh.data(), whh.size() * sizeof(float));
  register_weight_region(wih.data(), wih.size() * sizeof(float));
  const LstmWeights lw{{wih.data(), {4 * H, in}}, {whh.data(), {4 * H, H}}, {bih.data(), {4 * H}}, {bhh.data(), {4 * H}}};
  Tensor x({T, in}), y;
  for (int64_t i = 0; i < x.numel(); ++i) x[i] = n(rng);
  for (auto _ : state) {
    if (baseline)
      bilstm_baseline(x, lw, lw, y);
    else
      bilstm(x, lw, lw, y);
    benchmark::DoNotOptimize(y.data());
  }
  unregister_weight_region(whh.data());
  unregister_weight_region(wih.data());
  state.SetLabel(baseline ? "baseline" : state.range(0) == 2 ? "parallel+vectorised, bf16 recurrence" : "parallel+vectorised");
  state.counters["us_per_step"] = benchmark::Counter(T, benchmark::Counter::kIsIterationInvariantRate | benchmark::Counter::kInvert);
}
BENCHMARK(BM_bilstm)->ArgsProduct({{0, 1, 2}, {1, 2}})->Unit(benchmark::kMicrosecond)->UseRealTime();

// AdaIN (instance norm + style affine) then Snake on the stage-1 activation shape.
void BM_adain_snake(benchmark::State& state) {
  const int64_t C = 128, T = 9601;
  Tensor x({C, T});
  for (int64_t i = 0; i < x.numel(); ++i) x[i] = std::sin(0.01f * i);
  std::vector<float> gamma(C, 0.1f), beta(C, 0.2f), alpha(C, 1.3f);
  Tensor t;
  for (auto _ : state) {
    t = x;
    adain(t, gamma.data(), beta.data());
    float* p = t.data();
    for (int64_t c = 0; c < C; ++c) {
      Eigen::Map<Eigen::ArrayXf> r(p + c * T, T);
      const float a = alpha[c], inv = 1.0f / a;
      r += inv * (a * r).sin().square();
    }
    benchmark::DoNotOptimize(t.data());
  }
}
BENCHMARK(BM_adain_snake)->Unit(benchmark::kMicrosecond)->UseRealTime();

// iSTFT of 2 s of audio: 11 bins x 9601 frames (n_fft 20, hop 5).
void BM_istft(benchmark::State& state) {
  Stft stft(20, 5);
  Tensor mag({11, 9601}), phase({11, 9601}), y;
  for (int64_t i = 0; i < mag.numel(); ++i) {
    mag[i] = 0.5f + 0.4f * std::sin(0.37f * i);
    phase[i] = std::sin(0.11f * i);
  }
  for (auto _ : state) {
    stft.inverse(mag, phase, y);
    benchmark::DoNotOptimize(y.data());
  }
}
BENCHMARK(BM_istft)->Unit(benchmark::kMicrosecond)->UseRealTime();

}  // namespace

BENCHMARK_MAIN();
