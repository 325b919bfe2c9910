// The restricted pickle reader and the state-dict walk on hand-built pickles: what torch.save writes is
// understood, everything else (foreign globals, malformed streams, odd trees) is a named kokoro::Error, and
// random damage to a real data.pkl never gets past with anything but an Error.
#include <gtest/gtest.h>

#include <cstring>
#include <functional>
#include <random>

#include "core/error.h"
#include "core/import/torch_archive.h"
#include "tests/checkpoint_fixtures.h"
#include "tests/test_util.h"

using namespace kokoro;
using namespace kokoro::ckpt;
using namespace std::string_literals;

namespace {

using kokoro::test::error_of;

// Builds pickle byte streams opcode by opcode (protocol 2, as torch.save writes them).
struct Pickle {
  std::string b = "\x80\x02";
  Pickle& op(const std::string& s) { b += s; return *this; }
  Pickle& str(const std::string& s) {
    b += 'X';
    const uint32_t n = static_cast<uint32_t>(s.size());
    b.append(reinterpret_cast<const char*>(&n), 4);
    b += s;
    return *this;
  }
  Pickle& integer(uint8_t v) { b += 'K'; b += static_cast<char>(v); return *this; }
  Pickle& tuple_of(std::initializer_list<uint8_t> values) {
    b += '(';
    for (uint8_t v : values) integer(v);
    b += 't';
    return *this;
  }
  // torch._utils._rebuild_tensor_v2 over storage `key` of `numel` floats.
  Pickle& tensor(const std::string& key, uint8_t numel, uint8_t offset, std::initializer_list<uint8_t> shape,
                 std::initializer_list<uint8_t> stride, const char* storage = "FloatStorage") {
    op("ctorch._utils\n_rebuild_tensor_v2\n(");
    op("(").str("storage").op(std::string("ctorch\n") + storage + "\n").str(key).str("cpu").integer(numel).op("tQ");
    integer(offset).tuple_of(shape).tuple_of(stride).op("\x89").op("}").op("tR");
    return *this;
  }
  Pickle& stop() { b += '.'; return *this; }
};

Unpickled run(const std::string& bytes) {
  return unpickle(reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size(), "test.pkl");
}

// Storage k holds floats k*100 + i.
std::vector<uint8_t> counting_storage(const StorageRef& s) {
  std::vector<float> v(static_cast<size_t>(s.numel));
  for (size_t i = 0; i < v.size(); ++i) v[i] = static_cast<float>(std::stoi(s.key) * 100 + static_cast<int>(i));
  std::vector<uint8_t> bytes(v.size() * sizeof(float));
  std::memcpy(bytes.data(), v.data(), bytes.size());
  return bytes;
}

StateDict load(const std::string& bytes) {
  const Unpickled g = run(bytes);
  return materialise(g, collect_state_dict(g, "test.pkl"), counting_storage, "test.pkl");
}

}  // namespace

TEST(PickleReader, ReadsTensorsInNestedDictsWithViews) {
  Pickle p;
  p.op("}q\x00("s).str("outer").op("ccollections\nOrderedDict\nq\x01)R(");
  p.str("module.w").tensor("0", 6, 0, {2, 3}, {3, 1});
  p.str("t").tensor("0", 6, 1, {2, 2}, {1, 3});  // transposed view at offset 1
  p.op("u").op("}").op("b");                       // BUILD with _metadata-like state: ignored
  p.str("top").op("h\x00"s).op("0").tensor("1", 2, 1, {}, {});  // POP of a memo copy; 0-d at offset 1
  p.op("u").stop();
  const StateDict sd = load(p.b);
  ASSERT_EQ(sd.size(), 3u);
  EXPECT_EQ(sd.at("outer.w").shape, Shape({2, 3}));
  EXPECT_EQ(sd.at("outer.w").data, std::vector<float>({0, 1, 2, 3, 4, 5}));
  EXPECT_EQ(sd.at("outer.t").data, std::vector<float>({1, 4, 2, 5}));
  EXPECT_EQ(sd.at("top").shape, Shape({}));
  EXPECT_EQ(sd.at("top").data, std::vector<float>({101}));
}

TEST(PickleReader, RepeatedKeyReplacesLikePython) {
  Pickle p;
  p.op("}(").str("a").tensor("0", 2, 0, {1}, {1}).str("a").tensor("0", 2, 1, {1}, {1}).op("u").stop();
  EXPECT_EQ(load(p.b).at("a").data, std::vector<float>({1}));
}

TEST(PickleReader, ForeignGlobalsAreRefused) {
  const std::string e = error_of([] { run(Pickle().op("cos\nsystem\n").str("echo").op("\x85R").stop().b); });
  EXPECT_NE(e.find("os.system"), std::string::npos) << e;
  EXPECT_NE(e.find("test.pkl"), std::string::npos) << e;
  EXPECT_NE(error_of([] { run(Pickle().op("cbuiltins\neval\n").stop().b); }).find("not allowed"), std::string::npos);
  // An allowed global that is not callable.
  EXPECT_NE(error_of([] { run(Pickle().op("ctorch\nFloatStorage\n)R").stop().b); }).find("cannot be called"),
            std::string::npos);
}

TEST(PickleReader, MalformedStreamsAreErrors) {
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"", "truncated"},
      {"\x80\x02}", "truncated"},                     // no STOP
      {"\x80\x09.", "protocol 9"},                    // unknown protocol
      {"\x80\x02h\x05.", "memo entry 5"},             // BINGET of nothing
      {"\x80\x02s.", "stack underflow"},              // SETITEM on an empty stack
      {"\x80\x02(.", "stack underflow"},             // STOP with nothing above the MARK
      {"\x80\x02u.", "no MARK"},                      // SETITEMS without MARK
      {"\x80\x02](K\x01u.", "odd number"},            // SETITEMS with one item
      {"\x80\x02K\x01K\x01K\x02s.", "SETITEM target"},  // SETITEM on an int
      {std::string("\x80\x02X\xff\xff\xff\x7f", 7), "truncated"},  // 2 GB string in a few bytes
      {std::string("\x80\x02\x8a\x09\x01\x02\x03\x04\x05\x06\x07\x08\x09.", 14), "too large"},
      {"\x80\x02\xff.", "unsupported opcode 0xff"},
      {"\x80\x02K\x01}b.", "BUILD on a int"},
  };
  for (const auto& [bytes, message] : cases) {
    const std::string e = error_of([&] { run(bytes); });
    EXPECT_NE(e.find(message), std::string::npos) << "pickle " << testing::PrintToString(bytes) << ": " << e;
  }
}

TEST(PickleReader, TensorsOutsideTheirStorageAreErrors) {
  // Last element past the storage, declared at unpickling time.
  EXPECT_NE(error_of([] { run(Pickle().tensor("0", 4, 1, {4}, {1}).stop().b); }).find("reads element 4"),
            std::string::npos);
  // A stride-0 expand of one element into 2^22 elements: refused before any allocation.
  Pickle big;
  big.op("ctorch._utils\n_rebuild_tensor_v2\n((").str("storage").op("ctorch\nFloatStorage\n").str("0").str("cpu");
  big.integer(1).op("tQ").integer(0).op("(J").op("\x00\x00\x40\x00"s).op("t(").integer(0).op("t\x89}tR").stop();
  EXPECT_NE(error_of([&] { run(big.b); }).find("expands"), std::string::npos);
  // The same key declared with two element types.
  Pickle twice;
  twice.op("(").tensor("0", 2, 0, {2}, {1}).tensor("0", 2, 0, {2}, {1}, "HalfStorage").op("t").stop();
  EXPECT_NE(error_of([&] { run(twice.b); }).find("declared twice"), std::string::npos);
  // Unsupported storage class.
  EXPECT_NE(error_of([] { run(Pickle().tensor("0", 2, 0, {2}, {1}, "ComplexFloatStorage").stop().b); })
                .find("not allowed"),
            std::string::npos);
}

TEST(PickleReader, TreesThatAreNotStateDictsAreNamedErrors) {
  // A non-tensor value names its key.
  std::string e = error_of([] { load(Pickle().op("}(").str("bert").op("}(").str("epoch").integer(5).op("uu").stop().b); });
  EXPECT_NE(e.find("key bert.epoch holds a int"), std::string::npos) << e;
  // A dict inside itself.
  e = error_of([] { load(Pickle().op("}q\x00"s).str("self").op("h\x00s"s).stop().b); });
  EXPECT_NE(e.find("appears twice"), std::string::npos) << e;
  // Nesting deeper than any checkpoint (iterative in the pickle, bounded in the walk).
  Pickle deep;
  deep.op("}");
  for (int i = 0; i < 100; ++i) deep.str("k").op("}");
  for (int i = 0; i < 100; ++i) deep.op("s");
  e = error_of([&] { load(deep.stop().b); });
  EXPECT_NE(e.find("nested more than"), std::string::npos) << e;
  // "module.a" and "a" in one dict.
  e = error_of([] { load(Pickle().op("}(").str("module.a").tensor("0", 1, 0, {1}, {1}).str("a").tensor("0", 1, 0, {1}, {1}).op("u").stop().b); });
  EXPECT_NE(e.find("collide"), std::string::npos) << e;
  // "a.b" at the top and {"a": {"b"}}.
  e = error_of([] {
    load(Pickle().op("}(").str("a.b").tensor("0", 1, 0, {1}, {1}).str("a").op("}").str("b").tensor("0", 1, 0, {1}, {1}).op("su").stop().b);
  });
  EXPECT_NE(e.find("key a.b appears twice"), std::string::npos) << e;
  // A tuple as a key.
  e = error_of([] { load(Pickle().op("})").tensor("0", 1, 0, {1}, {1}).op("s").stop().b); });
  EXPECT_NE(e.find("dict key of type tuple"), std::string::npos) << e;
  // A list at the top.
  e = error_of([] { load(Pickle().op("]").stop().b); });
  EXPECT_NE(e.find("holds a list"), std::string::npos) << e;
}

namespace {

std::vector<uint8_t> real_pickle() {
  const ZipArchive zip = ZipArchive::open_file(test::checkpoint_fixture("dtypes.pth"), "dtypes.pth");
  return zip.read("dtypes/data.pkl", 1 << 20);
}

// Decoding with synthetic storages: what fuzz_pickle_reader does.
void decode_with_zero_storages(const std::vector<uint8_t>& bytes) {
  const Unpickled g = unpickle(bytes.data(), bytes.size(), "mutant");
  const StorageReader zeros = [](const StorageRef& s) {
    return std::vector<uint8_t>(static_cast<size_t>(s.numel) * dtype_size(s.dtype), 0);
  };
  materialise(g, collect_state_dict(g, "mutant"), zeros, "mutant");
}

}  // namespace

TEST(PickleReader, EveryTruncationOfARealPickleIsAnError) {
  const std::vector<uint8_t> bytes = real_pickle();
  ASSERT_GT(bytes.size(), 500u);
  decode_with_zero_storages(bytes);  // whole: fine
  for (size_t len = 0; len < bytes.size(); ++len) {
    const std::vector<uint8_t> cut(bytes.begin(), bytes.begin() + static_cast<std::ptrdiff_t>(len));
    EXPECT_THROW(decode_with_zero_storages(cut), Error) << "cut to " << len;
  }
}

TEST(PickleReader, RandomMutationsOfARealPickleOnlyEverThrowKokoroErrors) {
  const std::vector<uint8_t> bytes = real_pickle();
  std::mt19937 rng(1234);
  size_t errors = 0;
  const size_t trials = 20000;
  for (size_t t = 0; t < trials; ++t) {
    std::vector<uint8_t> m = bytes;
    const int edits = 1 + static_cast<int>(rng() % 4);
    for (int e = 0; e < edits; ++e) m[rng() % m.size()] = static_cast<uint8_t>(rng());
    try {
      decode_with_zero_storages(m);
    } catch (const Error&) {
      ++errors;
    } catch (const std::exception& e) {
      ADD_FAILURE() << "trial " << t << ": non-kokoro exception " << e.what();
    }
  }
  EXPECT_GT(errors, trials / 2);
  std::printf("%zu of %zu mutated pickles rejected, the rest decoded\n", errors, trials);
}
