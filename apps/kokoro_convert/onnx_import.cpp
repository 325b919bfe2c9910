#include "apps/kokoro_convert/onnx_import.h"

#include <google/protobuf/io/coded_stream.h>
#include <google/protobuf/io/zero_copy_stream_impl.h>
#include <onnx/onnx_pb.h>

#include <climits>
#include <cstring>
#include <fcntl.h>
#include <unistd.h>

#include "core/error.h"

namespace kokoro {

namespace {

bool starts_with(const std::string& s, const std::string& p) { return s.compare(0, p.size(), p) == 0; }
bool ends_with(const std::string& s, const std::string& p) {
  return s.size() >= p.size() && s.compare(s.size() - p.size(), p.size(), p) == 0;
}

// An initializer decoded to doubles (exact for every integer and float type we meet) with its shape.
struct Raw {
  Shape shape;
  std::vector<double> values;
  int32_t dtype = 0;
};

template <typename T>
void decode_raw(const std::string& bytes, size_t n, std::vector<double>& out) {
  if (bytes.size() != n * sizeof(T)) throw Error("raw_data size mismatch");
  out.resize(n);
  for (size_t i = 0; i < n; ++i) {
    T v;
    std::memcpy(&v, bytes.data() + i * sizeof(T), sizeof(T));
    out[i] = static_cast<double>(v);
  }
}

Raw decode(const onnx::TensorProto& t) {
  if (t.data_location() == onnx::TensorProto::EXTERNAL)
    throw Error("initializer " + t.name() + " uses external data, which is not supported");
  Raw r;
  r.dtype = t.data_type();
  for (auto d : t.dims()) r.shape.push_back(d);
  const size_t n = static_cast<size_t>(shape_numel(r.shape));
  const bool raw = t.has_raw_data();
  switch (t.data_type()) {
    case onnx::TensorProto::FLOAT:
      if (raw) decode_raw<float>(t.raw_data(), n, r.values);
      else r.values.assign(t.float_data().begin(), t.float_data().end());
      break;
    case onnx::TensorProto::INT8:
      if (raw) decode_raw<int8_t>(t.raw_data(), n, r.values);
      else r.values.assign(t.int32_data().begin(), t.int32_data().end());
      break;
    case onnx::TensorProto::UINT8:
      if (raw) decode_raw<uint8_t>(t.raw_data(), n, r.values);
      else r.values.assign(t.int32_data().begin(), t.int32_data().end());
      break;
    case onnx::TensorProto::INT32:
      if (raw) decode_raw<int32_t>(t.raw_data(), n, r.values);
      else r.values.assign(t.int32_data().begin(), t.int32_data().end());
      break;
    case onnx::TensorProto::INT64:
      if (raw) decode_raw<int64_t>(t.raw_data(), n, r.values);
      else r.values.assign(t.int64_data().begin(), t.int64_data().end());
      break;
    default:
      throw Error("initializer " + t.name() + ": unsupported data type " + std::to_string(t.data_type()));
  }
  if (r.values.size() != n) throw Error("initializer " + t.name() + ": element count does not match its shape");
  return r;
}

std::vector<std::string> split(const std::string& s, char sep) {
  std::vector<std::string> parts(1);
  for (char c : s) {
    if (c == sep) parts.emplace_back();
    else parts.back().push_back(c);
  }
  return parts;
}

class Importer {
 public:
  explicit Importer(const onnx::ModelProto& model) : model_(model) {
    for (const auto& t : model.graph().initializer()) init_[t.name()] = &t;
  }

  OnnxImport run() {
    OnnxImport out;
    out.producer = model_.producer_name() + " " + model_.producer_version();
    for (const auto& o : model_.opset_import())
      if (o.domain().empty() || o.domain() == "ai.onnx") out.opset = o.version();
    for (const auto& node : model_.graph().node()) import_node(node);
    import_named_initializers();
    out.state = std::move(state_);
    out.notes = std::move(notes_);
    out.quantized_tensors = quantized_;
    out.float_tensors = float_;
    return out;
  }

 private:
  const onnx::ModelProto& model_;
  std::map<std::string, const onnx::TensorProto*> init_;
  StateDict state_;
  std::vector<std::string> notes_;
  int quantized_ = 0, float_ = 0;

  bool is_init(const std::string& name) const { return init_.count(name) != 0; }
  Raw raw(const std::string& name) const {
    auto it = init_.find(name);
    if (it == init_.end()) throw Error("missing initializer " + name);
    return decode(*it->second);
  }

  static std::string scope_of(const onnx::NodeProto& node) {
    const auto slash = node.name().rfind('/');
    return slash == std::string::npos ? "" : node.name().substr(0, slash);
  }

  // Dequantizes q with a zero point and scale that are scalars or vectors along `axis`.
  Tensor dequantize(const std::string& q_name, const std::string& zp_name, int axis) {
    const Raw q = raw(q_name);
    if (q.dtype == onnx::TensorProto::FLOAT) {
      ++float_;
      return to_tensor(q);
    }
    if (!ends_with(q_name, "_quantized")) throw Error("quantized weight " + q_name + " has no _quantized suffix");
    const Raw scale = raw(q_name.substr(0, q_name.size() - 10) + "_scale");
    Raw zp;
    if (!zp_name.empty()) zp = raw(zp_name);
    const int64_t n = shape_numel(q.shape);
    const int64_t ax = axis < 0 ? static_cast<int64_t>(q.shape.size()) + axis : axis;
    int64_t inner = 1;
    for (size_t d = ax + 1; d < q.shape.size(); ++d) inner *= q.shape[d];
    const int64_t axis_len = q.shape.empty() ? 1 : q.shape[ax];
    auto at = [&](const Raw& r, int64_t i) -> double {
      if (r.values.empty()) return 0.0;
      if (r.values.size() == 1) return r.values[0];
      if (static_cast<int64_t>(r.values.size()) != axis_len)
        throw Error("quantization parameters of " + q_name + " match neither a scalar nor axis " + std::to_string(ax));
      return r.values[(i / inner) % axis_len];
    };
    Tensor t(q.shape);
    for (int64_t i = 0; i < n; ++i) t[i] = static_cast<float>((q.values[i] - at(zp, i)) * at(scale, i));
    ++quantized_;
    return t;
  }

  static Tensor to_tensor(const Raw& r) {
    Tensor t(r.shape);
    for (int64_t i = 0; i < t.numel(); ++i) t[i] = static_cast<float>(r.values[i]);
    return t;
  }

  static Tensor transpose2d(const Tensor& a) {
    if (a.rank() != 2) throw Error("expected a matrix to transpose, got " + shape_to_string(a.shape()));
    Tensor t({a.dim(1), a.dim(0)});
    t.matrix() = a.matrix().transpose();
    return t;
  }

  void put(const std::string& name, Tensor t, const std::string& how) {
    if (state_.count(name)) return;  // ALBERT's shared layer appears 12 times; the first one wins
    notes_.push_back(name + " " + shape_to_string(t.shape()) + " <- " + how);
    state_.emplace(name, LoadedTensor{t.shape(), std::vector<float>(t.data(), t.data() + t.numel()), "float32"});
  }

  std::string input(const onnx::NodeProto& node, int i) const {
    return i < node.input_size() ? node.input(i) : std::string();
  }

  void import_node(const onnx::NodeProto& node) {
    const std::string& op = node.op_type();
    const std::string scope = scope_of(node);
    if (scope.find("/istft") != std::string::npos || scope.find("/stft") != std::string::npos) return;
    auto module = [&] { return kmodel_name_from_onnx(scope); };
    if (op == "ConvInteger" && is_init(input(node, 1))) {
      put(module() + ".weight", dequantize(input(node, 1), input(node, 3), 0), node.name());
    } else if (op == "MatMulInteger" && is_init(input(node, 1))) {
      put(module() + ".weight", transpose2d(dequantize(input(node, 1), input(node, 3), -1)), node.name() + " (transposed)");
    } else if ((op == "Conv" || op == "ConvTranspose") && is_init(input(node, 1))) {
      put(module() + ".weight", dequantize(input(node, 1), "", 0), node.name());
    } else if (op == "MatMul" && is_init(input(node, 1))) {
      put(module() + ".weight", transpose2d(dequantize(input(node, 1), "", -1)), node.name() + " (transposed)");
    } else if (op == "Gather" && is_init(input(node, 0)) && !module().empty() &&
               raw(input(node, 0)).shape.size() == 2) {
      put(module() + ".weight", dequantize(input(node, 0), zero_point_of(input(node, 0)), 0), node.name());
    } else if (op == "DynamicQuantizeLSTM" || op == "LSTM") {
      import_lstm(node, module());
    }
  }

  std::string zero_point_of(const std::string& q_name) const {
    if (!ends_with(q_name, "_quantized")) return "";
    const std::string zp = q_name.substr(0, q_name.size() - 10) + "_zero_point";
    return is_init(zp) ? zp : "";
  }

  // ONNX gate order is (i, o, f, c); torch's is (i, f, g, o) with g the cell candidate.
  static constexpr int kOnnxGateForTorchGate[4] = {0, 2, 3, 1};

  void import_lstm(const onnx::NodeProto& node, const std::string& module) {
    const bool quantized = node.op_type() == "DynamicQuantizeLSTM";
    int64_t hidden = 0;
    for (const auto& a : node.attribute())
      if (a.name() == "hidden_size") hidden = a.i();
    if (hidden <= 0) throw Error("LSTM " + node.name() + " has no hidden_size");
    const Raw w = raw(input(node, 1)), r = raw(input(node, 2)), b = raw(input(node, 3));
    Raw ws, wz, rs, rz;
    if (quantized) {
      ws = raw(input(node, 8)), wz = raw(input(node, 9)), rs = raw(input(node, 10)), rz = raw(input(node, 11));
      quantized_ += 2;
    } else {
      float_ += 2;
    }
    const int64_t dirs = w.shape.at(0);
    // onnxruntime's DynamicQuantizeLSTM stores W as [dir, in, 4H]; standard ONNX LSTM as [dir, 4H, in].
    const int64_t in = quantized ? w.shape.at(1) : w.shape.at(2);
    const int64_t h4 = 4 * hidden;
    auto weight = [&](const Raw& m, const Raw& scale, const Raw& zp, int64_t d, int64_t cols) {
      Tensor t({h4, cols});
      for (int tg = 0; tg < 4; ++tg)
        for (int64_t h = 0; h < hidden; ++h)
          for (int64_t c = 0; c < cols; ++c) {
            const int64_t row = kOnnxGateForTorchGate[tg] * hidden + h;
            const int64_t idx = quantized ? (d * cols + c) * h4 + row : (d * h4 + row) * cols + c;
            double v = m.values[idx];
            if (quantized) v = (v - zp.values.at(d)) * scale.values.at(d);
            t[(tg * hidden + h) * cols + c] = static_cast<float>(v);
          }
      return t;
    };
    auto bias = [&](int64_t d, int64_t half) {
      Tensor t({h4});
      for (int tg = 0; tg < 4; ++tg)
        for (int64_t h = 0; h < hidden; ++h)
          t[tg * hidden + h] = static_cast<float>(b.values[d * 2 * h4 + half * h4 + kOnnxGateForTorchGate[tg] * hidden + h]);
      return t;
    };
    for (int64_t d = 0; d < dirs; ++d) {
      const std::string sfx = d == 0 ? "_l0" : "_l0_reverse";
      put(module + ".weight_ih" + sfx, weight(w, ws, wz, d, in), node.name() + " W (gates iofc->ifgo)");
      put(module + ".weight_hh" + sfx, weight(r, rs, rz, d, hidden), node.name() + " R (gates iofc->ifgo)");
      put(module + ".bias_ih" + sfx, bias(d, 0), node.name() + " Wb");
      put(module + ".bias_hh" + sfx, bias(d, 1), node.name() + " Rb");
    }
  }

  // Initializers that kept their module names: biases, LayerNorm gains, Snake alphas, embeddings.
  void import_named_initializers() {
    for (const auto& [name, t] : init_) {
      if (name.empty() || name[0] == '/' || starts_with(name, "onnx::")) continue;
      if (!starts_with(name, "encoder.") && !starts_with(name, "decoder.")) continue;
      if (ends_with(name, "_quantized") || ends_with(name, "_scale") || ends_with(name, "_zero_point")) continue;
      if (name.find(".stft.") != std::string::npos) continue;  // the export's iSTFT basis, not a parameter
      if (t->data_type() != onnx::TensorProto::FLOAT) continue;
      ++float_;
      put(kmodel_name_from_onnx(name), to_tensor(decode(*t)), name);
    }
  }
};

}  // namespace

std::string kmodel_name_from_onnx(const std::string& onnx_name) {
  std::vector<std::string> parts;
  if (!onnx_name.empty() && onnx_name[0] == '/') {
    // Scope path: a component that repeats its parent with a suffix ("cnn.0" then "cnn.0.0") is the
    // parent's child in torch's naming, so it replaces the parent.
    for (std::string c : split(onnx_name.substr(1), '/')) {
      if (c.empty()) continue;
      // ALBERT's shared layer is called 12 times; the export names calls 2..12 "query_1".."query_11".
      const auto us = c.rfind('_');
      if (us != std::string::npos && us + 1 < c.size() &&
          c.find_first_not_of("0123456789", us + 1) == std::string::npos)
        c = c.substr(0, us);
      if (!parts.empty() && starts_with(c, parts.back() + ".")) parts.back() = c;
      else parts.push_back(c);
    }
  } else {
    parts = {onnx_name};
  }
  std::string name;
  for (const auto& p : parts) name += (name.empty() ? "" : ".") + p;
  while (starts_with(name, "module.")) name = name.substr(7);
  static const std::pair<const char*, const char*> kPrefixes[] = {
      {"encoder.bert_encoder", "bert_encoder"}, {"encoder.bert", "bert"},
      {"encoder.predictor", "predictor"},       {"encoder.text_encoder", "text_encoder"},
      {"decoder.decoder", "decoder"},
  };
  for (const auto& [from, to] : kPrefixes) {
    const std::string f = from;
    if (name == f || starts_with(name, f + ".")) return to + name.substr(f.size());
  }
  // Everything else under the export's "encoder" wrapper belongs to the prosody predictor (F0.*, N.*,
  // F0_proj, N_proj, shared).
  if (starts_with(name, "encoder.")) return "predictor." + name.substr(8);
  return name;
}

OnnxImport import_kokoro_onnx(const std::string& path) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) throw Error("ONNX file " + path + ": cannot open: " + std::strerror(errno));
  onnx::ModelProto model;
  {
    google::protobuf::io::FileInputStream raw(fd);
    raw.SetCloseOnDelete(true);
    google::protobuf::io::CodedInputStream coded(&raw);
    coded.SetTotalBytesLimit(INT_MAX);
    if (!model.ParseFromCodedStream(&coded) || !coded.ConsumedEntireMessage())
      throw Error("ONNX file " + path + ": not a valid ONNX model (protobuf parse failed; truncated?)");
  }
  if (!model.has_graph() || model.graph().node_size() == 0) throw Error("ONNX file " + path + ": no graph");
  try {
    return Importer(model).run();
  } catch (const Error& e) {
    throw Error("ONNX file " + path + ": " + e.what());
  }
}

}  // namespace kokoro
