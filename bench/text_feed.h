// kokoro-bench --feed-wps W: text that streams in (engine/stream_engine.h, begin_text), as a language model
// or a typist hands it over. Each corpus is fed word by word (a word with the white space after it) at W words
// per second into one session speaking onto a simulated real-time device (bench/simulated_device.h), and for
// every sentence (frontend/sentence_feed.h: the engine's own cuts) it measures the delay from the arrival of
// its last character to its first audio (the first sample of its first segment, timed by the device's log of
// its writes; a gap is counted where the write holding that sample came late):
//   ready: the first audio handed to the device (what the engine controls: the time a listener waits when
//          nothing is playing),
//   heard: when the device plays it (ready plus the audio still queued before it: at more words per second
//          than the voice speaks, later sentences queue behind earlier ones),
//   wait:  what the listener waits for the sentence beyond what the text and the audio before it impose: from
//          the later of its last character and the end of the audio before it, to its first audio; 0 when it
//          follows the audio before it without a gap. The issue's yardstick ("first audio <= 200 ms after
//          its end arrives") is wait: ready also counts time its audio would have waited behind earlier audio
//          anyway.
// The baseline in the same run, corpus by corpus alternately: the same feed read line by line, each line said
// when its newline arrives (kokoro-say before text streamed in).
#pragma once
#include <nlohmann/json.hpp>

#include <string>
#include <utility>
#include <vector>

#include "bench/gemm_peak.h"
#include "engine/model.h"

namespace kokoro::bench {

struct FeedOptions {
  double words_per_second = 4;
  SynthesisMode mode = SynthesisMode::slice;
  std::string voice = "af_heart";
  double max_slice_seconds = 0;  // slice mode: the longest slice (0: the default)
  double first_slice_seconds = 0;  // slice mode: the first slice (0: the default, as kokoro-say)
  int repeat = 1;
};

struct SentenceDelay {
  double ready_ms = -1, heard_ms = -1, wait_ms = -1;  // -1: no audio (a sentence with nothing to say)
};

struct FeedRun {
  std::string corpus;
  std::vector<SentenceDelay> streamed, lines;  // per sentence, per repetition
  int dry_streamed = 0, dry_lines = 0;         // underruns of the device after the first audio
};

struct FeedResult {
  FeedOptions options;
  int threads = 0;
  std::vector<FeedRun> runs;
  double wall_s = 0, cpu_s = 0, loadavg_before = 0, loadavg_after = 0;
  GemmPeak peak;
};

// Feeds each (name, text) corpus, `repeat` times, streamed and line by line alternately.
FeedResult run_text_feed(const Model& model, const std::vector<std::pair<std::string, std::string>>& corpora,
                         const FeedOptions& options);

nlohmann::json to_json(const FeedResult& r);
std::string to_table(const FeedResult& r);

}  // namespace kokoro::bench
