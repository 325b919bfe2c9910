#include "frontend/frontend.h"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <filesystem>
#include <optional>

#include "core/assets.h"
#include "core/error.h"
#include "core/voice.h"
#include "frontend/chunker.h"
#include "frontend/en_g2p.h"
#include "frontend/espeak_g2p.h"
#include "frontend/ja_g2p.h"
#include "frontend/ja_latin.h"
#include "frontend/line_filter.h"
#include "frontend/ssml.h"
#include "frontend/unicode_text.h"
#include "frontend/utf8.h"
#include "frontend/zh_g2p.h"

namespace kokoro {

namespace {

struct Language {
  bool english = false;
  bool british = false;
  bool japanese = false;
  std::string espeak;  // espeak-ng language for the non-English ones
  bool mandarin = false;  // zh_g2p.h rather than espeak-ng
};

Language parse_language(std::string lang) {
  std::transform(lang.begin(), lang.end(), lang.begin(), [](unsigned char c) { return std::tolower(c); });
  if (lang == "en-us" || lang == "a" || lang == "en") return {true, false, false, ""};
  if (lang == "en-gb" || lang == "b") return {true, true, false, ""};
  if (lang == "es" || lang == "e") return {false, false, false, "es"};
  if (lang == "fr-fr" || lang == "f" || lang == "fr") return {false, false, false, "fr-fr"};
  if (lang == "hi" || lang == "h") return {false, false, false, "hi"};
  if (lang == "it" || lang == "i") return {false, false, false, "it"};
  if (lang == "pt-br" || lang == "p") return {false, false, false, "pt-br"};
  if (lang == "ja" || lang == "j") return {false, false, true, ""};
  if (lang == "zh" || lang == "z" || lang == "zh-cn" || lang == "cmn") return {false, false, false, "", true};
  throw Error("unsupported language '" + lang + "' (use en-us, en-gb, es, fr-fr, hi, it, pt-br, ja or zh)");
}

bool is_line_break(char32_t c) { return c == U'\n' || c == 0x2028 || c == 0x2029; }

// A token is a word (gets a WordSpan) when its phonemes are more than punctuation.
bool is_spoken(const std::u32string& ps) {
  static constexpr std::u32string_view kPunct = U";:,.!?—…\"“”() ";
  return std::any_of(ps.begin(), ps.end(), [](char32_t c) { return kPunct.find(c) == std::u32string_view::npos; });
}

// A segment says something when its phonemes have a letter (every language's phoneme symbols are letters
// or modifier letters; the rest is punctuation and tone arrows).
bool says_something(const std::string& phonemes) {
  const std::u32string ps = utf8::to_u32(phonemes);
  return std::any_of(ps.begin(), ps.end(), [](char32_t c) { return text::is_letter(c); });
}

// Text with nothing speakable becomes a pause, and pauses next to each other are one: a thousand lines of
// dots are one pause, not a thousand.
void add_pause(std::vector<Segment>& out, std::string_view source, size_t begin, size_t end) {
  if (!out.empty() && out.back().phonemes.empty() && out.back().pause_after == 0 && out.back().marks_after.empty()) {
    Segment& last = out.back();
    last.text_end = std::max(last.text_end, end);
    last.pause_before = std::max(last.pause_before, kSilentTextPause);
  } else {
    Segment pause;
    pause.text_begin = begin;
    pause.text_end = end;
    pause.pause_before = kSilentTextPause;
    out.push_back(std::move(pause));
  }
  Segment& seg = out.back();
  seg.text = utf8::encode(utf8::to_u32(source.substr(seg.text_begin, seg.text_end - seg.text_begin)));
}

}  // namespace

struct Frontend::Impl {
  FrontendOptions options;
  Language language;
  std::shared_ptr<EnglishEspeakFallback> en_fallback;
  std::unique_ptr<en::G2P> en_g2p;
  std::unique_ptr<EspeakLanguageG2P> other_g2p;
  std::unique_ptr<ja::G2P> ja_g2p;
  std::unique_ptr<zh::G2P> zh_g2p;

  std::vector<Unit> units_of(const std::vector<utf8::CodePoint>& line) const {
    if (ja_g2p) return ja_g2p->phonemize_line(line);
    if (zh_g2p) return zh_g2p->phonemize_line(line);
    if (!language.english) return other_g2p->phonemize_line(line);
    std::vector<Unit> units;
    for (auto& tk : en_g2p->phonemize_line(line)) {
      Unit u;
      u.phonemes = tk.phonemes.value_or(U"");
      u.space_after = tk.space_after;
      u.text_begin = tk.begin;
      u.text_end = tk.end;
      u.is_word = is_spoken(u.phonemes);
      units.push_back(std::move(u));
    }
    return units;
  }
};

Frontend::Frontend(const FrontendOptions& options) : impl_(std::make_unique<Impl>()) {
  impl_->options = options;
  impl_->language = parse_language(options.language);
  if (options.max_phonemes < 1 || options.max_phonemes > static_cast<size_t>(kMaxPhonemes))
    throw Error("max_phonemes must be in [1, " + std::to_string(kMaxPhonemes) + "], got " +
                std::to_string(options.max_phonemes));
  if (impl_->language.english) {
    const std::string assets = find_assets_dir(options.assets_dir);
    const std::string lexicons = assets + "/lexicons";
    if (!std::filesystem::is_directory(lexicons)) throw Error("no lexicons directory at " + lexicons);
    auto data = en::LexiconData::load(lexicons, impl_->language.british);
    en::Fallback fallback;
    if (options.espeak_fallback) {
      impl_->en_fallback = std::make_shared<EnglishEspeakFallback>(impl_->language.british);
      fallback = [fb = impl_->en_fallback](const std::u32string& w) { return (*fb)(w); };
    }
    en::G2POptions g2p_options;
    g2p_options.inline_markup = options.inline_markup;
    if (!options.lexicon_file.empty() || !options.lexicon_entries.empty())
      g2p_options.user = en::UserLexicon::load(options.lexicon_file, options.lexicon_entries);
    impl_->en_g2p = std::make_unique<en::G2P>(std::move(data), std::move(fallback), std::move(g2p_options));
  } else if (impl_->language.japanese) {
    const std::string assets = find_assets_dir(options.assets_dir);
    impl_->ja_g2p = std::make_unique<ja::G2P>("", Vocab::load(assets + "/config.json"),
                                              ja::english_reader(assets, options.espeak_fallback));
  } else if (impl_->language.mandarin) {
    // Latin words in Chinese text read by the English G2P, as for Japanese (zh_g2p.h).
    const std::string assets = find_assets_dir(options.assets_dir);
    impl_->zh_g2p = zh::G2P::load(assets, ja::english_reader(assets, options.espeak_fallback));
  } else {
    impl_->other_g2p = std::make_unique<EspeakLanguageG2P>(impl_->language.espeak);
  }
}

Frontend::~Frontend() = default;
Frontend::Frontend(Frontend&&) noexcept = default;
Frontend& Frontend::operator=(Frontend&&) noexcept = default;

const FrontendOptions& Frontend::options() const { return impl_->options; }

namespace {

// Malformed SSML that was only detected (not asked for) is read as its text with the tags blanked out
// (offsets stay those of the input), so that segment() keeps never throwing for plain-text callers.
std::string without_tags(std::string_view text) {
  std::string out(text);
  bool in_tag = false;
  for (char& c : out) {
    if (c == '<') in_tag = true;
    const bool was = in_tag;
    if (c == '>') in_tag = false;
    if (was) c = ' ';
  }
  return out;
}

std::optional<ssml::Document> parse_ssml(std::string_view text, const FrontendOptions& o) {
  try {
    ssml::Document doc = ssml::parse(text);
    for (const auto& w : doc.warnings) spdlog::warn("SSML: {}", w);
    return doc;
  } catch (const Error& e) {
    if (o.ssml == FrontendOptions::Ssml::on) throw;
    spdlog::warn("{}; reading the text without its tags", e.what());
    return std::nullopt;
  }
}

}  // namespace

bool Frontend::reads_as_ssml(std::string_view text) const {
  const FrontendOptions& o = impl_->options;
  return o.ssml == FrontendOptions::Ssml::on ||
         (o.ssml == FrontendOptions::Ssml::automatic && ssml::looks_like_ssml(text));
}

std::string Frontend::normalize(std::string_view text) const {
  if (reads_as_ssml(text)) {
    const auto doc = parse_ssml(text, impl_->options);
    if (!doc) return normalize_plain(without_tags(text));
    std::string out;
    for (const auto& piece : doc->pieces) {
      std::string words = normalize_plain(piece.text);
      const size_t b = words.find_first_not_of(" \n"), e = words.find_last_not_of(" \n");
      if (b == std::string::npos) continue;
      out += (out.empty() ? "" : "\n") + words.substr(b, e - b + 1);
    }
    return out;
  }
  return normalize_plain(text);
}

std::string Frontend::normalize_plain(std::string_view text) const {
  if (!impl_->language.english && !impl_->zh_g2p) return std::string(text);
  const std::vector<utf8::CodePoint> cps = utf8::decode(text);
  std::string out;
  size_t i = 0;
  while (i < cps.size()) {
    size_t j = i;
    while (j < cps.size() && !is_line_break(cps[j].cp)) ++j;
    if (i > 0) out.push_back('\n');
    std::vector<utf8::CodePoint> line(cps.begin() + static_cast<std::ptrdiff_t>(i),
                                      cps.begin() + static_cast<std::ptrdiff_t>(j));
    filter_line(line, impl_->options.emoji == FrontendOptions::Emoji::drop);
    // A line with nothing speakable says nothing: it is a pause.
    if (line_content(line) == LineContent::speech)
      out += impl_->zh_g2p ? impl_->zh_g2p->normalize_line(line) : impl_->en_g2p->normalize_line(line);
    i = j + 1;
  }
  return out;
}

std::vector<Segment> Frontend::segment(std::string_view text, bool first_sentence_alone) const {
  if (!reads_as_ssml(text)) return segment_plain(text, impl_->options.first_segment_max_words, first_sentence_alone);
  const auto parsed = parse_ssml(text, impl_->options);
  if (!parsed) {
    // Segment::text is the caller's text again, tags included (invalid UTF-8 read as U+FFFD, as always).
    std::vector<Segment> segs =
        segment_plain(without_tags(text), impl_->options.first_segment_max_words, first_sentence_alone);
    for (auto& s : segs) s.text = utf8::encode(utf8::to_u32(text.substr(s.text_begin, s.text_end - s.text_begin)));
    return segs;
  }
  const ssml::Document& doc = *parsed;
  std::vector<Segment> out;
  double pause = 0;
  std::vector<std::string> marks;  // reached, waiting for the next spoken word
  for (const auto& piece : doc.pieces) {
    pause += piece.pause_before;
    // Only the first piece of the utterance gets the short streaming segment.
    std::vector<Segment> segs = segment_plain(piece.text, out.empty() ? impl_->options.first_segment_max_words : 0,
                                              out.empty() && first_sentence_alone);
    // A mark goes with the first word that does not end before it: before the segment when that word is the
    // segment's first, else inside the segment at that word. The segments are those of the text without
    // the marks, so a mark changes nothing that is said.
    size_t next_mark = 0;
    for (auto& seg : segs) {
      for (size_t w = 0; w < seg.words.size(); ++w) {
        for (; next_mark < piece.marks.size() && piece.marks[next_mark].at < seg.words[w].text_end; ++next_mark) {
          if (w == 0) marks.push_back(piece.marks[next_mark].name);
          else seg.inner_marks.push_back({piece.marks[next_mark].name, seg.words[w].text_begin});
        }
      }
      seg.marks = std::move(marks);
      marks.clear();
      // Offsets in the piece's text -> offsets in the SSML source.
      seg.text_begin = piece.begin_of[seg.text_begin];
      seg.text_end = piece.end_of[seg.text_end - 1];
      for (auto& w : seg.words) {
        w.text_begin = piece.begin_of[w.text_begin];
        w.text_end = piece.end_of[w.text_end - 1];
      }
      for (auto& m : seg.inner_marks) m.word_begin = piece.begin_of[m.word_begin];
      seg.voice = piece.voice;
      seg.rate = piece.rate;
    }
    // Marks after the piece's last word wait for the next spoken word (or the end).
    for (; next_mark < piece.marks.size(); ++next_mark) marks.push_back(piece.marks[next_mark].name);
    if (segs.empty()) continue;  // nothing spoken: its pause goes to the next piece
    segs.front().pause_before += pause;
    pause = 0;
    for (auto& seg : segs) out.push_back(std::move(seg));
  }
  // What follows the last spoken text (a document with no spoken text has no segments at all).
  if (!out.empty()) {
    out.back().pause_after = pause + doc.pause_after;
    out.back().marks_after = std::move(marks);
    out.back().marks_after.insert(out.back().marks_after.end(), doc.trailing_marks.begin(), doc.trailing_marks.end());
  }
  return out;
}

std::vector<size_t> Frontend::sentence_ends(std::string_view text) const {
  const std::vector<utf8::CodePoint> cps = utf8::decode(text);
  const bool drop_emoji = impl_->options.emoji == FrontendOptions::Emoji::drop;
  std::vector<size_t> ends;
  for (size_t i = 0; i < cps.size();) {
    size_t j = i;
    while (j < cps.size() && !is_line_break(cps[j].cp)) ++j;
    std::vector<utf8::CodePoint> line(cps.begin() + static_cast<std::ptrdiff_t>(i),
                                      cps.begin() + static_cast<std::ptrdiff_t>(j));
    filter_line(line, drop_emoji);
    if (!line.empty() && line_content(line) == LineContent::speech) {
      const std::vector<Unit> units = impl_->units_of(line);
      size_t from = 0;
      for (size_t u = 0; u < units.size(); ++u) {
        if (const size_t after = sentence_end_after(units, from, u); after > 0) {
          ends.push_back(units[after - 1].text_end);
          from = after;
        }
      }
    }
    i = j + 1;
  }
  return ends;
}

std::vector<Segment> Frontend::segment_plain(std::string_view text, size_t first_words,
                                             bool first_sentence_alone) const {
  const std::vector<utf8::CodePoint> cps = utf8::decode(text);
  Chunker chunker(impl_->options.max_phonemes, first_words, impl_->options.segment_growth_after_cut,
                  first_sentence_alone);
  const bool drop_emoji = impl_->options.emoji == FrontendOptions::Emoji::drop;
  std::vector<Segment> out, line_segments;
  size_t i = 0;
  while (i < cps.size()) {
    size_t j = i;
    while (j < cps.size() && !is_line_break(cps[j].cp)) ++j;
    if (j > i) {
      std::vector<utf8::CodePoint> line(cps.begin() + static_cast<std::ptrdiff_t>(i),
                                        cps.begin() + static_cast<std::ptrdiff_t>(j));
      filter_line(line, drop_emoji);
      switch (line_content(line)) {
        case LineContent::nothing:
          break;
        case LineContent::marks_only:
          add_pause(out, text, line.front().begin, line.back().end);
          break;
        case LineContent::speech:
          line_segments.clear();
          chunker.add_line(impl_->units_of(line), text, line_segments);
          for (auto& seg : line_segments) {
            // Only punctuation (what a G2P left of symbols it does not read): a pause as well.
            if (says_something(seg.phonemes)) {
              out.push_back(std::move(seg));
            } else {
              add_pause(out, text, seg.text_begin, seg.text_end);
            }
          }
          break;
      }
    }
    i = j + 1;
  }
  return out;
}

}  // namespace kokoro
