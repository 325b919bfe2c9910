// What kokoro-say tells the user about its input instead of dropping it silently: bytes that are not UTF-8
// (replaced by U+FFFD, which the frontend reads as silence, and counted) and texts with nothing to speak
// (no segment, no audio). The first few of each are named one by one, the rest summed up at the end, so that
// a binary file piped in gives a handful of lines, not one per line of input.
#pragma once
#include <cstddef>
#include <cstdio>
#include <mutex>
#include <string>
#include <string_view>

#include "engine/utterance_report.h"

namespace kokoro::app {

// `in` with every byte that is not part of a valid UTF-8 sequence replaced by U+FFFD (one per byte, as
// kokoro::utf8::decode reads them); `invalid_bytes` counts them.
struct CheckedText {
  std::string text;
  std::size_t invalid_bytes = 0;
};
CheckedText replace_invalid_utf8(std::string_view in);

class InputNotes {
 public:
  InputNotes(std::string program, std::FILE* out, std::size_t named_max = 5)
      : program_(std::move(program)), out_(out), named_max_(named_max) {}
  // Returns the text to speak (valid UTF-8); warns when bytes were replaced.
  std::string check(std::string_view text);
  // After an utterance: says so when it had nothing to speak (no error, not stopped, no segment the model
  // spoke: a text of only pauses, "...!?", has nothing speakable either), and returns
  // whether it had. May be called from another thread than check() (the engine's report callback).
  bool spoken(const UtteranceReport& report);
  // The totals of what was not named one by one.
  void finish();

 private:
  std::mutex mutex_;
  std::string program_;
  std::FILE* out_;
  std::size_t named_max_;
  std::size_t invalid_bytes_ = 0, invalid_texts_ = 0, unspeakable_ = 0;
};

}  // namespace kokoro::app
