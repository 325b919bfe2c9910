// Progress of a long computation (a segment's vocoding), reported on the calling thread between its pieces
// of work, as the fraction of the whole work done. The fractions are weighted by the work (multiply-adds)
// of each piece as the layer shapes give it, so that the caller can estimate the time still to come from
// the time so far (engine/stream_engine_preroll.cpp). Reporting costs a branch when nobody listens.
#pragma once
#include <functional>

namespace kokoro {

using ProgressCallback = std::function<void(double done_fraction)>;

// One computation's share [from, to] of the caller's whole work: done(p) reports from + (to - from) * p.
struct WorkProgress {
  const ProgressCallback* report = nullptr;
  double from = 0, to = 1;
  void done(double part) const {
    if (report && *report) (*report)(from + (to - from) * part);
  }
};

inline void report_progress(const WorkProgress* progress, double part) {
  if (progress) progress->done(part);
}

}  // namespace kokoro
