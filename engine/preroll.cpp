#include "engine/preroll.h"

#include <algorithm>
#include <cmath>

namespace kokoro {

double preroll_needed_seconds(const std::vector<double>& audio_seconds, const std::vector<double>& vocode_seconds,
                              const PrerollOptions& options) {
  if (audio_seconds.empty()) return 0;
  const double inflate = 1.0 + std::max(0.0, options.margin_share);
  double vocoded = 0, played_before = 0, worst = 0;
  for (size_t k = 0; k < audio_seconds.size(); ++k) {
    vocoded += inflate * std::max(0.0, k < vocode_seconds.size() ? vocode_seconds[k] : 0.0);  // segment k ready
    worst = std::max(worst, vocoded - played_before);  // ... minus when it is due
    played_before += audio_seconds[k];
  }
  return worst + std::max(0.0, options.margin_seconds);
}

double preroll_needed_seconds(const std::vector<double>& audio_seconds, double rtf, const PrerollOptions& options) {
  std::vector<double> vocode(audio_seconds.size());
  for (size_t k = 0; k < audio_seconds.size(); ++k) vocode[k] = std::max(0.0, rtf) * audio_seconds[k];
  return preroll_needed_seconds(audio_seconds, vocode, options);
}

double remaining_vocode_seconds(double prior_seconds, double elapsed_seconds, double fraction, const PrerollOptions& options,
                                double recent_pace) {
  const double prior = std::max(0.0, prior_seconds);
  if (!(fraction > 0)) return prior;
  const double f = std::min(fraction, 1.0);
  // The whole segment at the pace so far, or at the last piece's when that is slower.
  const double measured = std::max(std::max(0.0, elapsed_seconds) / f, std::isfinite(recent_pace) ? recent_pace : 0.0);
  double total = measured;
  if (measured < prior) {
    const double trust = options.progress_trust_fraction > 0 ? std::min(1.0, f / options.progress_trust_fraction) : 1.0;
    total = prior + trust * (measured - prior);
  }
  return total * (1.0 - f);
}

double updated_preroll_rtf(double estimate, double measured) {
  if (!(measured > 0)) return estimate;
  return measured >= estimate ? measured : 0.5 * (estimate + measured);
}

double EarlyRestartEstimate::seconds(double segment_seconds, double slice_pace) const {
  const double s = std::max(0.0, segment_seconds);
  if (per_second > 0) return per_second * (s + kFixedSeconds);
  const double unmeasured = kUnmeasuredPerSecond * s;
  if (!(slice_pace > 0)) return unmeasured;
  return std::min(unmeasured, kFirstMargin * kSliceShare * slice_pace * (s + kFixedSeconds));
}

void EarlyRestartEstimate::measured(double segment_seconds, double restart_seconds) {
  if (!(restart_seconds > 0) || !(segment_seconds >= 0)) return;
  const double now = restart_seconds / (segment_seconds + kFixedSeconds);
  per_second = per_second > 0 ? updated_preroll_rtf(per_second, now) : now;
}

}  // namespace kokoro
