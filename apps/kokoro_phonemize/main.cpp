// kokoro-phonemize: prints the Kokoro phoneme string of each segment of a text, one per line.
//
//   kokoro-phonemize "Dr. Smith paid $5."        # text from the arguments
//   echo "Hello world" | kokoro-phonemize         # or from standard input
//   kokoro-phonemize -l en-gb --words "Hello"     # also show each word's text -> phonemes
//   kokoro-phonemize --normalized "at 2:00 a.m."  # the words that will be said: "at two a.m."
#include <CLI/CLI.hpp>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <iostream>
#include <iterator>
#include <string>
#include <vector>

#include "core/error.h"
#include "frontend/frontend.h"

int main(int argc, char** argv) {
  CLI::App app{"Print the Kokoro phonemes of each segment of a text, one segment per line"};
  std::vector<std::string> words;
  kokoro::FrontendOptions opt;
  bool show_words = false, show_text = false, show_normalized = false, verbose = false;
  app.add_option("text", words, "Text to phonemize (default: read standard input)");
  app.add_option("-l,--language", opt.language, "en-us, en-gb, es, fr-fr, hi, it, pt-br, ja or zh")
      ->capture_default_str();
  app.add_option("--assets", opt.assets_dir, "Assets directory (config.json, lexicons/)");
  app.add_option("--first-words", opt.first_segment_max_words,
                 "Streaming: at most this many words in the first segment (0: no limit)");
  app.add_option("--max-phonemes", opt.max_phonemes, "Longest segment in phonemes")->capture_default_str();
  app.add_option("--lexicon", opt.lexicon_file,
                 "User lexicon: lines of 'word  /phonemes/' or 'word  respelling' that win over the built-in one")
      ->check(CLI::ExistingFile);
  app.add_flag("--ssml", [&](int64_t) { opt.ssml = kokoro::FrontendOptions::Ssml::on; },
               "Read the input as SSML (default: only when it starts with <speak>)");
  app.add_flag("--no-ssml", [&](int64_t) { opt.ssml = kokoro::FrontendOptions::Ssml::off; },
               "Never read the input as SSML");
  app.add_flag("--no-markup", [&](int64_t) { opt.inline_markup = false; },
               "Read misaki's inline markup [word](/phonemes/) as plain text");
  app.add_flag("--no-espeak", [&](int64_t) { opt.espeak_fallback = false; },
               "Leave English words the lexicons do not know silent instead of asking espeak-ng");
  std::string emoji = "read";
  app.add_option("--emoji", emoji, "Emoji: read (each one's name, a run of the same one once) or drop")
      ->check(CLI::IsMember({"read", "drop"}))
      ->capture_default_str();
  app.add_flag("--text", show_text, "Print each segment's source text before its phonemes");
  app.add_flag("--normalized", show_normalized,
               "Print the words that will be said (numbers, dates, units... written out) instead of phonemes");
  app.add_flag("--words", show_words, "After each segment, print its words as text<TAB>phonemes");
  app.add_flag("-v,--verbose", verbose, "Debug logging (dropped symbols, lexicon loading)");
  CLI11_PARSE(app, argc, argv);
  opt.emoji = emoji == "drop" ? kokoro::FrontendOptions::Emoji::drop : kokoro::FrontendOptions::Emoji::read;
  if (verbose) spdlog::set_level(spdlog::level::debug);

  std::string text;
  if (words.empty()) {
    text.assign(std::istreambuf_iterator<char>(std::cin), std::istreambuf_iterator<char>());
  } else {
    for (size_t i = 0; i < words.size(); ++i) text += (i ? " " : "") + words[i];
  }
  try {
    const kokoro::Frontend frontend(opt);
    if (show_normalized) {
      std::cout << frontend.normalize(text) << '\n';
      return 0;
    }
    for (const auto& seg : frontend.segment(text)) {
      if (show_text) {
        std::cout << seg.text << '\n';
        // What SSML asked for around this segment.
        if (seg.pause_before > 0) std::cout << "# pause " << seg.pause_before << " s\n";
        if (!seg.voice.empty()) std::cout << "# voice " << seg.voice << '\n';
        if (seg.rate != 1.0) std::cout << "# rate " << seg.rate << '\n';
        for (const auto& m : seg.marks) std::cout << "# mark " << m << '\n';
        for (const auto& m : seg.inner_marks) {
          const size_t end = std::min(text.find_first_of(" \t\n<", m.word_begin), text.size());
          std::cout << "# mark " << m.name << " before \"" << text.substr(m.word_begin, end - m.word_begin) << "\"\n";
        }
      }
      // A pause-only segment (text with nothing speakable) has no phonemes: it is never given to the model.
      if (seg.phonemes.empty()) {
        if (!show_text) std::cout << "# pause " << seg.pause_before << " s\n";
      } else {
        std::cout << seg.phonemes << '\n';
      }
      if (show_text) {
        for (const auto& m : seg.marks_after) std::cout << "# mark " << m << '\n';
        if (seg.pause_after > 0) std::cout << "# pause " << seg.pause_after << " s\n";
      }
      if (show_words) {
        for (const auto& w : seg.words)
          std::cout << "  " << text.substr(w.text_begin, w.text_end - w.text_begin) << '\t'
                    << seg.phonemes.substr(w.phoneme_begin, w.phoneme_end - w.phoneme_begin) << '\n';
      }
    }
  } catch (const kokoro::Error& e) {
    std::cerr << "kokoro-phonemize: " << e.what() << '\n';
    return 1;
  }
  return 0;
}
