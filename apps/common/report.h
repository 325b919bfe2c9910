// The status lines the speaking apps print, one per utterance, so that kokoro-say and kokoro-jack word
// them the same way.
//   [spoken] 3.98 s of speech, first audio after 412 ms, synthesized in 1.21 s (RTF 0.30), 2 segments
// kokoro-jack adds the sink's counters and the start of the text:
//   ... | xruns 0 so far, underruns 0, worst callback 21 us | "Hello there, this is a test..."
#pragma once
#include <cstdint>
#include <optional>
#include <string>

#include "engine/speaker.h"

namespace kokoro::app {

struct SinkCounters {
  uint64_t xruns_so_far = 0;  // reported by the audio server since the app started
  uint64_t underruns = 0;     // the device ran dry during this utterance
  // The longest audio callback since the app started, when the sink measures it (negative: unknown). With
  // it a late client can be told apart: a callback far shorter than the period that was still late means
  // the machine did not run the thread, not that the callback took too long.
  double worst_callback_us = -1;
};

// One line without a trailing newline. Failed utterances give "[failed] <error>".
std::string format_report(const UtteranceReport& report, const std::optional<SinkCounters>& counters = std::nullopt,
                          bool with_text = false);

// "frontend 1.2/1.2, acoustic 40.3/80.1, ..., output 0.4/3.0": each stage's time before the first audio and
// in all (engine/stage_report.h), in ms.
std::string format_stages(const EngineStages& stages);

// At most max_chars code points of text, on one line (controls shown as spaces), "..." when cut.
std::string excerpt(const std::string& text, std::size_t max_chars = 60);

}  // namespace kokoro::app
