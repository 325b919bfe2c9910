#include "apps/kokoro_convert/kmodel_schema.h"

namespace kokoro {

namespace {

class Builder {
 public:
  std::vector<ParamSpec> specs;
  void add(const std::string& name, Shape shape, bool required = true) { specs.push_back({name, std::move(shape), required}); }
  void linear(const std::string& p, int64_t out, int64_t in, bool bias = true) {
    add(p + ".weight", {out, in});
    if (bias) add(p + ".bias", {out});
  }
  void conv(const std::string& p, int64_t out, int64_t in, int64_t k, bool bias = true) {
    add(p + ".weight", {out, in, k});
    if (bias) add(p + ".bias", {out});
  }
  void bilstm(const std::string& p, int64_t in, int64_t hidden) {
    for (const char* sfx : {"_l0", "_l0_reverse"}) {
      add(p + ".weight_ih" + sfx, {4 * hidden, in});
      add(p + ".weight_hh" + sfx, {4 * hidden, hidden});
      add(p + ".bias_ih" + sfx, {4 * hidden});
      add(p + ".bias_hh" + sfx, {4 * hidden});
    }
  }
  void adain(const std::string& p, int64_t style, int64_t channels) {
    linear(p + ".fc", 2 * channels, style);
    add(p + ".norm.weight", {channels}, false);
    add(p + ".norm.bias", {channels}, false);
  }
  void adain_resblk(const std::string& p, int64_t in, int64_t out, int64_t style, bool upsample) {
    conv(p + ".conv1", out, in, 3);
    conv(p + ".conv2", out, out, 3);
    adain(p + ".norm1", style, in);
    adain(p + ".norm2", style, out);
    if (in != out) conv(p + ".conv1x1", out, in, 1, false);
    if (upsample) conv(p + ".pool", in, 1, 3);
  }
  void adain_resblock1(const std::string& p, int64_t ch, int64_t k, int64_t style) {
    for (int i = 0; i < 3; ++i) {
      const std::string n = std::to_string(i);
      conv(p + ".convs1." + n, ch, ch, k);
      conv(p + ".convs2." + n, ch, ch, k);
      adain(p + ".adain1." + n, style, ch);
      adain(p + ".adain2." + n, style, ch);
      add(p + ".alpha1." + n, {1, ch, 1});
      add(p + ".alpha2." + n, {1, ch, 1});
    }
  }
};

}  // namespace

std::vector<ParamSpec> kmodel_schema(const nlohmann::json& c) {
  Builder b;
  const int64_t n_token = c.at("n_token"), hidden = c.at("hidden_dim"), style = c.at("style_dim");
  const int64_t n_layer = c.at("n_layer"), kernel = c.at("text_encoder_kernel_size"), max_dur = c.at("max_dur");
  const auto& pl = c.at("plbert");
  const int64_t bh = pl.at("hidden_size"), inter = pl.at("intermediate_size"), maxpos = pl.at("max_position_embeddings");
  const int64_t emb = pl.value("embedding_size", 128);

  b.add("bert.embeddings.word_embeddings.weight", {n_token, emb});
  b.add("bert.embeddings.position_embeddings.weight", {maxpos, emb});
  b.add("bert.embeddings.token_type_embeddings.weight", {2, emb});
  b.add("bert.embeddings.LayerNorm.weight", {emb});
  b.add("bert.embeddings.LayerNorm.bias", {emb});
  b.linear("bert.encoder.embedding_hidden_mapping_in", bh, emb);
  const std::string layer = "bert.encoder.albert_layer_groups.0.albert_layers.0";
  for (const char* m : {"query", "key", "value", "dense"}) b.linear(layer + ".attention." + m, bh, bh);
  b.add(layer + ".attention.LayerNorm.weight", {bh});
  b.add(layer + ".attention.LayerNorm.bias", {bh});
  b.linear(layer + ".ffn", inter, bh);
  b.linear(layer + ".ffn_output", bh, inter);
  b.add(layer + ".full_layer_layer_norm.weight", {bh});
  b.add(layer + ".full_layer_layer_norm.bias", {bh});
  b.add("bert.pooler.weight", {bh, bh}, false);
  b.add("bert.pooler.bias", {bh}, false);
  b.linear("bert_encoder", hidden, bh);

  for (int64_t i = 0; i < n_layer; ++i) {
    b.bilstm("predictor.text_encoder.lstms." + std::to_string(2 * i), hidden + style, hidden / 2);
    b.linear("predictor.text_encoder.lstms." + std::to_string(2 * i + 1) + ".fc", 2 * hidden, style);
  }
  b.bilstm("predictor.lstm", hidden + style, hidden / 2);
  b.linear("predictor.duration_proj.linear_layer", max_dur, hidden);
  b.bilstm("predictor.shared", hidden + style, hidden / 2);
  for (const char* branch : {"F0", "N"}) {
    const std::string p = std::string("predictor.") + branch;
    b.adain_resblk(p + ".0", hidden, hidden, style, false);
    b.adain_resblk(p + ".1", hidden, hidden / 2, style, true);
    b.adain_resblk(p + ".2", hidden / 2, hidden / 2, style, false);
    b.conv(p + "_proj", 1, hidden / 2, 1);
  }

  b.add("text_encoder.embedding.weight", {n_token, hidden});
  for (int64_t i = 0; i < n_layer; ++i) {
    const std::string p = "text_encoder.cnn." + std::to_string(i);
    b.conv(p + ".0", hidden, hidden, kernel);
    b.add(p + ".1.gamma", {hidden});
    b.add(p + ".1.beta", {hidden});
  }
  b.bilstm("text_encoder.lstm", hidden, hidden / 2);

  const auto& ist = c.at("istftnet");
  const int64_t up_ch = ist.at("upsample_initial_channel"), n_fft = ist.at("gen_istft_n_fft");
  const int64_t dec_in = hidden + 2, dec_cat = 1024 + 2 + 64;
  b.adain_resblk("decoder.encode", dec_in, 1024, style, false);
  for (int i = 0; i < 4; ++i)
    b.adain_resblk("decoder.decode." + std::to_string(i), dec_cat, i == 3 ? 512 : 1024, style, i == 3);
  b.conv("decoder.F0_conv", 1, 1, 3);
  b.conv("decoder.N_conv", 1, 1, 3);
  b.conv("decoder.asr_res.0", 64, 512, 1);
  b.linear("decoder.generator.m_source.l_linear", 1, 9);
  const auto rates = ist.at("upsample_rates").get<std::vector<int64_t>>();
  const auto up_k = ist.at("upsample_kernel_sizes").get<std::vector<int64_t>>();
  const auto rb_k = ist.at("resblock_kernel_sizes").get<std::vector<int64_t>>();
  for (size_t i = 0; i < rates.size(); ++i) {
    const int64_t in = up_ch >> i, out = up_ch >> (i + 1);
    const std::string n = std::to_string(i);
    b.add("decoder.generator.ups." + n + ".weight", {in, out, up_k[i]});  // ConvTranspose1d: [in, out, k]
    b.add("decoder.generator.ups." + n + ".bias", {out});
    for (size_t j = 0; j < rb_k.size(); ++j)
      b.adain_resblock1("decoder.generator.resblocks." + std::to_string(i * rb_k.size() + j), out, rb_k[j], style);
    int64_t stride = 1;
    for (size_t k = i + 1; k < rates.size(); ++k) stride *= rates[k];
    b.conv("decoder.generator.noise_convs." + n, out, n_fft + 2, i + 1 < rates.size() ? 2 * stride : 1);
    b.adain_resblock1("decoder.generator.noise_res." + n, out, i + 1 < rates.size() ? 7 : 11, style);
  }
  b.conv("decoder.generator.conv_post", n_fft + 2, up_ch >> rates.size(), 7);
  return b.specs;
}

}  // namespace kokoro
