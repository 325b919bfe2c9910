// kokoro-zhdict: compiles the Mandarin dictionary file (frontend/zh_dict.h) from unpacked jieba and
// pypinyin packages. scripts/fetch-zh-dict downloads them (sha256-checked) and runs this; no Python needed.
//
//   kokoro-zhdict --jieba DIR/jieba --pypinyin DIR/pypinyin -o zh.kozh
#include <CLI/CLI.hpp>

#include <cstdio>

#include "core/error.h"
#include "frontend/zh_dict.h"

int main(int argc, char** argv) {
  CLI::App app{"Compile the Mandarin dictionary (zh.kozh) from jieba and pypinyin package files"};
  std::string jieba, pypinyin, out;
  app.add_option("--jieba", jieba, "the jieba package directory (holds dict.txt and finalseg/)")->required();
  app.add_option("--pypinyin", pypinyin, "the pypinyin package directory (holds pinyin_dict.json)")->required();
  app.add_option("-o,--output", out, "the dictionary file to write")->required();
  CLI11_PARSE(app, argc, argv);
  try {
    kokoro::zh::DictSources src;
    src.jieba_dict = jieba + "/dict.txt";
    src.prob_start = jieba + "/finalseg/prob_start.py";
    src.prob_trans = jieba + "/finalseg/prob_trans.py";
    src.prob_emit = jieba + "/finalseg/prob_emit.py";
    src.pinyin_json = pypinyin + "/pinyin_dict.json";
    src.phrases_json = pypinyin + "/phrases_dict.json";
    const auto image = kokoro::zh::compile_dict(src);
    kokoro::zh::write_dict_file(out, image);
    std::fprintf(stderr, "kokoro-zhdict: wrote %s (%.1f MB)\n", out.c_str(), image.size() / 1e6);
    return 0;
  } catch (const kokoro::Error& e) {
    std::fprintf(stderr, "kokoro-zhdict: error: %s\n", e.what());
    return 1;
  }
}
