#include "core/import/pickle_reader.h"

#include <bit>
#include <cstdio>
#include <cstring>
#include <optional>
#include <unordered_map>

#include "core/error.h"

namespace kokoro::ckpt {

namespace {

constexpr size_t kMaxGlobalNameLength = 256;
constexpr size_t kMaxStorageKeyLength = 256;

// The callables a torch.save pickle may REDUCE, and the storage classes its persistent ids name.
enum class Callable { OrderedDict, RebuildTensorV2, RebuildTensor, RebuildParameter, RebuildParameterWithState };

std::optional<Callable> callable_for(const std::string& global) {
  if (global == "collections.OrderedDict") return Callable::OrderedDict;
  if (global == "torch._utils._rebuild_tensor_v2") return Callable::RebuildTensorV2;
  if (global == "torch._utils._rebuild_tensor") return Callable::RebuildTensor;
  if (global == "torch._utils._rebuild_parameter") return Callable::RebuildParameter;
  if (global == "torch._utils._rebuild_parameter_with_state") return Callable::RebuildParameterWithState;
  return std::nullopt;
}

std::optional<DType> storage_dtype_for(const std::string& global) {
  static const std::pair<const char*, DType> kStorages[] = {
      {"torch.FloatStorage", DType::F32}, {"torch.HalfStorage", DType::F16},  {"torch.BFloat16Storage", DType::BF16},
      {"torch.DoubleStorage", DType::F64}, {"torch.LongStorage", DType::I64}, {"torch.IntStorage", DType::I32},
      {"torch.ShortStorage", DType::I16},  {"torch.CharStorage", DType::I8},  {"torch.ByteStorage", DType::U8},
      {"torch.BoolStorage", DType::Bool},
  };
  for (const auto& [name, type] : kStorages)
    if (global == name) return type;
  return std::nullopt;
}

class Machine {
 public:
  Machine(const uint8_t* bytes, size_t size, const std::string& what) : p_(bytes), size_(size), what_(what) {}

  Unpickled run() {
    for (size_t ops = 0;; ++ops) {
      if (ops >= kMaxPickleOps) throw fail("more than " + std::to_string(kMaxPickleOps) + " opcodes");
      op_pos_ = pos_;
      const uint8_t op = u8();
      if (op == '.') {  // STOP
        out_.root = pop();
        return std::move(out_);
      }
      step(op);
    }
  }

 private:
  Error fail(const std::string& msg) const {
    return Error(what_ + ": pickle byte " + std::to_string(op_pos_) + ": " + msg);
  }

  // ---- reading the byte stream ----
  void need(uint64_t n) const {
    if (n > size_ - pos_) throw fail("truncated (needs " + std::to_string(n) + " more bytes)");
  }
  uint8_t u8() {
    need(1);
    return p_[pos_++];
  }
  template <typename T>
  T le() {
    need(sizeof(T));
    T v;
    std::memcpy(&v, p_ + pos_, sizeof(T));  // x86-64: little-endian host, as pickle's binary ints are
    pos_ += sizeof(T);
    return v;
  }
  std::string bytes(uint64_t n) {
    need(n);
    std::string s(reinterpret_cast<const char*>(p_ + pos_), static_cast<size_t>(n));
    pos_ += static_cast<size_t>(n);
    return s;
  }
  std::string line() {
    const size_t start = pos_;
    while (true) {
      if (pos_ - start > kMaxGlobalNameLength) throw fail("GLOBAL name too long");
      if (u8() == '\n') return std::string(reinterpret_cast<const char*>(p_ + start), pos_ - 1 - start);
    }
  }

  // ---- objects, stack, marks, memo ----
  uint32_t make(Kind kind) {
    out_.values.push_back(Value{});
    out_.values.back().kind = kind;
    return static_cast<uint32_t>(out_.values.size() - 1);
  }
  uint32_t make_int(int64_t v) {
    const uint32_t i = make(Kind::Int);
    out_.values[i].integer = v;
    return i;
  }
  uint32_t make_text(Kind kind, std::string s) {
    const uint32_t i = make(kind);
    out_.values[i].text = std::move(s);
    return i;
  }
  uint32_t make_container(Kind kind, std::vector<uint32_t> items) {
    const uint32_t i = make(kind);
    out_.values[i].items = std::move(items);
    return i;
  }
  Value& val(uint32_t i) { return out_.values[i]; }

  size_t floor() const { return marks_.empty() ? 0 : marks_.back(); }
  void push(uint32_t v) { stack_.push_back(v); }
  uint32_t pop() {
    if (stack_.size() <= floor()) throw fail("stack underflow");
    const uint32_t v = stack_.back();
    stack_.pop_back();
    return v;
  }
  uint32_t top() const {
    if (stack_.size() <= floor()) throw fail("stack underflow");
    return stack_.back();
  }
  std::vector<uint32_t> pop_mark() {
    if (marks_.empty()) throw fail("no MARK on the stack");
    const size_t m = marks_.back();
    marks_.pop_back();
    std::vector<uint32_t> items(stack_.begin() + static_cast<std::ptrdiff_t>(m), stack_.end());
    stack_.resize(m);
    return items;
  }
  void memo_put(uint32_t index) { memo_[index] = top(); }
  void memo_get(uint32_t index) {
    auto it = memo_.find(index);
    if (it == memo_.end()) throw fail("memo entry " + std::to_string(index) + " was never stored");
    push(it->second);
  }

  Value& expect(uint32_t i, Kind kind, const char* role) {
    if (val(i).kind != kind)
      throw fail(std::string(role) + " is a " + kind_name(val(i).kind) + ", expected a " + kind_name(kind));
    return val(i);
  }
  const std::string& expect_string(uint32_t i, const char* role) { return expect(i, Kind::String, role).text; }
  Shape int_tuple(uint32_t i, const char* role) {
    Shape s;
    for (uint32_t item : expect(i, Kind::Tuple, role).items) s.push_back(expect(item, Kind::Int, role).integer);
    return s;
  }

  // ---- the opcodes ----
  void step(uint8_t op) {
    switch (op) {
      case 0x80: {  // PROTO
        const uint8_t proto = u8();
        if (proto > 5) throw fail("pickle protocol " + std::to_string(proto) + " is not supported");
        break;
      }
      case 0x95: le<uint64_t>(); break;  // FRAME: a hint for buffered readers; we hold everything already
      case '(': marks_.push_back(stack_.size()); break;  // MARK
      case '0':                                        // POP (a MARK on top is popped like Python does)
        if (!marks_.empty() && marks_.back() == stack_.size()) marks_.pop_back();
        else pop();
        break;
      case '1': pop_mark(); break;   // POP_MARK
      case '2': push(top()); break;  // DUP
      case '}': push(make(Kind::Dict)); break;
      case ']': push(make(Kind::List)); break;
      case ')': push(make(Kind::Tuple)); break;
      case 'd': {  // DICT
        std::vector<uint32_t> items = pop_mark();
        if (items.size() % 2) throw fail("DICT with an odd number of items");
        push(make_container(Kind::Dict, std::move(items)));
        break;
      }
      case 'l': push(make_container(Kind::List, pop_mark())); break;
      case 't': push(make_container(Kind::Tuple, pop_mark())); break;
      case 0x85:
      case 0x86:
      case 0x87: {  // TUPLE1..3
        std::vector<uint32_t> items(op - 0x84);
        for (size_t i = items.size(); i-- > 0;) items[i] = pop();
        push(make_container(Kind::Tuple, std::move(items)));
        break;
      }
      case 'a': {  // APPEND
        const uint32_t item = pop();
        expect(top(), Kind::List, "APPEND target").items.push_back(item);
        break;
      }
      case 'e': {  // APPENDS
        std::vector<uint32_t> items = pop_mark();
        auto& list = expect(top(), Kind::List, "APPENDS target").items;
        list.insert(list.end(), items.begin(), items.end());
        break;
      }
      case 's': {  // SETITEM
        const uint32_t value = pop();
        const uint32_t key = pop();
        auto& dict = expect(top(), Kind::Dict, "SETITEM target").items;
        dict.push_back(key);
        dict.push_back(value);
        break;
      }
      case 'u': {  // SETITEMS
        std::vector<uint32_t> items = pop_mark();
        if (items.size() % 2) throw fail("SETITEMS with an odd number of items");
        auto& dict = expect(top(), Kind::Dict, "SETITEMS target").items;
        dict.insert(dict.end(), items.begin(), items.end());
        break;
      }
      case 'J': push(make_int(le<int32_t>())); break;   // BININT
      case 'K': push(make_int(u8())); break;            // BININT1
      case 'M': push(make_int(le<uint16_t>())); break;  // BININT2
      case 0x8a: push(make_int(long_bytes(u8()))); break;  // LONG1
      case 0x8b: {                                         // LONG4
        const int32_t n = le<int32_t>();
        if (n < 0) throw fail("negative LONG4 length");
        push(make_int(long_bytes(static_cast<uint32_t>(n))));
        break;
      }
      case 'G': {  // BINFLOAT, big-endian
        const uint64_t bits = __builtin_bswap64(le<uint64_t>());
        const uint32_t i = make(Kind::Float);
        val(i).real = std::bit_cast<double>(bits);
        push(i);
        break;
      }
      case 'N': push(make(Kind::None)); break;
      case 0x88:
      case 0x89: {  // NEWTRUE, NEWFALSE
        const uint32_t i = make(Kind::Bool);
        val(i).integer = op == 0x88;
        push(i);
        break;
      }
      case 'X': push(make_text(Kind::String, bytes(le<uint32_t>()))); break;     // BINUNICODE
      case 0x8c: push(make_text(Kind::String, bytes(u8()))); break;             // SHORT_BINUNICODE
      case 0x8d: push(make_text(Kind::String, bytes(le<uint64_t>()))); break;   // BINUNICODE8
      case 'U': push(make_text(Kind::String, bytes(u8()))); break;              // SHORT_BINSTRING
      case 'T': {                                                               // BINSTRING
        const int32_t n = le<int32_t>();
        if (n < 0) throw fail("negative BINSTRING length");
        push(make_text(Kind::String, bytes(static_cast<uint32_t>(n))));
        break;
      }
      case 'C': push(make_text(Kind::Bytes, bytes(u8()))); break;            // SHORT_BINBYTES
      case 'B': push(make_text(Kind::Bytes, bytes(le<uint32_t>()))); break;  // BINBYTES
      case 0x8e: push(make_text(Kind::Bytes, bytes(le<uint64_t>()))); break; // BINBYTES8
      case 'c': {  // GLOBAL
        std::string module = line();
        std::string name = line();
        push(make_global(module, name));
        break;
      }
      case 0x93: {  // STACK_GLOBAL
        const uint32_t name = pop();
        const uint32_t module = pop();
        push(make_global(expect_string(module, "STACK_GLOBAL module"), expect_string(name, "STACK_GLOBAL name")));
        break;
      }
      case 'Q': push(persistent_load(pop())); break;  // BINPERSID
      case 'R': {                                     // REDUCE
        const uint32_t args = pop();
        const uint32_t callable = pop();
        push(reduce(callable, args));
        break;
      }
      case 'b': {  // BUILD: object state. On a dict (a state_dict's _metadata attribute) it is not data.
        pop();
        const Kind target = val(top()).kind;
        if (target != Kind::Dict) throw fail(std::string("BUILD on a ") + kind_name(target) + " is not supported");
        break;
      }
      case 'h': memo_get(u8()); break;              // BINGET
      case 'j': memo_get(le<uint32_t>()); break;    // LONG_BINGET
      case 'q': memo_put(u8()); break;              // BINPUT
      case 'r': memo_put(le<uint32_t>()); break;    // LONG_BINPUT
      case 0x94: memo_put(static_cast<uint32_t>(memo_.size())); break;  // MEMOIZE
      default: {
        char hex[8];
        std::snprintf(hex, sizeof hex, "0x%02x", op);
        throw fail(std::string("unsupported opcode ") + hex);
      }
    }
  }

  int64_t long_bytes(uint32_t n) {
    if (n > 8) throw fail("integer of " + std::to_string(n) + " bytes is too large");
    need(n);
    uint64_t v = 0;
    for (uint32_t i = 0; i < n; ++i) v |= static_cast<uint64_t>(p_[pos_ + i]) << (8 * i);
    if (n > 0 && n < 8 && (p_[pos_ + n - 1] & 0x80)) v |= ~uint64_t{0} << (8 * n);  // sign-extend
    pos_ += n;
    return static_cast<int64_t>(v);
  }

  uint32_t make_global(const std::string& module, const std::string& name) {
    const std::string full = module + "." + name;
    if (!callable_for(full) && !storage_dtype_for(full))
      throw fail("global " + full + " is not allowed (only plain tensors and dicts are read)");
    return make_text(Kind::Global, full);
  }

  // torch's persistent id for a storage: ('storage', <StorageClass>, key, location, numel).
  uint32_t persistent_load(uint32_t pid) {
    const Value& t = expect(pid, Kind::Tuple, "persistent id");
    if (t.items.size() != 5) throw fail("persistent id is not a 5-tuple");
    const std::vector<uint32_t> f = t.items;
    if (expect_string(f[0], "persistent id tag") != "storage") throw fail("persistent id is not a storage");
    const auto dtype = storage_dtype_for(expect(f[1], Kind::Global, "storage type").text);
    if (!dtype) throw fail("storage type " + val(f[1]).text + " is not a storage class");
    const std::string key = expect_string(f[2], "storage key");
    expect_string(f[3], "storage location");
    const int64_t numel = expect(f[4], Kind::Int, "storage size").integer;
    if (key.empty() || key.size() > kMaxStorageKeyLength) throw fail("bad storage key");
    int64_t nbytes;
    if (numel < 0 || __builtin_mul_overflow(numel, static_cast<int64_t>(dtype_size(*dtype)), &nbytes))
      throw fail("storage " + key + " has an impossible size " + std::to_string(numel));

    auto [it, fresh] = storage_by_key_.try_emplace(key, static_cast<uint32_t>(out_.storages.size()));
    if (fresh) {
      out_.storages.push_back(StorageRef{key, *dtype, numel});
    } else {
      const StorageRef& seen = out_.storages[it->second];
      if (seen.dtype != *dtype || seen.numel != numel)
        throw fail("storage " + key + " is declared twice with different types or sizes");
    }
    const uint32_t i = make(Kind::Storage);
    val(i).integer = it->second;
    return i;
  }

  uint32_t reduce(uint32_t callable_index, uint32_t args_index) {
    const std::string global = expect(callable_index, Kind::Global, "REDUCE callable").text;
    const std::vector<uint32_t> args = expect(args_index, Kind::Tuple, "REDUCE arguments").items;
    const auto callable = callable_for(global);
    if (!callable) throw fail(global + " cannot be called");
    auto arity = [&](size_t lo, size_t hi) {
      if (args.size() < lo || args.size() > hi)
        throw fail(global + " called with " + std::to_string(args.size()) + " arguments");
    };
    switch (*callable) {
      case Callable::OrderedDict:
        arity(0, 0);
        return make(Kind::Dict);
      case Callable::RebuildTensorV2:
        // (storage, offset, size, stride, requires_grad, backward_hooks[, metadata])
        arity(6, 7);
        expect(args[4], Kind::Bool, "requires_grad");
        return make_tensor(args);
      case Callable::RebuildTensor:  // (storage, offset, size, stride)
        arity(4, 4);
        return make_tensor(args);
      case Callable::RebuildParameter:           // (data, requires_grad, backward_hooks)
      case Callable::RebuildParameterWithState:  // (..., state)
        arity(*callable == Callable::RebuildParameter ? 3 : 4, *callable == Callable::RebuildParameter ? 3 : 4);
        expect(args[0], Kind::Tensor, "parameter data");
        return args[0];
    }
    throw fail("unreachable");
  }

  uint32_t make_tensor(const std::vector<uint32_t>& args) {
    TensorRef t;
    t.storage = static_cast<uint32_t>(expect(args[0], Kind::Storage, "tensor storage").integer);
    t.layout.offset = expect(args[1], Kind::Int, "tensor storage offset").integer;
    t.layout.shape = int_tuple(args[2], "tensor size");
    t.layout.stride = int_tuple(args[3], "tensor stride");
    const StorageRef& s = out_.storages[t.storage];
    check_layout(t.layout, s.numel, what_ + ": pickle byte " + std::to_string(op_pos_) + ": tensor on storage " + s.key);
    const uint32_t i = make(Kind::Tensor);
    val(i).integer = static_cast<int64_t>(out_.tensors.size());
    out_.tensors.push_back(std::move(t));
    return i;
  }

  const uint8_t* p_;
  size_t size_;
  const std::string& what_;
  size_t pos_ = 0;
  size_t op_pos_ = 0;
  Unpickled out_;
  std::vector<uint32_t> stack_;
  std::vector<size_t> marks_;
  std::unordered_map<uint32_t, uint32_t> memo_;
  std::unordered_map<std::string, uint32_t> storage_by_key_;
};

}  // namespace

const char* kind_name(Kind k) {
  switch (k) {
    case Kind::None: return "None";
    case Kind::Bool: return "bool";
    case Kind::Int: return "int";
    case Kind::Float: return "float";
    case Kind::String: return "str";
    case Kind::Bytes: return "bytes";
    case Kind::Tuple: return "tuple";
    case Kind::List: return "list";
    case Kind::Dict: return "dict";
    case Kind::Global: return "global";
    case Kind::Storage: return "storage";
    case Kind::Tensor: return "tensor";
  }
  return "?";
}

Unpickled unpickle(const uint8_t* bytes, size_t size, const std::string& what) {
  return Machine(bytes, size, what).run();
}

}  // namespace kokoro::ckpt
