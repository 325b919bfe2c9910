#include "engine/word_timing.h"

#include <algorithm>

namespace kokoro {

namespace {

constexpr double kHalfFramesPerSecond = 80.0;  // 24000 / 600 frames per second, counted in halves

// Code point index of every byte offset in s (offsets inside a code point map to that code point).
std::vector<size_t> code_point_index(const std::string& s) {
  std::vector<size_t> idx(s.size() + 1);
  size_t cp = 0;
  for (size_t b = 0; b < s.size(); ++b) {
    if ((static_cast<unsigned char>(s[b]) & 0xC0) != 0x80 && b > 0) ++cp;
    idx[b] = cp;
  }
  idx[s.size()] = s.empty() ? 0 : cp + 1;
  return idx;
}

struct Unit {
  size_t begin, end;  // bytes in the phoneme string
  int word = -1;      // index into segment.words, or -1 for punctuation
};

}  // namespace

std::vector<WordTiming> word_timings(const Segment& seg, const std::vector<int64_t>& dur) {
  std::vector<WordTiming> out;
  const std::string& ps = seg.phonemes;
  if (dur.size() < 3 || ps.empty()) return out;
  const std::vector<size_t> cp = code_point_index(ps);

  // The token sequence the reference walks: words, and the punctuation runs between them.
  std::vector<Unit> units;
  size_t pos = 0;
  auto add_punctuation = [&](size_t from, size_t to) {
    size_t b = from;
    while (b < to) {
      while (b < to && ps[b] == ' ') ++b;
      size_t e = b;
      while (e < to && ps[e] != ' ') ++e;
      if (e > b) units.push_back({b, e, -1});
      b = e;
    }
  };
  for (size_t w = 0; w < seg.words.size(); ++w) {
    const WordSpan& span = seg.words[w];
    if (span.phoneme_begin < pos || span.phoneme_end > ps.size() || span.phoneme_end <= span.phoneme_begin) continue;
    add_punctuation(pos, span.phoneme_begin);
    units.push_back({span.phoneme_begin, span.phoneme_end, static_cast<int>(w)});
    pos = span.phoneme_end;
  }
  add_punctuation(pos, ps.size());

  const int64_t n = static_cast<int64_t>(dur.size());
  int64_t left = 2 * std::max<int64_t>(0, dur[0] - 3), right = left;
  int64_t i = 1;
  for (const Unit& u : units) {
    if (i >= n - 1) break;
    i = 1 + static_cast<int64_t>(cp[u.begin]);
    const int64_t j = 1 + static_cast<int64_t>(cp[u.end]);
    if (j >= n) break;
    const bool space = u.end < ps.size() && ps[u.end] == ' ';
    int64_t token_dur = 0;
    for (int64_t k = i; k < j; ++k) token_dur += dur[k];
    const int64_t space_dur = space ? dur[j] : 0;
    const int64_t start = left;
    left = right + 2 * token_dur + space_dur;
    if (u.word >= 0) {
      const WordSpan& span = seg.words[u.word];
      out.push_back({span.text_begin, span.text_end, start / kHalfFramesPerSecond, left / kHalfFramesPerSecond});
    }
    right = left + space_dur;
  }
  return out;
}

}  // namespace kokoro
