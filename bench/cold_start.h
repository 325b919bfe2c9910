// kokoro-bench's cold figure (issue 28): a new kokoro-say process per sentence of the short corpus, its first
// audio measured from just before it was started (passed to it in KOKORO_START_NS, apps/common/process_start.h)
// and read from its status line, and its whole run to exit. Beside the warm engine's TTFA on the same
// sentences, it is what a one-shot `kokoro-say "..."` costs on top: loading, first-use work, threads.
// The page cache is warm (the bench has just read the same files) and so is the prepared-weights store:
// a new process, not a rebooted machine.
#pragma once
#include <nlohmann/json.hpp>

#include <functional>
#include <string>
#include <vector>

namespace kokoro::bench {

struct ColdStartOptions {
  std::string say_binary;      // kokoro-say
  std::vector<std::string> args;  // --mode, --precision, --voice, --threads, --model, --assets ...
  std::vector<std::string> sentences;  // run i says sentences[i % size]
  int runs = 5;
  // When set: the warm engine says run i's sentence just before the process starts (returns its TTFA), so that
  // each cold figure has a warm one taken seconds apart, not minutes (a VM's speed drifts between minutes).
  std::function<double(const std::string&)> warm_ttfa_ms;
};

struct ColdStartResult {
  std::vector<double> first_audio_ms;  // from the process's start
  std::vector<double> exit_ms;         // from its start to its exit
  std::vector<double> from_say_ms;     // the same first audio from say() (the engine's own TTFA)
  std::vector<double> paired_warm_ms;  // with warm_ttfa_ms: the warm engine's TTFA on run i's sentence
};

// Throws kokoro::Error when a run fails or prints no first-audio figure (with its stderr).
ColdStartResult measure_cold_start(const ColdStartOptions& options);

// The first-audio figure of a kokoro-say status line ("...; first audio 412 ms after the process started"),
// and its engine TTFA ("first audio after 95 ms"); false when the line has none.
bool parse_say_report(const std::string& stderr_text, double& since_start_ms, double& engine_ms);

}  // namespace kokoro::bench
