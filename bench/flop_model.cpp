#include "bench/flop_model.h"

#include <numeric>

namespace kokoro::bench {

namespace {

double lstm_macs(double steps, double in, double hidden) {  // one direction
  return steps * 4 * hidden * (in + hidden);
}
double conv_macs(double out, double in, double k, double t_out) { return out * in * k * t_out; }

// AdainResBlk1d (vocoder/adain_resblk.h) on T input columns.
double adain_resblk_macs(double in, double out, double T, bool upsample) {
  const double t = upsample ? 2 * T : T;
  double m = conv_macs(out, in, 3, t) + conv_macs(out, out, 3, t);
  if (in != out) m += conv_macs(out, in, 1, T);
  return m;
}

}  // namespace

std::array<double, kStageCount> stage_flops(const ModelFile& model, int64_t tokens, int64_t frames) {
  const auto& c = model.config();
  const auto& pl = c.at("plbert");
  const double T = static_cast<double>(tokens), F = static_cast<double>(frames);
  std::array<double, kStageCount> macs{};

  // ALBERT: embedding projection, then one shared layer applied num_hidden_layers times.
  const double H = pl.at("hidden_size"), I = pl.at("intermediate_size"), L = pl.at("num_hidden_layers");
  const double E = pl.value("embedding_size", 128);
  macs[kAlbert] = T * E * H + L * (4 * T * H * H + 2 * T * T * H + 2 * T * H * I);

  // Prosody: bert_encoder, the duration encoder's BiLSTMs, the duration LSTM and projection, the shared
  // LSTM over frames, and the F0 and N branches (3 AdainResBlk1d + a 1x1 projection each).
  const double hid = c.at("hidden_dim"), sty = c.at("style_dim"), n_layer = c.at("n_layer"), max_dur = c.at("max_dur");
  const double lstm_in = hid + sty, h = hid / 2;
  double p = T * H * hid;
  p += n_layer * 2 * lstm_macs(T, lstm_in, h);
  p += 2 * lstm_macs(T, lstm_in, h) + T * hid * max_dur;
  p += 2 * lstm_macs(F, lstm_in, h);
  const double branch = adain_resblk_macs(hid, hid, F, false) + adain_resblk_macs(hid, hid / 2, F, true) +
                        adain_resblk_macs(hid / 2, hid / 2, 2 * F, false) + hid / 2 * 2 * F;
  p += 2 * branch;
  macs[kProsody] = p;

  // Text encoder: n_layer convolutions, then a BiLSTM.
  const double k_te = c.at("text_encoder_kernel_size");
  macs[kTextEncoder] = n_layer * conv_macs(hid, hid, k_te, T) + 2 * lstm_macs(T, hid, hid / 2);

  // Decoder (vocoder/decoder.h): asr_res, encode 514 -> 1024, decode 0..2 1090 -> 1024, decode 3 -> 512 x2.
  const auto& g = c.at("istftnet");
  const double up0 = g.at("upsample_initial_channel");
  const double asr = hid, dh = 1024, cat = dh + 2 + 64;
  double d = conv_macs(64, asr, 1, F) + adain_resblk_macs(asr + 2, dh, F, false);
  d += 3 * adain_resblk_macs(cat, dh, F, false) + adain_resblk_macs(cat, up0, F, true);
  macs[kDecoder] = d;

  // Generator (vocoder/generator.h): per stage the transposed conv, the noise conv and noise resblock, and
  // the resblocks (two convolutions per dilation); then conv_post. The source and iSTFT are O(n log n) on
  // 22 rows and counted as zero.
  const auto rates = g.at("upsample_rates").get<std::vector<int>>();
  const auto ups_k = g.at("upsample_kernel_sizes").get<std::vector<int>>();
  const auto rk = g.at("resblock_kernel_sizes").get<std::vector<int>>();
  const auto rd = g.at("resblock_dilation_sizes").get<std::vector<std::vector<int>>>();
  const double n_fft = g.at("gen_istft_n_fft"), feat = n_fft + 2;
  double t = 2 * F, ch = up0, gen = 0;
  for (size_t i = 0; i < rates.size(); ++i) {
    const double ch_out = ch / 2, t_in = t;
    t = t * rates[i] + (i + 1 == rates.size() ? 1 : 0);  // the last stage's reflection pad adds a column
    gen += ch * ch_out * ups_k[i] * t_in;
    const bool last = i + 1 == rates.size();
    const double stride = std::accumulate(rates.begin() + i + 1, rates.end(), 1, std::multiplies<int>());
    gen += conv_macs(ch_out, feat, last ? 1 : 2 * stride, t);
    gen += 3 * 2 * conv_macs(ch_out, ch_out, last ? 11 : 7, t);
    for (size_t j = 0; j < rk.size(); ++j) gen += rd[j].size() * 2 * conv_macs(ch_out, ch_out, rk[j], t);
    ch = ch_out;
  }
  gen += conv_macs(feat, ch, 7, t);
  macs[kGenerator] = gen;

  std::array<double, kStageCount> flops{};
  for (int i = 0; i < kStageCount; ++i) flops[i] = 2 * macs[i];
  return flops;
}

}  // namespace kokoro::bench
