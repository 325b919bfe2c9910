#include "engine/preroll.h"

#include <algorithm>

namespace kokoro {

double preroll_needed_seconds(const std::vector<double>& audio_seconds, double rtf, const PrerollOptions& options) {
  if (audio_seconds.empty()) return 0;
  const double per_second = std::max(0.0, rtf) * (1.0 + std::max(0.0, options.margin_share));
  double vocoded = 0, played_before = 0, worst = 0;
  for (const double a : audio_seconds) {
    vocoded += per_second * a;                   // segment k ready
    worst = std::max(worst, vocoded - played_before);  // ... minus when it is due
    played_before += a;
  }
  return worst + std::max(0.0, options.margin_seconds);
}

double updated_preroll_rtf(double estimate, double measured) {
  if (!(measured > 0)) return estimate;
  return measured >= estimate ? measured : 0.5 * (estimate + measured);
}

}  // namespace kokoro
