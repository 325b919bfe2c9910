#include "apps/common/report.h"

#include <cstdio>

namespace kokoro::app {

std::string excerpt(const std::string& text, std::size_t max_chars) {
  std::string out;
  std::size_t chars = 0;
  for (std::size_t i = 0; i < text.size(); ++i) {
    const auto c = static_cast<unsigned char>(text[i]);
    const bool starts_char = (c & 0xC0) != 0x80;
    if (starts_char && ++chars > max_chars) return out + "...";
    out += c < 0x20 || c == 0x7F ? ' ' : text[i];
  }
  return out;
}

std::string format_report(const UtteranceReport& r, const std::optional<SinkCounters>& counters, bool with_text) {
  if (!r.error.empty()) return "[failed] " + r.error;
  char line[512];
  {
    std::snprintf(line, sizeof line,
                  "[%s] %.2f s of speech, first audio after %.0f ms, synthesized in %.2f s (RTF %.2f), %zu segment%s",
                  r.interrupted ? "stopped" : "spoken", r.audio_seconds, r.first_audio_ms, r.synth_seconds,
                  r.audio_seconds > 0 ? r.synth_seconds / r.audio_seconds : 0.0, r.segments, r.segments == 1 ? "" : "s");
  }
  std::string out = line;
  if (r.preroll_ms > 0) {
    std::snprintf(line, sizeof line, ", pre-roll %.0f ms", r.preroll_ms);
    out += line;
  }
  if (counters) {
    std::snprintf(line, sizeof line, " | xruns %llu so far, underruns %llu",
                  static_cast<unsigned long long>(counters->xruns_so_far),
                  static_cast<unsigned long long>(counters->underruns));
    out += line;
    if (counters->worst_callback_us >= 0) {
      std::snprintf(line, sizeof line, ", worst callback %.0f us", counters->worst_callback_us);
      out += line;
    }
  }
  if (with_text) out += " | \"" + excerpt(r.text) + "\"";
  return out;
}

std::string format_stages(const EngineStages& s) {
  std::string out;
  char part[96];
  for (int i = 0; i < kEngineStages; ++i) {
    const auto stage = static_cast<EngineStage>(i);
    std::snprintf(part, sizeof part, "%s%s %.1f/%.1f", i ? ", " : "", engine_stage_name(stage), s.before_first_audio(stage),
                  s.total(stage));
    out += part;
  }
  return out;
}

}  // namespace kokoro::app
