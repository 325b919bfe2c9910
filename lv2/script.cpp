#include "lv2/script.h"

#include <cerrno>
#include <cstring>
#include <fstream>
#include <sstream>
#include <sys/stat.h>

#include "frontend/utf8.h"

namespace kokoro::lv2 {

std::string utf8_problem(const std::string& text) {
  for (std::size_t pos = 0; pos < text.size();) {
    char32_t cp = 0;
    const std::size_t n = utf8::decode_one(text, pos, cp);
    // U+FFFD is also what invalid bytes decode to: only the three bytes EF BF BD are the real one.
    if (cp == utf8::kReplacement && text.compare(pos, 3, "\xEF\xBF\xBD") != 0)
      return "invalid UTF-8 at byte " + std::to_string(pos);
    pos += n;
  }
  return "";
}

std::string Script::set_text(std::string text) {
  if (text.size() > kMaxTextBytes)
    return "the text is " + std::to_string(text.size()) + " bytes, more than the " + std::to_string(kMaxTextBytes) +
           " this plugin keeps";
  if (std::string why = utf8_problem(text); !why.empty()) return "the text is not valid UTF-8 (" + why + ")";
  std::lock_guard<std::mutex> lock(mutex_);
  text_ = std::move(text);
  recut();
  return "";
}

std::string Script::set_file(const std::string& path) {
  std::string content, error;
  if (!path.empty()) {
    struct stat st {};
    if (::stat(path.c_str(), &st) != 0) {
      error = "cannot read the file " + path + ": " + std::strerror(errno);
    } else if (!S_ISREG(st.st_mode)) {
      error = "the file " + path + " is not a regular file";
    } else if (static_cast<std::size_t>(st.st_size) > kMaxTextBytes) {
      error = "the file " + path + " is " + std::to_string(st.st_size) + " bytes, more than the " +
              std::to_string(kMaxTextBytes) + " this plugin reads";
    } else {
      std::ifstream in(path, std::ios::binary);
      std::ostringstream s;
      s << in.rdbuf();
      if (!in.good() && !in.eof()) error = "cannot read the file " + path;
      content = s.str();
      if (error.empty())
        if (std::string why = utf8_problem(content); !why.empty())
          error = "the file " + path + " is not valid UTF-8 text (" + why + ")";
    }
  }
  std::lock_guard<std::mutex> lock(mutex_);
  file_ = path;
  file_text_ = error.empty() ? std::move(content) : std::string();
  file_error_ = error;
  recut();
  return error;
}

void Script::recut() {
  cues_ = split_cues(spoken());
  cursor_ = 0;
}

Script::Line Script::next(bool whole) {
  std::lock_guard<std::mutex> lock(mutex_);
  Line line;
  if (!file_error_.empty()) {
    line.why = file_error_;
  } else if (cues_.empty()) {
    line.why = file_.empty() ? "no text to speak: set the text property (" "urn:kokoro-rt:speaker#text) first"
                             : "the file " + file_ + " has no text to speak";
  } else if (whole) {
    line.text = spoken();
  } else {
    if (cursor_ >= cues_.size()) cursor_ = 0;
    const Cue c = cues_[cursor_];
    line.text = spoken().substr(c.begin, c.end - c.begin);
    line.cue = static_cast<int32_t>(cursor_);
    line.text_offset = static_cast<int64_t>(c.begin);
    cursor_ = (cursor_ + 1) % cues_.size();
  }
  return line;
}

void Script::select(int32_t index) {
  std::lock_guard<std::mutex> lock(mutex_);
  cursor_ = cues_.empty() || index < 0 ? 0 : static_cast<std::size_t>(index) % cues_.size();
}

std::string Script::text() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return text_;
}

std::string Script::file() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return file_;
}

}  // namespace kokoro::lv2
