// Element conversion, layout checks, .npy headers and weight-norm folding, on hand-made inputs: exact
// half/bfloat16 conversion for every bit pattern, and a named kokoro::Error for each way a header, layout or
// weight-norm pair can be wrong.
#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <cstring>
#include <functional>

#include "core/error.h"
#include "core/import/npy.h"
#include "core/import/state_dict.h"
#include "core/import/tensor_decode.h"
#include "tests/test_util.h"

using namespace kokoro;
using namespace kokoro::ckpt;

namespace {

using kokoro::test::error_of;

// binary16 from its definition, independently of the bit-twiddling under test.
double half_reference(uint16_t h) {
  const int sign = (h & 0x8000) ? -1 : 1;
  const int exponent = (h >> 10) & 0x1f;
  const int mantissa = h & 0x3ff;
  if (exponent == 0) return sign * std::ldexp(mantissa, -24);
  if (exponent == 31) return mantissa ? std::nan("") : sign * INFINITY;
  return sign * std::ldexp(1024 + mantissa, exponent - 25);
}

std::vector<uint8_t> bytes_of(const std::vector<float>& v) {
  std::vector<uint8_t> b(v.size() * 4);
  std::memcpy(b.data(), v.data(), b.size());
  return b;
}

}  // namespace

TEST(TensorDecode, EveryHalfBitPatternConvertsExactly) {
  for (uint32_t h = 0; h <= 0xffff; ++h) {
    const float got = half_to_float(static_cast<uint16_t>(h));
    const double want = half_reference(static_cast<uint16_t>(h));
    if (std::isnan(want)) {
      ASSERT_TRUE(std::isnan(got)) << std::hex << h;
      EXPECT_EQ(std::signbit(got), (h & 0x8000) != 0) << std::hex << h;
      // The payload survives (shifted into the float mantissa), as torch's conversion keeps it.
      EXPECT_EQ(std::bit_cast<uint32_t>(got) & 0x7fffffu, (h & 0x3ffu) << 13) << std::hex << h;
    } else {
      ASSERT_EQ(static_cast<double>(got), want) << std::hex << h;
      EXPECT_EQ(std::signbit(got), (h & 0x8000) != 0) << std::hex << h;  // -0 stays -0
    }
  }
}

TEST(TensorDecode, BFloat16IsTheHighHalfOfAFloat) {
  EXPECT_EQ(bfloat16_to_float(0x3f80), 1.0f);
  EXPECT_EQ(bfloat16_to_float(0xc020), -2.5f);
  EXPECT_TRUE(std::isinf(bfloat16_to_float(0x7f80)));
  EXPECT_EQ(bfloat16_to_float(0x0001), std::bit_cast<float>(0x00010000u));  // subnormal
}

TEST(TensorDecode, LayoutChecksCatchEveryOutOfRangeRead) {
  const auto check = [](int64_t offset, Shape shape, Shape stride, int64_t storage) {
    return error_of([&] { check_layout(StridedLayout{offset, shape, stride}, storage, "t"); });
  };
  EXPECT_EQ(check_layout(StridedLayout{2, {2, 3}, {3, 1}}, 8, "t"), 6);
  EXPECT_NE(check(3, {2, 3}, {3, 1}, 8).find("reads element 8"), std::string::npos);
  EXPECT_NE(check(0, {2, 3}, {1}, 8).find("differ in rank"), std::string::npos);
  EXPECT_NE(check(0, {-1}, {1}, 8).find("negative"), std::string::npos);
  EXPECT_NE(check(0, {2}, {-1}, 8).find("negative"), std::string::npos);
  EXPECT_NE(check(-1, {2}, {1}, 8).find("negative"), std::string::npos);
  EXPECT_NE(check(0, {int64_t{1} << 40, int64_t{1} << 40}, {0, 0}, 8).find("overflows"), std::string::npos);
  EXPECT_NE(check(0, {2, 2}, {int64_t{1} << 62, int64_t{1} << 62}, 8).find("overflows"), std::string::npos);
  EXPECT_NE(check(0, {int64_t{1} << 21}, {0}, 8).find("expands"), std::string::npos);
  EXPECT_NE(check(0, Shape(17, 1), Shape(17, 0), 8).find("rank 17"), std::string::npos);
  EXPECT_EQ(check_layout(StridedLayout{100, {0, 5}, {5, 1}}, 0, "t"), 0);  // empty: nothing is read
  // Size-1 dims may carry any stride: they are never stepped over.
  EXPECT_EQ(check_layout(StridedLayout{0, {1, 3}, {int64_t{1} << 62, 1}}, 3, "t"), 3);
}

TEST(TensorDecode, StridedDecodeAndSizeMismatch) {
  const std::vector<uint8_t> b = bytes_of({0, 1, 2, 3, 4, 5, 6, 7});
  LoadedTensor t = decode_tensor(b.data(), b.size(), 8, DType::F32, StridedLayout{1, {3, 2}, {2, 1}}, "t");
  EXPECT_EQ(t.data, std::vector<float>({1, 2, 3, 4, 5, 6}));
  t = decode_tensor(b.data(), b.size(), 8, DType::F32, StridedLayout{0, {2, 4}, {1, 2}}, "t");
  EXPECT_EQ(t.data, std::vector<float>({0, 2, 4, 6, 1, 3, 5, 7}));
  t = decode_tensor(b.data(), b.size(), 8, DType::F32, StridedLayout{5, {1, 2, 1}, {int64_t{1} << 60, 1, 99}}, "t");
  EXPECT_EQ(t.data, std::vector<float>({5, 6}));
  EXPECT_NE(error_of([&] { decode_tensor(b.data(), b.size() - 1, 8, DType::F32, StridedLayout{0, {8}, {1}}, "t"); })
                .find("31 bytes"),
            std::string::npos);
}

TEST(TensorDecode, IntegersMustBeExactInFloat) {
  const std::vector<int64_t> ok = {-(int64_t{1} << 24), 0, int64_t{1} << 24};
  std::vector<uint8_t> b(ok.size() * 8);
  std::memcpy(b.data(), ok.data(), b.size());
  EXPECT_EQ(decode_tensor(b.data(), b.size(), 3, DType::I64, StridedLayout{0, {3}, {1}}, "t").data,
            std::vector<float>({-16777216.0f, 0.0f, 16777216.0f}));
  const int64_t too_big = (int64_t{1} << 24) + 1;
  std::memcpy(b.data() + 8, &too_big, 8);
  EXPECT_NE(error_of([&] { decode_tensor(b.data(), b.size(), 3, DType::I64, StridedLayout{0, {3}, {1}}, "ids"); })
                .find("ids: int64 value 16777217"),
            std::string::npos);
  const double huge = 1e300;
  std::vector<uint8_t> d(8);
  std::memcpy(d.data(), &huge, 8);
  EXPECT_NE(error_of([&] { decode_tensor(d.data(), 8, 1, DType::F64, StridedLayout{0, {1}, {1}}, "t"); })
                .find("overflows float32"),
            std::string::npos);
}

namespace {

std::vector<uint8_t> npy(const std::string& header, size_t data_bytes, uint8_t major = 1) {
  std::vector<uint8_t> b = {0x93, 'N', 'U', 'M', 'P', 'Y', major, 0};
  const size_t n = header.size();
  b.push_back(static_cast<uint8_t>(n & 0xff));
  b.push_back(static_cast<uint8_t>(n >> 8));
  if (major >= 2) b.insert(b.end(), {0, 0});
  b.insert(b.end(), header.begin(), header.end());
  for (size_t i = 0; i < data_bytes; ++i) b.push_back(static_cast<uint8_t>(i));
  return b;
}

LoadedTensor parse(const std::vector<uint8_t>& b) { return parse_npy(b.data(), b.size(), "x.npy"); }

}  // namespace

TEST(Npy, HeadersAsNumpyWritesThem) {
  LoadedTensor t = parse(npy("{'descr': '<f2', 'fortran_order': False, 'shape': (2, 3), }       \n", 12));
  EXPECT_EQ(t.shape, Shape({2, 3}));
  EXPECT_EQ(t.source_dtype, "float16");
  t = parse(npy("{'descr': '|u1', 'fortran_order': True, 'shape': (2L, 3L)}\n", 6, 2));  // v2, Python 2 longs
  EXPECT_EQ(t.data, std::vector<float>({0, 2, 4, 1, 3, 5}));
  t = parse(npy("{\"shape\": (), \"fortran_order\": False, \"descr\": \"<f4\"}\n", 4));
  EXPECT_EQ(t.shape, Shape({}));
  t = parse(npy("{'descr': '<f4', 'fortran_order': False, 'shape': (0,)}\n", 0));
  EXPECT_EQ(t.shape, Shape({0}));
}

TEST(Npy, BadHeadersAreNamedErrors) {
  const std::vector<std::pair<std::vector<uint8_t>, std::string>> cases = {
      {{'P', 'K', 3, 4, 0, 0, 0, 0, 0, 0}, "wrong magic"},
      {npy("{'descr': '<f4', 'fortran_order': False, 'shape': (3,)}", 11), "11 data bytes"},
      {npy("{'descr': '<f4', 'fortran_order': False, 'shape': (3,)}", 13), "13 data bytes"},
      {npy("{'descr': '>f4', 'fortran_order': False, 'shape': (1,)}", 4), "big-endian"},
      {npy("{'descr': '|O', 'fortran_order': False, 'shape': (1,)}", 8), "'|O' is not supported"},
      {npy("{'descr': '<f4', 'shape': (1,)}", 4), "missing"},
      {npy("{'descr': '<f4', 'fortran_order': Maybe, 'shape': (1,)}", 4), "True or False"},
      {npy("{'descr': '<f4', 'fortran_order': False, 'shape': (1,), 'extra': 1}", 4), "'extra'"},
      {npy("{'descr': '<f4', 'fortran_order': False, 'shape': (99999999999999999999,)}", 4), "too large"},
      {npy("{'descr': '<f4', 'fortran_order': False, 'shape': (4294967296, 4294967296)}", 4), "overflows"},
      {npy("{'descr': '<f4', 'fortran_order': False, 'shape': (1,)", 4), "ends early"},
      {npy("{'descr': '<f4', 'fortran_order': False, 'shape': (1,)}", 4, 7), "version 7"},
  };
  for (const auto& [bytes, message] : cases) {
    const std::string e = error_of([&] { parse(bytes); });
    EXPECT_NE(e.find(message), std::string::npos) << e;
    EXPECT_EQ(e.rfind("x.npy", 0), 0u) << e;
  }
  // Header length past the end.
  std::vector<uint8_t> cut = npy("{'descr': '<f4', 'fortran_order': False, 'shape': (1,)}", 0);
  cut.resize(20);
  EXPECT_NE(error_of([&] { parse(cut); }).find("truncated"), std::string::npos);
}

namespace {

LoadedTensor tensor(Shape shape, std::vector<float> data) { return LoadedTensor{std::move(shape), std::move(data), "float32"}; }

}  // namespace

TEST(WeightNorm, FoldsOverAllDimsButTheOneGKeeps) {
  StateDict sd;
  sd["conv.weight_v"] = tensor({2, 1, 2}, {3, 4, 0, -2});  // row norms 5 and 2
  sd["conv.weight_g"] = tensor({2, 1, 1}, {10, 1});
  sd["conv.bias"] = tensor({2}, {7, 8});
  sd["weight_v"] = tensor({2, 2}, {3, 0, 0, 4});  // dim=None: one norm, 5
  sd["weight_g"] = tensor({}, {2});
  sd["t.weight_v"] = tensor({2, 2}, {3, 1, 4, 1});  // dim=1: column norms 5 and sqrt(2)
  sd["t.weight_g"] = tensor({1, 2}, {5, 2});
  sd["up.parametrizations.weight.original0"] = tensor({2, 1}, {1, 4});  // torch >= 2.1 naming: g
  sd["up.parametrizations.weight.original1"] = tensor({2, 2}, {0, 2, 3, 0});  // v
  fold_weight_norm(sd);
  ASSERT_EQ(sd.size(), 5u);
  EXPECT_EQ(sd.at("up.weight").data, std::vector<float>({0, 1, 4, 0}));
  EXPECT_EQ(sd.at("conv.weight").data, std::vector<float>({6, 8, 0, -1}));
  EXPECT_EQ(sd.at("conv.weight").shape, Shape({2, 1, 2}));
  EXPECT_EQ(sd.at("conv.bias").data, std::vector<float>({7, 8}));
  EXPECT_EQ(sd.at("weight").data, std::vector<float>({1.2f, 0, 0, 1.6f}));
  const float r2 = static_cast<float>(2 / std::sqrt(2.0));
  EXPECT_EQ(sd.at("t.weight").data, std::vector<float>({3, r2, 4, r2}));
}

TEST(WeightNorm, InconsistentPairsAreNamedErrors) {
  const auto fold = [](StateDict sd) { return error_of([&] { fold_weight_norm(sd); }); };
  EXPECT_NE(fold({{"a.weight_g", tensor({1, 1}, {1})}}).find("a.weight_g: no matching a.weight_v"), std::string::npos);
  EXPECT_NE(fold({{"a.weight_v", tensor({1, 1}, {1})}}).find("a.weight_v: no matching a.weight_g"), std::string::npos);
  EXPECT_NE(fold({{"a.weight_g", tensor({1, 1}, {1})}, {"a.weight_v", tensor({1, 1}, {1})}, {"a.weight", tensor({1}, {1})}})
                .find("already exists"),
            std::string::npos);
  EXPECT_NE(fold({{"a.weight_g", tensor({2, 1}, {1, 1})}, {"a.weight_v", tensor({2, 1}, {1, 0})}}).find("a.weight_v: slice 1"),
            std::string::npos);
  EXPECT_NE(fold({{"a.weight_g", tensor({3, 1}, {1, 1, 1})}, {"a.weight_v", tensor({2, 1}, {1, 1})}}).find("does not fit"),
            std::string::npos);
  EXPECT_NE(fold({{"a.weight_g", tensor({2, 2}, {1, 1, 1, 1})}, {"a.weight_v", tensor({2, 2}, {1, 1, 1, 1})}}).find("does not fit"),
            std::string::npos);
  EXPECT_NE(fold({{"a.parametrizations.weight.original1", tensor({1, 1}, {1})}})
                .find("a.parametrizations.weight.original1: no matching a.parametrizations.weight.original0"),
            std::string::npos);
  // A zero slice of v with g = 0 is a zero weight (int8 sources zero out tiny rows), not an error.
  StateDict zero{{"z.weight_g", tensor({2, 1}, {2, 0})}, {"z.weight_v", tensor({2, 1}, {3, 0})}};
  fold_weight_norm(zero);
  EXPECT_EQ(zero.at("z.weight").data, std::vector<float>({2, 0}));
  // Only whole "weight_g" segments count: "xweight_g" is an ordinary tensor.
  StateDict plain{{"a.xweight_g", tensor({1}, {1})}};
  fold_weight_norm(plain);
  EXPECT_EQ(plain.count("a.xweight_g"), 1u);
}
