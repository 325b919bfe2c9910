// kokoro-convert: turns official Kokoro checkpoints into the engine's model file, and voices into packs.
//
//   kokoro-convert --pth kokoro-v1_0.pth -o models/kokoro-v1_0.kokoro        (official checkpoint, no torch)
//   kokoro-convert --onnx kokoro-v1.0.int8.onnx -o models/kokoro-v1_0.kokoro
//   kokoro-convert --voice af_heart.pt --voice-out voices/                  (.pt, .npz or .bin)
//   kokoro-convert --check models/kokoro-v1_0.kokoro
#include <CLI/CLI.hpp>
#include <spdlog/spdlog.h>

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>

#include "apps/kokoro_convert/convert.h"
#include "apps/kokoro_convert/onnx_import.h"
#include "apps/kokoro_convert/voices.h"
#include "core/import/torch_checkpoint.h"
#include "core/assets.h"
#include "core/error.h"
#include "core/model_file.h"
#include "frontend/lexicon_binary.h"

namespace {

double seconds_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

nlohmann::json load_config(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw kokoro::Error("config " + path + ": cannot open");
  try {
    return nlohmann::json::parse(in);
  } catch (const nlohmann::json::exception& e) {
    throw kokoro::Error("config " + path + ": " + e.what());
  }
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"kokoro-convert: convert Kokoro-82M checkpoints into kokoro-rt model files"};
  std::string onnx_path, pth_path, voice_in, voice_out, check_path, out_path, config_path, assets_dir;
  std::string lexicon_dir, lexicon_out;
  bool verbose = false;
  auto* src = app.add_option("--onnx", onnx_path, "Kokoro ONNX export (fp32 or int8-quantized)")->check(CLI::ExistingFile);
  auto* pth = app.add_option("--pth", pth_path, "Official PyTorch checkpoint (kokoro-v1_0.pth)")->check(CLI::ExistingFile);
  auto* voice = app.add_option("--voice", voice_in, "Voice to convert: .pt, voices .npz, or raw .bin")->check(CLI::ExistingFile);
  app.add_option("--voice-out", voice_out, "Output .bin file or directory for --voice");
  app.add_option("--check", check_path, "Validate a converted model file and print a summary")->check(CLI::ExistingFile);
  app.add_option("-o,--output", out_path, "Output model file (.kokoro)");
  app.add_option("--config", config_path, "config.json with hyper-parameters and vocab (default: from the assets dir)");
  app.add_option("--assets", assets_dir, "Assets directory (default: $KOKORO_ASSETS, else the installed "
                 "<prefix>/share/kokoro-rt/assets, else ../shared/assets of a build tree)");
  auto* lex = app.add_option("--lexicons", lexicon_dir,
                             "Compile the {us,gb}_{gold,silver}.json lexicons of this directory into the binary "
                             "form the engine maps ({us,gb}.kolex)")->check(CLI::ExistingDirectory);
  app.add_option("--lexicon-out", lexicon_out, "Directory for the .kolex files (default: the --lexicons directory)");
  app.add_flag("-v,--verbose", verbose, "List every tensor and where it came from");
  src->excludes("--check")->excludes(pth)->excludes(voice);
  pth->excludes("--check")->excludes(voice);
  lex->excludes(src)->excludes(pth)->excludes(voice)->excludes("--check");
  CLI11_PARSE(app, argc, argv);

  try {
    if (!check_path.empty()) {
      const auto t0 = std::chrono::steady_clock::now();
      const auto m = kokoro::ModelFile::open(check_path, kokoro::ModelFile::FiniteCheck::always);
      int64_t params = 0;
      for (const auto& t : m->tensors()) params += kokoro::shape_numel(t.shape);
      std::printf("%s: OK, %zu tensors, %lld parameters, %.1f MB, source %s, opened+validated in %.1f ms\n",
                  check_path.c_str(), m->tensors().size(), static_cast<long long>(params),
                  m->file_size() / 1e6, m->header().value("source", "?").c_str(), 1e3 * seconds_since(t0));
      return 0;
    }
    if (!lexicon_dir.empty()) {
      const std::string out_dir = lexicon_out.empty() ? lexicon_dir : lexicon_out;
      std::filesystem::create_directories(out_dir);
      int written = 0;
      for (const bool british : {false, true}) {
        const std::string accent = british ? "gb" : "us";
        if (!std::filesystem::exists(lexicon_dir + "/" + accent + "_gold.json")) continue;
        const auto t0 = std::chrono::steady_clock::now();
        const std::vector<uint8_t> image = kokoro::en::compile_lexicon_dir(lexicon_dir, british);
        const std::string out = out_dir + "/" + accent + ".kolex";
        kokoro::en::write_lexicon_file(out, image);
        kokoro::en::BinaryLexicon::open(out);  // read back: what was written is what the engine accepts
        std::printf("wrote %s (%.1f MB) in %.0f ms\n", out.c_str(), image.size() / 1e6, 1e3 * seconds_since(t0));
        ++written;
      }
      if (written == 0) {
        std::fprintf(stderr, "kokoro-convert: no us_gold.json or gb_gold.json in %s\n", lexicon_dir.c_str());
        return 1;
      }
      return 0;
    }
    if (!voice_in.empty()) {
      if (voice_out.empty()) {
        std::fprintf(stderr, "kokoro-convert: --voice-out is required with --voice\n");
        return 2;
      }
      for (const auto& f : kokoro::convert_voices(voice_in, voice_out)) std::printf("wrote %s\n", f.c_str());
      return 0;
    }
    if (onnx_path.empty() && pth_path.empty()) {
      std::fprintf(stderr, "kokoro-convert: give --pth, --onnx or --voice FILE (with -o OUT) or --check FILE; see --help\n");
      return 2;
    }
    if (out_path.empty()) {
      std::fprintf(stderr, "kokoro-convert: -o/--output is required\n");
      return 2;
    }
    if (config_path.empty()) config_path = kokoro::find_assets_dir(assets_dir) + "/config.json";
    const nlohmann::json config = load_config(config_path);

    auto t0 = std::chrono::steady_clock::now();
    if (!pth_path.empty()) {
      kokoro::StateDict sd = kokoro::read_torch_checkpoint(pth_path);
      const size_t read = sd.size();
      kokoro::fold_weight_norm(sd);
      std::printf("read %s: %zu tensors (%zu after folding weight norm) in %.2f s\n", pth_path.c_str(), read, sd.size(),
                  seconds_since(t0));
      t0 = std::chrono::steady_clock::now();
      const auto r = kokoro::write_engine_model(sd, config, std::filesystem::path(pth_path).filename().string(), out_path);
      std::printf("wrote %s: %zu tensors in %.2f s\n", out_path.c_str(), r.written, seconds_since(t0));
      for (const auto& n : r.dropped) std::printf("  not a KModel parameter, dropped: %s\n", n.c_str());
      return 0;
    }
    kokoro::OnnxImport imp = kokoro::import_kokoro_onnx(onnx_path);
    std::printf("read %s (%s, opset %lld): %zu tensors recovered (%d dequantized from int8/uint8, %d float) in %.2f s\n",
                onnx_path.c_str(), imp.producer.c_str(), static_cast<long long>(imp.opset), imp.state.size(),
                imp.quantized_tensors, imp.float_tensors, seconds_since(t0));
    if (verbose)
      for (const auto& n : imp.notes) std::printf("  %s\n", n.c_str());
    t0 = std::chrono::steady_clock::now();
    const std::string source = std::filesystem::path(onnx_path).filename().string();
    const auto r = kokoro::write_engine_model(imp.state, config, source, out_path);
    std::printf("wrote %s: %zu tensors in %.2f s\n", out_path.c_str(), r.written, seconds_since(t0));
    for (const auto& n : r.optional_missing) std::printf("  optional, not in source (engine uses its default): %s\n", n.c_str());
    for (const auto& n : r.dropped) std::printf("  not a KModel parameter, dropped: %s\n", n.c_str());
    return 0;
  } catch (const kokoro::Error& e) {
    std::fprintf(stderr, "kokoro-convert: %s\n", e.what());
    return 1;
  }
}
