// kokoro-say reading a pipe (`some-llm | kokoro-say`): the bytes go to the engine as they arrive, as one
// streamed utterance (Speaker::begin_text), so that each sentence is spoken as soon as its end has come,
// without waiting for a newline or for the end of the input; a pause in the input longer than the pause flush
// speaks the unfinished sentence (docs/streaming.md, "Text that streams in").
//
// Bytes that are not UTF-8 are replaced and counted as for a line (InputNotes), a character split between two
// reads waits for its last bytes, and blank input opens no utterance. After a Ctrl-C (stopped()), the text
// that comes next opens a new utterance.
#pragma once
#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "apps/common/input_notes.h"
#include "apps/common/word_timestamps.h"
#include "engine/speaker.h"

namespace kokoro::app {

class StreamedInput {
 public:
  using TimePoint = std::chrono::steady_clock::time_point;
  // `timestamps` (may be null) learns each utterance's text when it ends or is stopped. `first_text` (may be
  // null), if empty, gets the time the first text was handed to the engine: the engine's time to first audio
  // counts from there, so kokoro-say can give the first audio from the process's start.
  StreamedInput(Speaker& speaker, InputNotes& notes, double pause_flush_seconds, WordTimestamps* timestamps,
                std::optional<TimePoint>* first_text = nullptr)
      : speaker_(speaker), notes_(notes), pause_flush_seconds_(pause_flush_seconds), timestamps_(timestamps),
        first_text_(first_text) {}

  // One read() of what is available on `fd` (call when poll() says it is readable), handed to the engine.
  // Returns false at end of input, once the utterance's text is ended. Throws kokoro::Error on a read error.
  bool read_available(int fd, const std::string& what);
  // The utterance was stopped (Speaker::stop): the text that comes next opens a new one.
  void stopped();

 private:
  void append(std::string_view complete_bytes);
  void close(bool ended);

  Speaker& speaker_;
  InputNotes& notes_;
  double pause_flush_seconds_;
  WordTimestamps* timestamps_;
  std::optional<TimePoint>* first_text_;
  std::string tail_;      // the first bytes of a character whose last bytes have not been read yet
  uint64_t utterance_ = 0;  // the open utterance (0: none)
  std::string text_;      // the text it was given (for its timestamps)
};

}  // namespace kokoro::app
