#include "frontend/zh_segment.h"

#include <array>
#include <cmath>

#include "frontend/utf8.h"

namespace kokoro::zh {

namespace {

// jieba's han pattern stops at U+9FD5; later ideographs are cut as single characters.
bool in_jieba_block(char32_t c) { return c >= 0x4E00 && c <= 0x9FD5; }

enum { B = 0, E = 1, M = 2, S = 3 };

// jieba finalseg: Viterbi over B/E/M/S, ties broken as Python's max over (prob, state letter) does.
void hmm_cut(const Dict& dict, std::u32string_view s, size_t offset, std::vector<std::pair<size_t, size_t>>& out) {
  static constexpr char kLetter[4] = {'B', 'E', 'M', 'S'};
  static constexpr int kOrder[4] = {B, M, E, S};  // jieba iterates 'BMES'
  static constexpr int kPrev[4][2] = {{E, S}, {B, M}, {M, B}, {S, E}};  // PrevStatus of B, E, M, S
  const size_t n = s.size();
  std::vector<std::array<double, 4>> v(n);
  std::vector<std::array<int, 4>> back(n);
  auto emit_of = [&](char32_t c, double e[4]) {
    if (!dict.emit(c, e))
      for (int k = 0; k < 4; ++k) e[k] = kMinFloat;
  };
  double e[4];
  emit_of(s[0], e);
  for (int y : kOrder) v[0][y] = dict.start(y) + e[y];
  for (size_t t = 1; t < n; ++t) {
    emit_of(s[t], e);
    for (int y : kOrder) {
      double best = 0;
      int best_state = -1;
      for (int y0 : kPrev[y]) {
        const double p = v[t - 1][y0] + dict.trans(y0, y) + e[y];
        if (best_state < 0 || p > best || (p == best && kLetter[y0] > kLetter[best_state])) {
          best = p;
          best_state = y0;
        }
      }
      v[t][y] = best;
      back[t][y] = best_state;
    }
  }
  int state = (v[n - 1][S] > v[n - 1][E] || v[n - 1][S] == v[n - 1][E]) ? S : E;
  std::vector<int> path(n);
  for (size_t t = n; t-- > 0;) {
    path[t] = state;
    if (t > 0) state = back[t][state];
  }
  size_t begin = 0, next = 0;
  for (size_t i = 0; i < n; ++i) {
    if (path[i] == B) begin = i;
    else if (path[i] == E) {
      out.emplace_back(offset + begin, offset + i + 1);
      next = i + 1;
    } else if (path[i] == S) {
      out.emplace_back(offset + i, offset + i + 1);
      next = i + 1;
    }
  }
  if (next < n) out.emplace_back(offset + next, offset + n);
}

void flush_single_chars(const Dict& dict, std::u32string_view block, size_t begin, size_t end, size_t offset,
                        std::vector<std::pair<size_t, size_t>>& out) {
  if (end == begin) return;
  if (end - begin == 1) {
    out.emplace_back(offset + begin, offset + end);
    return;
  }
  uint32_t freq = 0;
  const std::string key = utf8::encode(block.substr(begin, end - begin));
  if (dict.word(key, freq) == Found::word && freq > 0) {
    for (size_t i = begin; i < end; ++i) out.emplace_back(offset + i, offset + i + 1);
  } else {
    hmm_cut(dict, block.substr(begin, end - begin), offset + begin, out);
  }
}

// jieba's __cut_DAG on one block of ideographs.
void cut_block(const Dict& dict, std::u32string_view s, size_t offset, std::vector<std::pair<size_t, size_t>>& out) {
  const size_t n = s.size();
  std::vector<std::vector<size_t>> dag(n);
  std::vector<std::vector<double>> logf(n);
  std::string frag;
  for (size_t k = 0; k < n; ++k) {
    frag.clear();
    for (size_t i = k; i < n; ++i) {
      utf8::append(frag, s[i]);
      uint32_t freq = 0;
      const Found f = dict.word(frag, freq);
      if (f == Found::no) break;
      if (f == Found::word && freq > 0) {
        dag[k].push_back(i);
        logf[k].push_back(std::log(static_cast<double>(freq)));
      }
    }
    if (dag[k].empty()) {
      dag[k].push_back(k);
      logf[k].push_back(0.0);  // log(FREQ.get(...) or 1)
    }
  }
  // route[idx] = max over x of (log freq - log total + route[x+1], x); ties go to the larger x.
  std::vector<double> score(n + 1, 0.0);
  std::vector<size_t> to(n + 1, 0);
  const double log_total = dict.log_total();
  for (size_t idx = n; idx-- > 0;) {
    bool first = true;
    for (size_t j = 0; j < dag[idx].size(); ++j) {
      const size_t x = dag[idx][j];
      const double sc = logf[idx][j] - log_total + score[x + 1];
      if (first || sc > score[idx] || (sc == score[idx] && x > to[idx])) {
        score[idx] = sc;
        to[idx] = x;
        first = false;
      }
    }
  }
  size_t x = 0, buf_begin = 0;
  bool in_buf = false;
  while (x < n) {
    const size_t y = to[x] + 1;
    if (y - x == 1) {
      if (!in_buf) buf_begin = x, in_buf = true;
    } else {
      if (in_buf) flush_single_chars(dict, s, buf_begin, x, offset, out);
      in_buf = false;
      out.emplace_back(offset + x, offset + y);
    }
    x = y;
  }
  if (in_buf) flush_single_chars(dict, s, buf_begin, n, offset, out);
}

}  // namespace

std::vector<std::pair<size_t, size_t>> cut_words(const Dict& dict, std::u32string_view han) {
  std::vector<std::pair<size_t, size_t>> out;
  size_t i = 0;
  while (i < han.size()) {
    if (!in_jieba_block(han[i])) {
      out.emplace_back(i, i + 1);
      ++i;
      continue;
    }
    size_t j = i;
    while (j < han.size() && in_jieba_block(han[j])) ++j;
    cut_block(dict, han.substr(i, j - i), i, out);
    i = j;
  }
  return out;
}

std::vector<std::string> word_readings(const Dict& dict, std::u32string_view word) {
  std::vector<std::string> out;
  out.reserve(word.size());
  auto phrase_or_chars = [&](std::u32string_view piece) {
    std::string_view r;
    if (piece.size() > 0 && dict.phrase(utf8::encode(piece), r) == Found::word) {
      size_t k = 0, added = 0;
      while (k <= r.size() && added < piece.size()) {
        size_t sp = r.find(' ', k);
        if (sp == std::string_view::npos) sp = r.size();
        out.emplace_back(r.substr(k, sp - k));
        ++added;
        k = sp + 1;
      }
      for (; added < piece.size(); ++added) out.emplace_back();
      return;
    }
    for (char32_t c : piece) out.emplace_back(dict.reading(c));
  };
  // pypinyin's mmseg (no_non_phrases): grow the match while it is a prefix of some phrase, remember the
  // longest one that is a phrase.
  std::u32string_view remain = word;
  while (!remain.empty()) {
    size_t last_valid = 0;
    bool stopped = false;
    for (size_t len = 1; len <= remain.size(); ++len) {
      std::string_view r;
      const Found f = dict.phrase(utf8::encode(remain.substr(0, len)), r);
      if (f == Found::no) {
        stopped = true;
        break;
      }
      if (f == Found::word) last_valid = len;
    }
    if (last_valid) {
      phrase_or_chars(remain.substr(0, last_valid));
      remain.remove_prefix(last_valid);
    } else if (stopped) {
      phrase_or_chars(remain.substr(0, 1));
      remain.remove_prefix(1);
    } else {
      for (size_t k = 0; k < remain.size(); ++k) phrase_or_chars(remain.substr(k, 1));
      remain = {};
    }
  }
  return out;
}

}  // namespace kokoro::zh
