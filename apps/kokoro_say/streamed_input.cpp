#include "apps/kokoro_say/streamed_input.h"

#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "core/error.h"
#include "frontend/utf8.h"

namespace kokoro::app {

bool StreamedInput::read_available(int fd, const std::string& what) {
  char buf[65536];
  const ssize_t n = ::read(fd, buf, sizeof buf);
  if (n < 0) {
    if (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR) return true;
    throw Error("cannot read " + what + ": " + std::strerror(errno));
  }
  if (n == 0) {
    // End of input: a character left unfinished is an invalid byte sequence now (InputNotes counts it).
    append(tail_);
    tail_.clear();
    close(true);
    return false;
  }
  std::string bytes = std::move(tail_);
  bytes.append(buf, static_cast<size_t>(n));
  const size_t waiting = utf8::incomplete_tail(bytes);
  tail_ = bytes.substr(bytes.size() - waiting);
  bytes.resize(bytes.size() - waiting);
  append(bytes);
  return true;
}

void StreamedInput::append(std::string_view complete_bytes) {
  if (complete_bytes.empty()) return;
  std::string text = notes_.check(complete_bytes);
  if (utterance_ == 0) {
    // Blank input before any text says nothing: no utterance (and no "nothing speakable" note) for it.
    if (text.find_first_not_of(" \t\r\n\f\v") == std::string::npos) return;
    utterance_ = speaker_.begin_text(pause_flush_seconds_);
    text_.clear();
    if (first_text_ && !*first_text_) *first_text_ = std::chrono::steady_clock::now();
  }
  if (!speaker_.append_text(utterance_, text)) {
    // The utterance ended on its own (it failed; its report says why): the text goes to a new one.
    close(false);
    utterance_ = speaker_.begin_text(pause_flush_seconds_);
    speaker_.append_text(utterance_, text);
  }
  text_ += text;
}

void StreamedInput::close(bool ended) {
  if (utterance_ == 0) return;
  if (ended) speaker_.end_text(utterance_);
  if (timestamps_) timestamps_->said(utterance_, text_);
  utterance_ = 0;
  text_.clear();
}

void StreamedInput::stopped() { close(false); }

}  // namespace kokoro::app
