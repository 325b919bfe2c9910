#include "frontend/chunker.h"

#include <algorithm>

#include "frontend/unicode_text.h"
#include "frontend/utf8.h"

namespace kokoro {

namespace {

bool is_clause_mark(const std::u32string& ps, std::u32string_view set) {
  return ps.size() == 1 && set.find(ps[0]) != std::u32string_view::npos;
}

// A closing ) or ” stays with the segment (sentence) it closes.
bool is_closer(const Unit& u) { return u.phonemes == U")" || u.phonemes == U"”"; }

// KPipeline.tokens_to_ps: phonemes joined with their spaces, stripped.
std::u32string joined(const std::vector<Unit>& u, size_t b, size_t e) {
  std::u32string s;
  for (size_t i = b; i < e; ++i) {
    s += u[i].phonemes;
    if (u[i].space_after) s.push_back(U' ');
  }
  const size_t first = s.find_first_not_of(U' ');
  if (first == std::u32string::npos) return {};
  const size_t last = s.find_last_not_of(U' ');
  return s.substr(first, last - first + 1);
}

// KPipeline.waterfall_last over units [b, e): where to cut so that the rest fits.
size_t waterfall_cut(const std::vector<Unit>& u, size_t b, size_t e, size_t next_count, size_t max) {
  static constexpr std::u32string_view kLevels[] = {kSentenceMarks, U":;", U",—"};
  for (std::u32string_view level : kLevels) {
    size_t z = e;
    for (size_t i = e; i-- > b;) {
      if (is_clause_mark(u[i].phonemes, level)) {
        z = i;
        break;
      }
    }
    if (z == e) continue;
    ++z;
    if (z < e && is_closer(u[z])) ++z;
    const size_t head = joined(u, b, z).size();
    if (next_count - std::min(next_count, head) <= max) return z;
  }
  return e;
}

// Where a segment of units [b, e) may end early: after its last mark of `set` (and a closing ) or ” that
// follows it) with at least one word before it; e when there is none.
size_t after_last_mark(const std::vector<Unit>& u, size_t b, size_t e, std::u32string_view set) {
  size_t z = e;
  for (size_t k = e; k-- > b;) {
    if (is_clause_mark(u[k].phonemes, set)) {
      z = k + 1;
      if (z < e && is_closer(u[z])) ++z;
      break;
    }
  }
  for (size_t k = b; k < z && z < e; ++k)
    if (u[k].is_word) return z;
  return e;
}

// Where the first sentence alone may not end although the chunker's rule ends a sentence: after a quotation
// (`"Are you sure?" Tom asked.`: its attribution follows), and before a word in lower case (`"Where are they?"
// asked Maria, ...`: the sentence goes on). Cutting there would model the rest as a sentence of its own.
bool not_a_first_sentence_end(const std::vector<Unit>& u, size_t next, std::string_view source) {
  if (next > 0 && u[next - 1].phonemes == U"”") return true;
  for (size_t k = next; k < u.size(); ++k) {
    if (!u[k].is_word) continue;
    if (u[k].text_begin >= source.size()) return false;
    const size_t n = std::min<size_t>(8, source.size() - u[k].text_begin);
    const std::u32string head = utf8::to_u32(source.substr(u[k].text_begin, n));
    return !head.empty() && text::is_lower_letter(head[0]);
  }
  return false;
}

}  // namespace

size_t sentence_end_after(const std::vector<Unit>& u, size_t from, size_t i) {
  if (i >= u.size() || !is_clause_mark(u[i].phonemes, kSentenceMarks)) return 0;
  if (std::none_of(u.begin() + static_cast<std::ptrdiff_t>(from), u.begin() + static_cast<std::ptrdiff_t>(i),
                   [](const Unit& w) { return w.is_word; }))
    return 0;
  return i + 1 < u.size() && is_closer(u[i + 1]) ? i + 2 : i + 1;
}

std::vector<Unit> split_oversized(std::vector<Unit> units, size_t max) {
  if (std::none_of(units.begin(), units.end(), [&](const Unit& u) { return u.phonemes.size() > max; }))
    return units;
  std::vector<Unit> out;
  out.reserve(units.size());
  for (Unit& u : units) {
    if (u.phonemes.size() <= max) {
      out.push_back(std::move(u));
      continue;
    }
    const std::u32string ps = std::move(u.phonemes);
    size_t pos = 0;
    while (pos < ps.size()) {
      size_t end = std::min(ps.size(), pos + max);
      size_t next = end;
      bool space = false;
      if (end < ps.size()) {
        const size_t sp = ps.rfind(U' ', end);
        if (sp != std::u32string::npos && sp > pos) {
          end = sp;
          next = sp + 1;
          space = true;
        }
      }
      Unit piece = u;
      piece.phonemes = ps.substr(pos, end - pos);
      piece.space_after = next >= ps.size() ? u.space_after : space;
      out.push_back(std::move(piece));
      pos = next;
    }
  }
  return out;
}

void Chunker::emit(const std::vector<Unit>& u, size_t b, size_t e, std::string_view source,
                   std::vector<Segment>& out) {
  if (b >= e) return;
  // Build the phoneme string, remembering where each word's phonemes are.
  std::u32string ps;
  std::vector<std::pair<size_t, size_t>> where(e - b);
  for (size_t i = b; i < e; ++i) {
    where[i - b] = {ps.size(), ps.size() + u[i].phonemes.size()};
    ps += u[i].phonemes;
    if (u[i].space_after) ps.push_back(U' ');
  }
  size_t lead = 0;
  while (lead < ps.size() && ps[lead] == U' ') ++lead;
  size_t tail = ps.size();
  while (tail > lead && ps[tail - 1] == U' ') --tail;
  if (tail == lead) return;
  if (tail - lead > max_) tail = lead + max_;  // cannot happen after split_oversized; kept as a guard
  const std::u32string body = ps.substr(lead, tail - lead);
  // Code point index -> byte offset in the UTF-8 phoneme string.
  std::vector<size_t> byte_at(body.size() + 1, 0);
  std::string ps8;
  for (size_t i = 0; i < body.size(); ++i) {
    byte_at[i] = ps8.size();
    utf8::append(ps8, body[i]);
  }
  byte_at[body.size()] = ps8.size();

  Segment seg;
  seg.phonemes = std::move(ps8);
  seg.text_begin = u[b].text_begin;
  seg.text_end = u[e - 1].text_end;
  for (size_t i = b; i < e; ++i) {
    if (!u[i].is_word || u[i].phonemes.empty()) continue;
    auto [pb, pe] = where[i - b];
    if (pe <= lead || pb >= tail) continue;
    pb = std::max(pb, lead) - lead;
    pe = std::min(pe, tail) - lead;
    seg.words.push_back({u[i].text_begin, u[i].text_end, byte_at[pb], byte_at[pe]});
  }
  const std::string_view raw = source.substr(seg.text_begin, seg.text_end - seg.text_begin);
  seg.text = utf8::is_valid(raw) ? std::string(raw) : utf8::encode(utf8::to_u32(raw));
  emitted_ += body.size();
  out.push_back(std::move(seg));
  first_done_ = true;
}

void Chunker::add_line(std::vector<Unit> units, std::string_view source, std::vector<Segment>& out) {
  units = split_oversized(std::move(units), max_);
  size_t start = 0;     // first unit of the pending segment
  size_t pcount = 0;    // KPipeline's running phoneme count of the pending segment
  size_t words = 0;     // spoken words in the pending segment
  size_t first_sentence_end = 0;  // first_sentence_: where the first sentence ends (0: not seen yet)
  for (size_t i = 0; i < units.size(); ++i) {
    if (first_sentence_end == i && i > start && !first_done_) {
      emit(units, start, i, source, out);  // the first sentence alone (first_sentence_alone)
      start = i;
      pcount = 0;
      words = 0;
    }
    const Unit& t = units[i];
    size_t next_len = t.phonemes.size() + (t.space_after ? 1 : 0);
    const size_t next_count = pcount + t.phonemes.size();  // next_ps.rstrip()
    const bool first_limit = !first_done_ && first_words_ > 0 && t.is_word && words + 1 > first_words_;
    const bool overflow = next_count > max_;
    // After a cut, a segment ends at its last sentence end once it would outgrow the audio before it.
    size_t sentence_end = i;
    if (!overflow && !first_limit && first_done_ && first_words_ > 0 && growth_ > 0 &&
        static_cast<double>(next_count) > growth_ * static_cast<double>(emitted_))
      sentence_end = after_last_mark(units, start, i, kSentenceMarks);
    if (overflow || first_limit || sentence_end < i) {
      size_t z;
      if (first_limit) {
        // Cut at the last clause boundary that keeps at least half of the words, else before this word. A
        // shorter first segment ("Years later,") plays out before the rest of its sentence is synthesized.
        z = after_last_mark(units, start, i, U"!.?…:;,—");
        size_t kept = 0;
        for (size_t k = start; k < z; ++k) kept += units[k].is_word;
        if (2 * kept < first_words_) z = i;
      } else if (!overflow) {
        z = sentence_end;  // the segment grew past what the audio before it covers (growth_after_cut)
      } else {
        z = waterfall_cut(units, start, i, next_count, max_);
      }
      emit(units, start, z, source, out);
      if (first_limit) first_done_ = true;
      start = z;
      pcount = joined(units, start, i).size();
      words = 0;
      for (size_t k = start; k < i; ++k) words += units[k].is_word;
      if (start == i) {
        // The new segment starts with this unit: no leading space.
        next_len = t.phonemes.size() + (t.space_after ? 1 : 0);
      }
    }
    pcount += next_len;
    words += t.is_word;
    if (first_sentence_ && !first_done_ && first_sentence_end <= start)
      if (const size_t end = sentence_end_after(units, start, i); end && !not_a_first_sentence_end(units, end, source))
        first_sentence_end = end;
  }
  emit(units, start, units.size(), source, out);
}

}  // namespace kokoro
