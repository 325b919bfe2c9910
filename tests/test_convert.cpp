// kokoro-convert's pieces: the KModel schema round trip through the model file, the validation errors a
// user sees, and the ONNX importer on a small synthetic graph whose expected weights are computed by hand
// (dequantization, transposes, LSTM gate reordering, scope-name translation).
#include <gtest/gtest.h>
#include <onnx/onnx_pb.h>

#include <fstream>

#include "apps/kokoro_convert/convert.h"
#include "apps/kokoro_convert/kmodel_schema.h"
#include "apps/kokoro_convert/onnx_import.h"
#include "core/assets.h"
#include "core/error.h"
#include "core/model_file.h"
#include "tests/test_util.h"

using namespace kokoro;

namespace {

nlohmann::json real_config() {
  std::ifstream in(find_assets_dir() + "/config.json");
  return nlohmann::json::parse(in);
}

// A deterministic, distinct value for every element of every tensor.
float synthetic_value(size_t tensor, int64_t i) {
  return static_cast<float>(((tensor * 7919 + static_cast<size_t>(i) * 104729) % 20011) - 10005) / 8192.0f;
}

StateDict synthetic_state(const nlohmann::json& config, bool with_optional) {
  StateDict sd;
  size_t k = 0;
  for (const ParamSpec& p : kmodel_schema(config)) {
    ++k;
    if (!p.required && !with_optional) continue;
    LoadedTensor t{p.shape, std::vector<float>(shape_numel(p.shape)), "float32"};
    for (int64_t i = 0; i < shape_numel(p.shape); ++i) t.data[i] = synthetic_value(k, i);
    sd.emplace(p.name, std::move(t));
  }
  return sd;
}

std::string error_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

}  // namespace

TEST(KModelSchema, CoversTheWholeModel) {
  int64_t params = 0, required = 0;
  for (const ParamSpec& p : kmodel_schema(real_config())) {
    params += shape_numel(p.shape);
    required += p.required;
  }
  // Kokoro-82M: 81.14 M parameters in the required tensors plus the unused ALBERT pooler and identity
  // InstanceNorm affines.
  EXPECT_EQ(required, 457);
  EXPECT_GT(params, 81'000'000);
  EXPECT_LT(params, 82'500'000);
}

TEST(Convert, FullSchemaRoundTripsBitExactly) {
  test::TempDir dir;
  const nlohmann::json config = real_config();
  const StateDict sd = synthetic_state(config, true);
  const std::string path = dir.file("synthetic.kokoro");
  const ConversionResult r = write_engine_model(sd, config, "synthetic", path);
  EXPECT_EQ(r.written, sd.size());
  EXPECT_TRUE(r.dropped.empty());
  const auto m = ModelFile::open(path);
  EXPECT_EQ(m->config(), config);
  for (const auto& [name, t] : sd) {
    const TensorView v = m->get(name, t.shape);
    ASSERT_EQ(0, std::memcmp(v.data, t.data.data(), t.data.size() * sizeof(float))) << name;
  }
}

TEST(Convert, MissingOrMisshapedTensorsAreNamed) {
  test::TempDir dir;
  const nlohmann::json config = real_config();
  StateDict sd = synthetic_state(config, false);
  sd.erase("decoder.generator.conv_post.weight");
  EXPECT_NE(error_of([&] { write_engine_model(sd, config, "x.pth", dir.file("a.kokoro")); })
                .find("missing tensor decoder.generator.conv_post.weight"),
            std::string::npos);
  sd = synthetic_state(config, false);
  sd["predictor.lstm.weight_hh_l0"].shape = {256, 1024};
  const std::string msg = error_of([&] { write_engine_model(sd, config, "x.pth", dir.file("b.kokoro")); });
  EXPECT_NE(msg.find("predictor.lstm.weight_hh_l0"), std::string::npos) << msg;
  EXPECT_NE(msg.find("[1024, 256]"), std::string::npos) << msg;
  EXPECT_FALSE(std::filesystem::exists(dir.file("b.kokoro"))) << "no half-written output after an error";

  sd = synthetic_state(config, false);
  sd["bert.embeddings.position_ids"] = LoadedTensor{{1, 512}, std::vector<float>(512), "int64"};
  const ConversionResult r = write_engine_model(sd, config, "x.pth", dir.file("c.kokoro"));
  EXPECT_EQ(r.dropped, std::vector<std::string>{"bert.embeddings.position_ids"});
  EXPECT_EQ(r.optional_missing.size(), 142u);
}

TEST(OnnxNames, TranslateExportScopesToKModelNames) {
  EXPECT_EQ(kmodel_name_from_onnx("/encoder/F0.1/conv1x1"), "predictor.F0.1.conv1x1");
  EXPECT_EQ(kmodel_name_from_onnx("/encoder/shared"), "predictor.shared");
  EXPECT_EQ(kmodel_name_from_onnx("/encoder/predictor/text_encoder/lstms.0"), "predictor.text_encoder.lstms.0");
  EXPECT_EQ(kmodel_name_from_onnx("/encoder/text_encoder/cnn.0/cnn.0.0"), "text_encoder.cnn.0.0");
  EXPECT_EQ(kmodel_name_from_onnx("/decoder/decoder/asr_res/asr_res.0"), "decoder.asr_res.0");
  EXPECT_EQ(kmodel_name_from_onnx("/encoder/bert/encoder/albert_layer_groups.0/albert_layers.0/attention/query_11"),
            "bert.encoder.albert_layer_groups.0.albert_layers.0.attention.query");
  EXPECT_EQ(kmodel_name_from_onnx("encoder.bert_encoder.bias"), "bert_encoder.bias");
  EXPECT_EQ(kmodel_name_from_onnx("decoder.decoder.generator.resblocks.0.alpha1.2"),
            "decoder.generator.resblocks.0.alpha1.2");
  EXPECT_EQ(kmodel_name_from_onnx("module.decoder.decoder.F0_conv.bias"), "decoder.F0_conv.bias");
}

namespace {

void add_init(onnx::GraphProto& g, const std::string& name, int dtype, Shape dims, const std::vector<double>& v) {
  onnx::TensorProto* t = g.add_initializer();
  t->set_name(name);
  t->set_data_type(dtype);
  for (auto d : dims) t->add_dims(d);
  std::string raw;
  for (double x : v) {
    if (dtype == onnx::TensorProto::FLOAT) {
      const float f = static_cast<float>(x);
      raw.append(reinterpret_cast<const char*>(&f), 4);
    } else if (dtype == onnx::TensorProto::INT8) {
      raw.push_back(static_cast<char>(static_cast<int8_t>(x)));
    } else {
      raw.push_back(static_cast<char>(static_cast<uint8_t>(x)));
    }
  }
  t->set_raw_data(raw);
}

onnx::NodeProto* add_node(onnx::GraphProto& g, const std::string& op, const std::string& name,
                          const std::vector<std::string>& inputs) {
  onnx::NodeProto* n = g.add_node();
  n->set_op_type(op);
  n->set_name(name);
  for (const auto& i : inputs) n->add_input(i);
  n->add_output(name + "_out");
  return n;
}

std::string write_model(const onnx::ModelProto& m, const test::TempDir& dir) {
  const std::string path = dir.file("synthetic.onnx");
  std::ofstream out(path, std::ios::binary);
  m.SerializeToOstream(&out);
  return path;
}

const LoadedTensor& at(const OnnxImport& imp, const std::string& name) {
  auto it = imp.state.find(name);
  if (it == imp.state.end()) throw Error("importer produced no " + name);
  return it->second;
}

}  // namespace

TEST(OnnxImport, DequantizesTransposesAndReordersGates) {
  onnx::ModelProto m;
  m.set_producer_name("test");
  auto* op = m.add_opset_import();
  op->set_version(20);
  onnx::GraphProto& g = *m.mutable_graph();

  // MatMulInteger, int8 [in=3, out=2], per-output-channel scale and zero point -> weight [2, 3].
  add_init(g, "onnx::MatMul_1_quantized", onnx::TensorProto::INT8, {3, 2}, {1, -2, 3, 4, -5, 6});
  add_init(g, "onnx::MatMul_1_scale", onnx::TensorProto::FLOAT, {2}, {0.5, 0.25});
  add_init(g, "zp2", onnx::TensorProto::INT8, {2}, {1, -1});
  add_node(g, "MatMulInteger", "/encoder/bert_encoder/MatMul_quant", {"x", "onnx::MatMul_1_quantized", "xz", "zp2"});
  // The shared ALBERT layer's second call names the same weight again: first one wins, no duplicate.
  add_node(g, "MatMulInteger", "/encoder/bert_encoder_1/MatMul_quant", {"x", "onnx::MatMul_1_quantized", "xz", "zp2"});

  // ConvInteger, uint8 [2, 1, 2] with scalar zero point 128 and scale 0.125.
  add_init(g, "/decoder/decoder/generator/resblocks.1/Mul_2_output_0_quantized", onnx::TensorProto::UINT8, {2, 1, 2},
           {128, 136, 120, 129});
  add_init(g, "/decoder/decoder/generator/resblocks.1/Mul_2_output_0_scale", onnx::TensorProto::FLOAT, {}, {0.125});
  add_init(g, "z128", onnx::TensorProto::UINT8, {}, {128});
  add_node(g, "ConvInteger", "/decoder/decoder/generator/resblocks.1/convs1.0/Conv_quant",
           {"x", "/decoder/decoder/generator/resblocks.1/Mul_2_output_0_quantized", "xz", "z128"});

  // DynamicQuantizeLSTM, hidden 1, input 2, bidirectional: W [2, 2, 4] in ONNX gate order (i, o, f, c).
  std::vector<double> w(16), r(8), b(16);
  for (int i = 0; i < 16; ++i) w[i] = i + 1;   // W[d][x][g] = 8d + 4x + g + 1
  for (int i = 0; i < 8; ++i) r[i] = -(i + 1);  // R[d][0][g] = -(4d + g + 1)
  for (int i = 0; i < 16; ++i) b[i] = 100 + i;  // B[d] = [Wb (i,o,f,c), Rb (i,o,f,c)]
  add_init(g, "onnx::LSTM_5_quantized", onnx::TensorProto::INT8, {2, 2, 4}, w);
  add_init(g, "onnx::LSTM_5_scale", onnx::TensorProto::FLOAT, {2}, {1.0, 2.0});
  add_init(g, "onnx::LSTM_6_quantized", onnx::TensorProto::INT8, {2, 1, 4}, r);
  add_init(g, "onnx::LSTM_6_scale", onnx::TensorProto::FLOAT, {2}, {1.0, 1.0});
  add_init(g, "lz", onnx::TensorProto::INT8, {2}, {0, 1});
  add_init(g, "onnx::LSTM_4", onnx::TensorProto::FLOAT, {2, 8}, b);
  auto* lstm = add_node(g, "DynamicQuantizeLSTM", "/encoder/text_encoder/lstm/LSTM_quant",
                        {"x", "onnx::LSTM_5_quantized", "onnx::LSTM_6_quantized", "onnx::LSTM_4", "", "", "", "",
                         "onnx::LSTM_5_scale", "lz", "onnx::LSTM_6_scale", "lz"});
  auto* hs = lstm->add_attribute();
  hs->set_name("hidden_size");
  hs->set_i(1);

  // A parameter that kept its name.
  add_init(g, "decoder.decoder.generator.resblocks.0.alpha1.0", onnx::TensorProto::FLOAT, {1, 2, 1}, {0.5, 1.5});

  test::TempDir dir;
  const OnnxImport imp = import_kokoro_onnx(write_model(m, dir));

  const LoadedTensor& lin = at(imp, "bert_encoder.weight");
  EXPECT_EQ(lin.shape, (Shape{2, 3}));
  // weight[o][i] = (q[i][o] - zp[o]) * scale[o]
  const std::vector<float> lin_expect{(1 - 1) * 0.5f, (3 - 1) * 0.5f, (-5 - 1) * 0.5f,
                                      (-2 + 1) * 0.25f, (4 + 1) * 0.25f, (6 + 1) * 0.25f};
  EXPECT_EQ(lin.data, lin_expect);

  const LoadedTensor& conv = at(imp, "decoder.generator.resblocks.1.convs1.0.weight");
  EXPECT_EQ(conv.shape, (Shape{2, 1, 2}));
  EXPECT_EQ(conv.data, (std::vector<float>{0.0f, 1.0f, -1.0f, 0.125f}));

  // torch gate order (i, f, g, o) takes ONNX rows (i=0, f=2, c=3, o=1).
  const LoadedTensor& wih = at(imp, "text_encoder.lstm.weight_ih_l0");
  EXPECT_EQ(wih.shape, (Shape{4, 2}));
  EXPECT_EQ(wih.data, (std::vector<float>{1, 5, 3, 7, 4, 8, 2, 6}));
  const LoadedTensor& wih_r = at(imp, "text_encoder.lstm.weight_ih_l0_reverse");  // (q - 1) * 2
  EXPECT_EQ(wih_r.data, (std::vector<float>{16, 24, 20, 28, 22, 30, 18, 26}));
  const LoadedTensor& whh_r = at(imp, "text_encoder.lstm.weight_hh_l0_reverse");  // R[1] = -5..-8, minus zp 1
  EXPECT_EQ(whh_r.data, (std::vector<float>{-6, -8, -9, -7}));
  EXPECT_EQ(at(imp, "text_encoder.lstm.bias_ih_l0").data, (std::vector<float>{100, 102, 103, 101}));
  EXPECT_EQ(at(imp, "text_encoder.lstm.bias_hh_l0_reverse").data, (std::vector<float>{112, 114, 115, 113}));

  EXPECT_EQ(at(imp, "decoder.generator.resblocks.0.alpha1.0").data, (std::vector<float>{0.5f, 1.5f}));
  EXPECT_EQ(imp.state.count("bert_encoder_1.weight"), 0u);
}

TEST(OnnxImport, CorruptFilesGiveClearErrors) {
  test::TempDir dir;
  test::write_bytes(dir.file("garbage.onnx"), std::vector<char>(1000, '\x07'));
  EXPECT_NE(error_of([&] { import_kokoro_onnx(dir.file("garbage.onnx")); }).find("garbage.onnx"), std::string::npos);
  test::write_bytes(dir.file("empty.onnx"), {});
  EXPECT_NE(error_of([&] { import_kokoro_onnx(dir.file("empty.onnx")); }).find("empty.onnx"), std::string::npos);
  EXPECT_NE(error_of([&] { import_kokoro_onnx(dir.file("absent.onnx")); }).find("cannot open"), std::string::npos);
}
