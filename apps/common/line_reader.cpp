#include "apps/common/line_reader.h"

#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "core/error.h"

namespace kokoro::app {

LineReader::LineReader(std::size_t max_line_bytes) : max_line_bytes_(max_line_bytes < 16 ? 16 : max_line_bytes) {}

bool LineReader::read_available(int fd, const std::string& what, std::vector<InputLine>& lines) {
  char buf[65536];
  const ssize_t n = ::read(fd, buf, sizeof buf);
  if (n < 0) {
    if (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR) return true;
    throw Error("cannot read " + what + ": " + std::strerror(errno));
  }
  pending_.append(buf, static_cast<std::size_t>(n));
  take_lines(lines, n == 0);
  return n > 0;
}

namespace {

// Where to cut an over-long piece of at most max bytes: after the last space in its second half, else at
// a UTF-8 character boundary.
std::size_t cut_position(const std::string& s, std::size_t max) {
  const std::size_t space = s.rfind(' ', max - 1);
  if (space != std::string::npos && space + 1 >= max / 2) return space + 1;
  std::size_t cut = max;
  while (cut > 0 && (static_cast<unsigned char>(s[cut]) & 0xC0) == 0x80) --cut;  // not inside a character
  return cut > 0 ? cut : max;  // not UTF-8 at all: any cut will do
}

}  // namespace

void LineReader::split_long(std::string& text, std::vector<InputLine>& lines) {
  while (text.size() > max_line_bytes_) {
    const std::size_t cut = cut_position(text, max_line_bytes_);
    lines.push_back({text.substr(0, cut), pending_is_continuation_});
    pending_is_continuation_ = true;
    text.erase(0, cut);
  }
}

void LineReader::take_lines(std::vector<InputLine>& lines, bool at_eof) {
  std::size_t start = 0;
  for (;;) {
    const std::size_t nl = pending_.find('\n', start);
    if (nl == std::string::npos) break;
    std::size_t end = nl;
    if (end > start && pending_[end - 1] == '\r') --end;
    std::string line = pending_.substr(start, end - start);
    split_long(line, lines);
    lines.push_back({std::move(line), pending_is_continuation_});
    pending_is_continuation_ = false;
    start = nl + 1;
  }
  pending_.erase(0, start);
  split_long(pending_, lines);  // a writer that never sends a newline cannot grow the buffer without bound
  if (at_eof) {
    if (!pending_.empty()) lines.push_back({std::move(pending_), pending_is_continuation_});
    pending_.clear();
    pending_is_continuation_ = false;
  }
}

}  // namespace kokoro::app
