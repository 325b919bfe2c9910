#include "engine/slice_planner.h"

#include <algorithm>
#include <cmath>

#include "core/error.h"

namespace kokoro {

SlicePlanner::SlicePlanner(SliceSchedule schedule, int64_t columns, double seconds_per_column, int64_t context_columns,
                           int64_t min_columns, std::vector<SliceBorder> borders)
    : s_(schedule), T_(columns), spc_(seconds_per_column), ctx_(context_columns), min_(std::max<int64_t>(1, min_columns)) {
  if (T_ < 1 || spc_ <= 0 || ctx_ < 0) throw Error("slice planner: bad segment geometry");
  if (s_.nominal_rtf <= 0 || s_.safety <= 0 || s_.first_slice_seconds <= 0 || s_.max_slice_seconds <= 0)
    throw Error("slice planner: speeds, safety and slice lengths must be positive");
  // Keep borders that leave both neighbouring slices at least min_ columns long, strictly increasing.
  for (const SliceBorder& b : borders)
    if (b.column >= min_ && T_ - b.column >= min_ && (borders_.empty() || b.column > borders_.back().column))
      borders_.push_back(b);
}

double SlicePlanner::compute_seconds(int64_t from, int64_t end, double rtf) const {
  const int64_t cols = end - from + (from > 0 ? ctx_ : 0) + (end < T_ ? ctx_ : 0);
  return rtf * spc_ * static_cast<double>(cols) + s_.overhead_seconds;
}

int64_t SlicePlanner::next_end(int64_t from, double queued_seconds, double rtf) const {
  if (from >= T_) throw Error("slice planner: nothing left to plan");
  const double remaining_s = static_cast<double>(T_ - from) * spc_;
  const int64_t max_cols = static_cast<int64_t>(std::floor(s_.max_slice_seconds / spc_));
  // Candidate borders after `from` that leave this slice at least min_ columns.
  auto first_candidate = std::upper_bound(borders_.begin(), borders_.end(), from + min_ - 1,
                                          [](int64_t c, const SliceBorder& b) { return c < b.column; });
  if (first_candidate == borders_.end()) return T_;

  if (queued_seconds <= 0) {
    // Nothing plays while this slice is computed: the first audio waits for it. Shortest word-aligned piece
    // of at least first_slice_seconds, at a pause if one comes soon after; a short segment is done whole.
    if (remaining_s <= 1.5 * s_.first_slice_seconds) return T_;
    const int64_t want = from + static_cast<int64_t>(std::ceil(s_.first_slice_seconds / spc_));
    const int64_t soon = from + static_cast<int64_t>(std::ceil(1.6 * s_.first_slice_seconds / spc_));
    int64_t fallback = -1;
    for (auto it = first_candidate; it != borders_.end() && it->column <= soon; ++it) {
      if (it->column < want) continue;
      if (it->gap_seconds >= s_.min_pause_seconds) return it->column;
      if (fallback < 0) fallback = it->column;
    }
    if (fallback >= 0) return fallback;
    auto after = std::lower_bound(first_candidate, borders_.end(), want,
                                  [](const SliceBorder& b, int64_t c) { return b.column < c; });
    return after != borders_.end() ? after->column : T_;
  }

  // Longest slice whose computation fits in safety * queued.
  const double budget = s_.safety * queued_seconds - s_.overhead_seconds;
  const double cols_budget = budget > 0 ? budget / (rtf * spc_) : 0;
  const double left_ctx = from > 0 ? static_cast<double>(ctx_) : 0;
  if (static_cast<double>(T_ - from) + left_ctx <= cols_budget && T_ - from <= max_cols) return T_;
  const int64_t limit = std::min<int64_t>(
      from + max_cols, from + static_cast<int64_t>(std::floor(cols_budget - left_ctx - static_cast<double>(ctx_))));
  int64_t best = -1, best_pause = -1;
  for (auto it = first_candidate; it != borders_.end() && it->column <= limit; ++it) {
    best = it->column;
    if (it->gap_seconds >= s_.min_pause_seconds && it->column >= from + (limit - from) / 2) best_pause = it->column;
  }
  if (best_pause >= 0) return best_pause;
  if (best >= 0) return best;
  return first_candidate->column;  // nothing fits: the smallest word-aligned piece (may run dry, at a border)
}

std::vector<int64_t> SlicePlanner::nominal_plan(double queued_seconds) const {
  std::vector<int64_t> ends;
  double q = std::max(0.0, queued_seconds);
  for (int64_t from = 0; from < T_;) {
    const int64_t end = next_end(from, q, s_.nominal_rtf);
    q = std::max(0.0, q - compute_seconds(from, end, s_.nominal_rtf)) + static_cast<double>(end - from) * spc_;
    ends.push_back(end);
    from = end;
  }
  return ends;
}

double SlicePlanner::nominal_queue_after(double queued_seconds) const {
  double q = std::max(0.0, queued_seconds);
  int64_t from = 0;
  for (int64_t end : nominal_plan(queued_seconds)) {
    q = std::max(0.0, q - compute_seconds(from, end, s_.nominal_rtf)) + static_cast<double>(end - from) * spc_;
    from = end;
  }
  return q;
}

std::vector<SliceBorder> slice_borders_from_words(const std::vector<WordTimes>& words, double seconds_per_column,
                                                  int64_t columns) {
  std::vector<SliceBorder> out;
  for (size_t i = 0; i + 1 < words.size(); ++i) {
    const double gap_begin = words[i].end_s, gap_end = std::max(words[i + 1].start_s, gap_begin);
    const int64_t col = std::llround(0.5 * (gap_begin + gap_end) / seconds_per_column);
    if (col <= 0 || col >= columns) continue;
    if (!out.empty() && col <= out.back().column) {
      out.back().gap_seconds = std::max(out.back().gap_seconds, gap_end - gap_begin);
      continue;
    }
    out.push_back({col, gap_end - gap_begin});
  }
  return out;
}

}  // namespace kokoro
