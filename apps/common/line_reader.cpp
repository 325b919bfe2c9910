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

void LineReader::take_lines(std::vector<InputLine>& lines, bool at_eof) {
  std::size_t start = 0;
  for (;;) {
    const std::size_t nl = pending_.find('\n', start);
    if (nl == std::string::npos) break;
    std::size_t end = nl;
    if (end > start && pending_[end - 1] == '\r') --end;
    lines.push_back({pending_.substr(start, end - start), pending_is_continuation_});
    pending_is_continuation_ = false;
    start = nl + 1;
  }
  pending_.erase(0, start);

  // Over-long line: hand over pieces of at most max_line_bytes_.
  while (pending_.size() > max_line_bytes_) {
    std::size_t cut = pending_.rfind(' ', max_line_bytes_);
    if (cut == std::string::npos || cut < max_line_bytes_ / 2) {
      cut = max_line_bytes_;
      while (cut > 0 && (static_cast<unsigned char>(pending_[cut]) & 0xC0) == 0x80) --cut;  // not inside a character
      if (cut == 0) cut = max_line_bytes_;  // not UTF-8 at all: any cut will do
    }
    lines.push_back({pending_.substr(0, cut), pending_is_continuation_});
    pending_is_continuation_ = true;
    pending_.erase(0, cut);
  }

  if (at_eof && !pending_.empty()) {
    lines.push_back({std::move(pending_), pending_is_continuation_});
    pending_.clear();
  }
  if (at_eof) pending_is_continuation_ = false;
}

}  // namespace kokoro::app
