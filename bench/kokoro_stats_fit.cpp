// kokoro-stats-fit: collects training data for the learned statistics predictor (vocoder/stats_predictor.h)
// by synthesizing segments with the engine itself, fits it, and reports its error per layer on held-out
// segments beside the per-voice priors' (issue 11; docs/streaming.md, "The learned statistics predictor").
//
//   kokoro-stats-fit --collect 1500 --minutes 18        synthesize, capture, save build/stats-data.kokoro
//   kokoro-stats-fit --fit                              fit from that data, write models/<model>.stats-predictor.kokoro
//
// Text: random word windows of the bench corpora (bench/corpus/*.txt except stream_eval.txt, the held-out
// measurement set; bench/quality/corpus.txt is not read) and random sequences of lexicon words; voices and
// speeds drawn at random. Per segment: the features of stats_predictor_features (from Decoder::features, the
// F0 curve, the style) and the exact statistics of every generator AdaIN layer (InstanceStatsCapture).
// Held out from the fit: every 8th segment (test, reported) and every 8th from the 4th (validation: picks the
// ridge penalty and rank among --ridge x --rank).
#include <CLI/CLI.hpp>
#include <Eigen/Core>

#include <chrono>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <random>
#include <sstream>

#include "core/assets.h"
#include "core/error.h"
#include "core/precision.h"
#include "engine/stream_options.h"
#include "engine/synthesizer.h"
#include "frontend/frontend.h"
#include "frontend/utf8.h"
#include "frontend/vocab.h"
#include "vocoder/stats_predictor.h"
#include "vocoder/stream_norm.h"

using namespace kokoro;

namespace {

using Clock = std::chrono::steady_clock;
double seconds_since(Clock::time_point t) { return std::chrono::duration<double>(Clock::now() - t).count(); }

std::vector<std::string> split(const std::string& s, char sep) {
  std::vector<std::string> v;
  std::stringstream ss(s);
  for (std::string t; std::getline(ss, t, sep);)
    if (!t.empty()) v.push_back(t);
  return v;
}

// Word lists the generated texts draw from.
struct TextSource {
  std::vector<std::vector<std::string>> lines;  // corpus lines as words
  std::vector<std::string> lexicon;             // plain lower-case lexicon words

  static TextSource load(const std::string& source_dir, const std::string& assets_dir) {
    TextSource t;
    for (const auto& e : std::filesystem::directory_iterator(source_dir + "/bench/corpus")) {
      const std::string name = e.path().filename().string();
      if (e.path().extension() != ".txt" || name == "stream_eval.txt") continue;  // the measured set stays unseen
      std::ifstream in(e.path());
      for (std::string l; std::getline(in, l);) {
        if (l.empty() || l[0] == '#') continue;
        std::vector<std::string> w = split(l, ' ');
        if (w.size() >= 2) t.lines.push_back(std::move(w));
      }
    }
    std::ifstream lex(assets_dir + "/lexicons/us_gold.json");
    if (!lex) throw Error("cannot read " + assets_dir + "/lexicons/us_gold.json");
    const nlohmann::json j = nlohmann::json::parse(lex);
    for (const auto& [word, _] : j.items()) {
      if (word.size() < 2 || word.size() > 12) continue;
      if (std::all_of(word.begin(), word.end(), [](char c) { return c >= 'a' && c <= 'z'; })) t.lexicon.push_back(word);
    }
    std::sort(t.lines.begin(), t.lines.end());  // directory order is not deterministic
    if (t.lines.empty() || t.lexicon.empty()) throw Error("no corpus lines or lexicon words found");
    return t;
  }

  std::string sample(std::mt19937& rng) const {
    std::string text;
    if (std::uniform_real_distribution<>(0, 1)(rng) < 0.6) {
      const auto& w = lines[std::uniform_int_distribution<size_t>(0, lines.size() - 1)(rng)];
      const size_t n = std::uniform_int_distribution<size_t>(2, std::min<size_t>(w.size(), 16))(rng);
      const size_t at = std::uniform_int_distribution<size_t>(0, w.size() - n)(rng);
      for (size_t i = at; i < at + n; ++i) text += (i > at ? " " : "") + w[i];
    } else {
      const int n = std::uniform_int_distribution<int>(2, 10)(rng);
      for (int i = 0; i < n; ++i) {
        text += (i ? " " : "") + lexicon[std::uniform_int_distribution<size_t>(0, lexicon.size() - 1)(rng)];
        if (i + 1 < n && std::uniform_int_distribution<int>(0, 9)(rng) == 0) text += ",";
      }
      text[0] = static_cast<char>(std::toupper(static_cast<unsigned char>(text[0])));
      text += ".?!"[std::uniform_int_distribution<int>(0, 2)(rng)];
    }
    return text;
  }
};

struct Data {
  std::string feature_layout = kStatsFeatureLayout;
  std::vector<StatsLayerShape> layers;
  std::vector<std::string> voices;
  std::vector<std::vector<float>> features, targets;
  std::vector<int> voice;       // index into voices
  std::vector<int64_t> frames;  // generator columns

  void save(const std::string& path) const {
    nlohmann::json layer_list = nlohmann::json::array();
    for (const auto& l : layers) layer_list.push_back({{"name", l.name}, {"channels", l.channels}});
    ModelWriter w({{"kind", "kokoro-stats-data"}, {"layers", layer_list}, {"voices", voices},
                   {"feature_layout", feature_layout}, {"voice_index", voice}, {"frames", frames}});
    w.set_source("kokoro-stats-fit --collect");
    const int64_t N = features.size(), D = N ? features[0].size() : 0, M = N ? targets[0].size() : 0;
    std::vector<float> f, t;
    for (int64_t i = 0; i < N; ++i) {
      f.insert(f.end(), features[i].begin(), features[i].end());
      t.insert(t.end(), targets[i].begin(), targets[i].end());
    }
    w.add("features", {N, D}, f.data());
    w.add("targets", {N, M}, t.data());
    w.write(path);
  }

  static Data load(const std::string& path) {
    const auto file = ModelFile::open(path);
    const nlohmann::json& cfg = file->config();
    if (cfg.value("kind", "") != "kokoro-stats-data") throw Error(path + ": not a statistics data file");
    const std::string layout = cfg.value("feature_layout", "");
    if (layout != kStatsFeatureLayout && layout != kStatsEarlyFeatureLayout)
      throw Error(path + ": another feature layout; collect again");
    Data d;
    d.feature_layout = layout;
    for (const auto& l : cfg.at("layers")) d.layers.push_back({l.at("name"), l.at("channels")});
    d.voices = cfg.at("voices").get<std::vector<std::string>>();
    d.voice = cfg.at("voice_index").get<std::vector<int>>();
    d.frames = cfg.at("frames").get<std::vector<int64_t>>();
    const TensorView f = file->get("features"), t = file->get("targets");
    const int64_t N = f.shape[0], D = f.shape[1], M = t.shape[1];
    for (int64_t i = 0; i < N; ++i) {
      d.features.emplace_back(f.data + i * D, f.data + (i + 1) * D);
      d.targets.emplace_back(t.data + i * M, t.data + (i + 1) * M);
    }
    return d;
  }
};

Eigen::MatrixXf rows_of(const std::vector<std::vector<float>>& v, const std::vector<size_t>& idx) {
  Eigen::MatrixXf m(idx.size(), v.at(idx.at(0)).size());
  for (size_t i = 0; i < idx.size(); ++i) m.row(i) = Eigen::Map<const Eigen::RowVectorXf>(v[idx[i]].data(), m.cols());
  return m;
}

// Errors of predicted targets against the true ones, per layer: mean |mean error| in units of the true std,
// and mean |1/std predicted over true - 1|.
struct LayerError {
  double mean_std = 0, inv_std_rel = 0;
  int64_t n = 0;
};

void add_errors(const std::vector<StatsLayerShape>& layers, const float* pred, const float* truth, std::vector<LayerError>& err) {
  int64_t at = 0;
  for (size_t l = 0; l < layers.size(); ++l) {
    const int64_t C = layers[l].channels;
    for (int64_t c = 0; c < C; ++c) {
      const double inv_true = std::exp(-0.5 * truth[at + C + c]), inv_pred = std::exp(-0.5 * pred[at + C + c]);
      err[l].mean_std += std::fabs(pred[at + c] - truth[at + c]) * inv_true;
      err[l].inv_std_rel += std::fabs(inv_pred / inv_true - 1.0);
    }
    err[l].n += C;
    at += 2 * C;
  }
}

double score(const std::vector<LayerError>& e) {
  double s = 0;
  for (const auto& l : e) s += (l.mean_std + l.inv_std_rel) / l.n;
  return s / e.size();
}

// Per-voice priors from training segments, the way NormPriors calibrates them (frame-weighted mean of the
// means and of the variances), as target vectors.
std::map<int, std::vector<float>> voice_priors(const Data& d, const std::vector<size_t>& train) {
  std::map<int, std::vector<double>> sm, sv;
  std::map<int, double> w;
  for (size_t i : train) {
    const int v = d.voice[i];
    auto& m = sm[v];
    auto& s = sv[v];
    const auto& t = d.targets[i];
    if (m.empty()) m.assign(t.size(), 0.0), s.assign(t.size(), 0.0);
    int64_t at = 0;
    for (const auto& l : d.layers) {
      for (int64_t c = 0; c < l.channels; ++c) {
        m[at + c] += t[at + c] * double(d.frames[i]);
        s[at + l.channels + c] += (std::exp(t[at + l.channels + c]) - kInstanceNormEps) * double(d.frames[i]);
      }
      at += 2 * l.channels;
    }
    w[v] += d.frames[i];
  }
  std::map<int, std::vector<float>> out;
  for (auto& [v, m] : sm) {
    std::vector<float> t(m.size());
    int64_t at = 0;
    for (const auto& l : d.layers) {
      for (int64_t c = 0; c < l.channels; ++c) {
        t[at + c] = static_cast<float>(m[at + c] / w[v]);
        t[at + l.channels + c] = static_cast<float>(std::log(sv[v][at + l.channels + c] / w[v] + kInstanceNormEps));
      }
      at += 2 * l.channels;
    }
    out[v] = std::move(t);
  }
  return out;
}

std::string short_name(const std::string& layer) {
  const std::string p = "decoder.";
  return layer.rfind(p, 0) == 0 ? layer.substr(p.size()) : layer;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"kokoro-stats-fit: training data, fit and held-out error of the learned statistics predictor"};
  std::string model, assets, data_path = std::string(KOKORO_SOURCE_DIR) + "/build/stats-data.kokoro", out_path;
  std::string voices = "af_heart,am_michael,bf_emma,af_bella,am_adam,bm_george,af_nicole,bf_isabella,am_puck,af_sky";
  std::string ridges = "0.03,0.1,0.3,1", ranks = "32,64", precision = "fp32", priors_path, storage = "f32";
  int collect = 0, threads = 2;
  unsigned seed = 1;
  double minutes = 0, speed_lo = 0.8, speed_hi = 1.2;
  bool fit = false, early = false;
  app.add_option("--model", model, "Model file (default: $KOKORO_MODEL or models/kokoro-v1_0.kokoro)");
  app.add_option("--assets", assets, "Assets directory");
  app.add_option("--collect", collect, "Synthesize this many segments and save their features and statistics");
  app.add_option("--minutes", minutes, "--collect: stop after this many minutes (0: no limit)");
  app.add_option("--data", data_path, "Training data file (--fit: several, comma-separated)")->capture_default_str();
  app.add_option("--voices", voices, "Voices to draw from")->capture_default_str();
  app.add_option("--speed-min", speed_lo, "Slowest speed")->capture_default_str();
  app.add_option("--speed-max", speed_hi, "Fastest speed")->capture_default_str();
  app.add_option("--seed", seed, "Seed of the text, voice and speed draws")->capture_default_str();
  app.add_option("--precision", precision, "Kernel precision of the collection")->capture_default_str();
  app.add_flag("--early", early,
               "--collect: features known once the durations are and every AdaIN layer of the F0 and energy branches and of the decoder as targets (the early "
               "predictor: the whole decoder runs in slices)");
  app.add_flag("--fit", fit, "Fit the predictor on the data, report the held-out errors, write it");
  app.add_option("--ridge", ridges, "Ridge penalties to try (relative), comma-separated")->capture_default_str();
  app.add_option("--rank", ranks, "Ranks to try, comma-separated")->capture_default_str();
  app.add_option("--storage", storage, "How the file stores the predictor's matrices: f32 or f16 (half the size)")
      ->check(CLI::IsMember({"f32", "f16"}))
      ->capture_default_str();
  app.add_option("--out", out_path,
                 "Predictor file (default: <model dir>/<model name>.stats-predictor.kokoro, .early-stats-predictor.kokoro "
                 "for --early data)");
  app.add_option("--priors", priors_path, "af_heart's calibrated priors to compare with (default: models/norm-priors-af_heart.kokoro)");
  app.add_option("--threads", threads, "Eigen threads")->capture_default_str();
  CLI11_PARSE(app, argc, argv);

  try {
    Eigen::setNbThreads(threads);
    set_precision(parse_precision(precision, "--precision"));
    const std::string model_path = default_model_path(model);
    const bool out_given = !out_path.empty();
    if (!out_given) out_path = stats_predictor_path(model_path);
    if (collect > 0) {
      const std::string assets_dir = find_assets_dir(assets);
      auto synth = std::make_shared<const Synthesizer>(ModelFile::open(model_path));
      FrontendOptions fo;
      fo.assets_dir = assets_dir;
      const Frontend fe(fo);
      const Vocab vocab = Vocab::from_config(synth->model().config(), synth->model().path());
      const TextSource texts = TextSource::load(KOKORO_SOURCE_DIR, assets_dir);
      Data d;
      d.voices = split(voices, ',');
      d.feature_layout = early ? kStatsEarlyFeatureLayout : kStatsFeatureLayout;
      d.layers = early ? StatsPredictor::early_layers(synth->model()) : StatsPredictor::generator_layers(synth->model());
      std::vector<VoicePack> packs;
      for (const auto& v : d.voices) packs.push_back(VoicePack::resolve(v, assets_dir));
      const Decoder& dec = synth->decoder();
      const int64_t style_dim = dec.style_dim();
      std::mt19937 rng(seed);
      const auto t0 = Clock::now();
      double audio_s = 0;
      std::fprintf(stderr, "collecting: %zu corpus lines, %zu lexicon words, %zu voices, %zu AdaIN layers\n",
                   texts.lines.size(), texts.lexicon.size(), d.voices.size(), d.layers.size());
      while (static_cast<int>(d.features.size()) < collect && (minutes <= 0 || seconds_since(t0) < minutes * 60)) {
        const std::string text = texts.sample(rng);
        const int v = std::uniform_int_distribution<int>(0, static_cast<int>(packs.size()) - 1)(rng);
        const float speed = std::uniform_real_distribution<float>(speed_lo, speed_hi)(rng);
        for (const Segment& seg : fe.segment(text)) {
          std::vector<int64_t> ids = tokenize(seg.phonemes, vocab);
          if (ids.empty()) continue;
          ids.insert(ids.begin(), 0);
          ids.push_back(0);
          const float* style = packs[v].style_for(static_cast<int>(utf8::count_code_points(seg.phonemes)));
          AlignedFeatures feats;
          Tensor shared, x, audio;
          // Every AdaIN layer on this thread: the F0 and energy branches' and the decoder half's too (the early
          // predictor's targets).
          InstanceStatsCapture capture;
          synth->acoustic().forward_text(ids, style, speed, feats, shared);
          synth->acoustic().forward_curves(shared, style, feats);
          dec.features(feats.asr, feats.f0, feats.n, style, x);
          SeededNoise noise(0);
          dec.generator().forward(x, feats.f0.data(), style, noise, audio);
          d.features.push_back(early ? stats_predictor_early_features(feats.asr, shared, style, kStyleDim)
                                     : stats_predictor_features(x, feats.f0.data(), style, style_dim));
          const Eigen::VectorXf t = stats_targets(capture.stats(), d.layers);
          d.targets.emplace_back(t.data(), t.data() + t.size());
          d.voice.push_back(v);
          d.frames.push_back(x.dim(1));
          audio_s += static_cast<double>(feats.frames() * kSamplesPerFrame) / kSampleRate;
        }
        if (d.features.size() % 100 == 0 || static_cast<int>(d.features.size()) >= collect) {
          std::fprintf(stderr, "  %zu segments, %.0f s of audio, %.0f s elapsed\n", d.features.size(), audio_s,
                       seconds_since(t0));
          if (d.features.size() % 500 == 0) d.save(data_path);  // a checkpoint
        }
      }
      d.save(data_path);
      std::printf("collected %zu segments (%.0f s of audio) in %.0f s -> %s\n", d.features.size(), audio_s,
                  seconds_since(t0), data_path.c_str());
    }
    if (!fit) return 0;

    // Several data files (comma-separated, e.g. collections with other seeds) are joined.
    Data d;
    for (const std::string& part : split(data_path, ',')) {
      Data more = Data::load(part);
      if (d.layers.empty()) {
        d = std::move(more);
        continue;
      }
      if (more.voices != d.voices || more.layers.size() != d.layers.size() || more.feature_layout != d.feature_layout)
        throw Error(part + ": other voices, layers or features");
      for (size_t i = 0; i < more.features.size(); ++i) {
        d.features.push_back(std::move(more.features[i]));
        d.targets.push_back(std::move(more.targets[i]));
        d.voice.push_back(more.voice[i]);
        d.frames.push_back(more.frames[i]);
      }
    }
    // An early predictor goes where the engine looks for one (engine/stream_options.h).
    if (!out_given && d.feature_layout == kStatsEarlyFeatureLayout) out_path = early_stats_predictor_path(model_path);
    const size_t N = d.features.size();
    std::vector<size_t> train, val, test;
    for (size_t i = 0; i < N; ++i) (i % 8 == 0 ? test : i % 8 == 4 ? val : train).push_back(i);
    if (train.size() < 8 || val.empty() || test.empty()) throw Error("too few segments to fit: " + std::to_string(N));
    const Eigen::MatrixXf Ftrain = rows_of(d.features, train), Ytrain = rows_of(d.targets, train);
    auto errors_of = [&](const StatsPredictor& p, const std::vector<size_t>& idx) {
      std::vector<LayerError> e(d.layers.size());
      for (size_t i : idx) {
        const Eigen::VectorXf y = p.predict_targets(d.features[i]);
        add_errors(d.layers, y.data(), d.targets[i].data(), e);
      }
      return e;
    };
    std::printf("segments: %zu train, %zu validation, %zu test; %zu features, %zu targets\n", train.size(), val.size(),
                test.size(), d.features[0].size(), d.targets[0].size());
    std::printf("| ridge | rank | validation: mean error (std) + |1/std rel. error|, mean over layers | fit s |\n| --- | --- | --- | --- |\n");
    double best = 1e30;
    StatsFitOptions best_opt;
    for (const std::string& rk : split(ranks, ','))
      for (const std::string& rd : split(ridges, ',')) {
        StatsFitOptions o;
        o.ridge = std::stod(rd);
        o.rank = std::stoi(rk);
        const auto t0 = Clock::now();
        const StatsPredictor p = fit_stats_predictor(Ftrain, Ytrain, d.layers, o, d.feature_layout);
        const double took = seconds_since(t0);
        const double s = score(errors_of(p, val));
        std::printf("| %g | %d | %.4f | %.1f |\n", o.ridge, o.rank, s, took);
        std::fflush(stdout);
        if (s < best) best = s, best_opt = o;
      }
    // The file: fitted on train + validation with the chosen settings; the test segments stay unseen.
    std::vector<size_t> fit_idx = train;
    fit_idx.insert(fit_idx.end(), val.begin(), val.end());
    const auto t0 = Clock::now();
    StatsPredictor p = fit_stats_predictor(rows_of(d.features, fit_idx), rows_of(d.targets, fit_idx), d.layers, best_opt,
                                           d.feature_layout);
    const double fit_s = seconds_since(t0);
    p.info["voices"] = d.voices;
    p.info["segments"] = fit_idx.size();
    p.info["model"] = std::filesystem::path(model_path).filename().string();
    p.fitted_for = StatsPredictor::model_identity(*ModelFile::open(model_path));
    p.save(out_path, storage == "f16" ? DType::f16 : DType::f32);
    std::printf("\nchosen: ridge %g, rank %d; fitted on %zu segments in %.1f s -> %s (%s matrices, %.2f MB)\n\n",
                best_opt.ridge, best_opt.rank, fit_idx.size(), fit_s, out_path.c_str(), storage.c_str(),
                std::filesystem::file_size(out_path) / 1048576.0);

    // Held-out errors per layer: the predictor as the file stores it, per-voice priors (from the fit segments),
    // and af_heart's calibrated priors file on the af_heart test segments when it exists.
    p = StatsPredictor::load(out_path);
    const std::vector<LayerError> pe = errors_of(p, test);
    const auto priors = voice_priors(d, fit_idx);
    std::vector<LayerError> ve(d.layers.size()), he(d.layers.size()), hp(d.layers.size());
    std::vector<size_t> heart;
    for (size_t i : test) add_errors(d.layers, priors.at(d.voice[i]).data(), d.targets[i].data(), ve);
    const auto heart_it = std::find(d.voices.begin(), d.voices.end(), "af_heart");
    const std::string heart_priors = priors_path.empty() ? norm_priors_path("af_heart") : priors_path;
    std::shared_ptr<NormPriors> file_priors;
    if (heart_it != d.voices.end() && std::filesystem::exists(heart_priors)) {
      file_priors = std::make_shared<NormPriors>(NormPriors::load(heart_priors));
      std::vector<float> t(d.targets[0].size());
      int64_t at = 0;
      for (const auto& l : d.layers) {
        const auto it = file_priors->layers.find(l.name);
        if (it == file_priors->layers.end()) throw Error(heart_priors + " has no layer " + l.name);
        const MomentStats& m = it->second;
        for (int64_t c = 0; c < l.channels; ++c) {
          t[at + c] = m.mean[c];
          t[at + l.channels + c] = std::log(m.var[c] + kInstanceNormEps);
        }
        at += 2 * l.channels;
      }
      for (size_t i : test)
        if (d.voices[d.voice[i]] == "af_heart") {
          heart.push_back(i);
          add_errors(d.layers, t.data(), d.targets[i].data(), he);
          const Eigen::VectorXf y = p.predict_targets(d.features[i]);
          add_errors(d.layers, y.data(), d.targets[i].data(), hp);
        }
    }
    std::printf("held-out test segments: %zu (af_heart: %zu). Per layer: mean |mean error| in units of the true std / "
                "mean |1/std predicted / true - 1|\n\n",
                test.size(), heart.size());
    std::printf("| layer | channels | predictor | per-voice priors | af_heart: predictor | af_heart: priors file |\n"
                "| --- | --- | --- | --- | --- | --- |\n");
    auto cell = [](const LayerError& e) {
      char b[64];
      if (e.n == 0) return std::string("–");
      std::snprintf(b, sizeof b, "%.3f / %.3f", e.mean_std / e.n, e.inv_std_rel / e.n);
      return std::string(b);
    };
    LayerError tp, tv, th, thp;
    for (size_t l = 0; l < d.layers.size(); ++l) {
      std::printf("| %s | %lld | %s | %s | %s | %s |\n", short_name(d.layers[l].name).c_str(),
                  static_cast<long long>(d.layers[l].channels), cell(pe[l]).c_str(), cell(ve[l]).c_str(),
                  cell(hp[l]).c_str(), cell(he[l]).c_str());
      for (auto [sum, e] : {std::pair{&tp, &pe[l]}, {&tv, &ve[l]}, {&th, &he[l]}, {&thp, &hp[l]}}) {
        sum->mean_std += e->mean_std;
        sum->inv_std_rel += e->inv_std_rel;
        sum->n += e->n;
      }
    }
    std::printf("| all layers | | %s | %s | %s | %s |\n", cell(tp).c_str(), cell(tv).c_str(), cell(thp).c_str(),
                cell(th).c_str());
    std::printf("\nheld-out test, all layers: predictor %.4f / %.4f (%s matrices, %.2f MB), per-voice priors %.4f / %.4f\n",
                tp.mean_std / tp.n, tp.inv_std_rel / tp.n, storage.c_str(), std::filesystem::file_size(out_path) / 1048576.0,
                tv.mean_std / tv.n, tv.inv_std_rel / tv.n);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "kokoro-stats-fit: %s\n", e.what());
    return 1;
  }
  return 0;
}
