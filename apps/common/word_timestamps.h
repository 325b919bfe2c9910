// kokoro-say --timestamps: the engine's word events (engine/stream_options.h, StreamEvent) collected per
// utterance and written as JSON or WebVTT captions. Times are positions in the audio handed to the output
// (for a WAV file: the time in the file), in seconds.
#pragma once
#include <cstdint>
#include <map>
#include <mutex>
#include <string>
#include <vector>

#include "engine/stream_options.h"

namespace kokoro::app {

enum class TimestampFormat { json, vtt };
// "json" | "vtt"; "" picks by the file name (.vtt: WebVTT, else JSON). Throws kokoro::Error otherwise.
TimestampFormat parse_timestamp_format(const std::string& name, const std::string& path);

struct TimedWord {
  uint64_t utterance = 0;
  std::string text;
  double start_s = 0, end_s = 0;
};

class WordTimestamps {
 public:
  // The text said under an utterance id (Speaker::say's result), so that word events can name their words.
  void said(uint64_t utterance, const std::string& text);
  // Speaker::on_event callback (the engine's output thread).
  void on_event(const StreamEvent& event);
  std::vector<TimedWord> words() const;

  static std::string to_json(const std::vector<TimedWord>& words);
  static std::string to_vtt(const std::vector<TimedWord>& words);
  // Writes the file; throws kokoro::Error naming it on failure.
  void write(const std::string& path, TimestampFormat format) const;

 private:
  mutable std::mutex mutex_;
  std::map<uint64_t, std::string> texts_;
  std::vector<StreamEvent> events_;
};

}  // namespace kokoro::app
