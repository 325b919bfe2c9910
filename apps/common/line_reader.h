// Splits what arrives on a file descriptor (a terminal, a pipe, a named pipe) into lines without blocking:
// call read_available() when poll() reports the descriptor readable. A writer that never sends a newline
// cannot make memory grow without bound: a line longer than max_line_bytes is handed over in pieces (the
// same pieces however the bytes arrive), cut after the last space when there is one in the second half of
// the piece, else at a UTF-8 character boundary.
#pragma once
#include <cstddef>
#include <string>
#include <vector>

namespace kokoro::app {

struct InputLine {
  std::string text;        // without the '\n' (and a '\r' before it)
  bool continued = false;  // a further piece of the previous line (which was too long to hand over whole)
};

class LineReader {
 public:
  explicit LineReader(std::size_t max_line_bytes = std::size_t{1} << 20);

  // One read() of what is available; complete lines (and pieces of over-long ones) are appended to
  // `lines`. Returns false at end of file, after handing over an unterminated last line. A read that would
  // block or was interrupted by a signal returns true with nothing added. Throws kokoro::Error (naming
  // `what`) on a read error.
  bool read_available(int fd, const std::string& what, std::vector<InputLine>& lines);

 private:
  void take_lines(std::vector<InputLine>& lines, bool at_eof);
  void split_long(std::string& text, std::vector<InputLine>& lines);  // hands over all but the last piece

  std::size_t max_line_bytes_;
  std::string pending_;
  bool pending_is_continuation_ = false;
};

}  // namespace kokoro::app
