#include "apps/common/input_notes.h"

#include "apps/common/report.h"
#include "frontend/utf8.h"

namespace kokoro::app {

CheckedText replace_invalid_utf8(std::string_view in) {
  CheckedText out;
  out.text.reserve(in.size());
  for (size_t pos = 0; pos < in.size();) {
    char32_t cp = 0;
    const size_t n = utf8::decode_one(in, pos, cp);
    // U+FFFD written as such in the input is valid (3 bytes); a replacement for a bad byte is 1 byte long.
    if (cp == utf8::kReplacement && n == 1) {
      utf8::append(out.text, utf8::kReplacement);
      ++out.invalid_bytes;
    } else {
      out.text.append(in.substr(pos, n));
    }
    pos += n;
  }
  return out;
}

std::string InputNotes::check(std::string_view text) {
  CheckedText c = replace_invalid_utf8(text);
  if (c.invalid_bytes > 0) {
    std::lock_guard<std::mutex> lock(mutex_);
    invalid_bytes_ += c.invalid_bytes;
    if (++invalid_texts_ <= named_max_)
      std::fprintf(out_, "%s: warning: %zu byte%s of invalid UTF-8 replaced by U+FFFD (not spoken) in \"%s\"\n",
                   program_.c_str(), c.invalid_bytes, c.invalid_bytes == 1 ? "" : "s", excerpt(c.text, 40).c_str());
  }
  return std::move(c.text);
}

bool InputNotes::spoken(const UtteranceReport& report) {
  // No segment spoken by the model: silence for pauses ("...", a <break>) is not speech.
  if (!report.error.empty() || report.interrupted || report.segments > 0) return false;
  std::lock_guard<std::mutex> lock(mutex_);
  if (++unspeakable_ <= named_max_)
    std::fprintf(out_, "%s: nothing speakable in \"%s\" (%zu bytes: no word, number or letter it can say)\n",
                 program_.c_str(), excerpt(report.text, 40).c_str(), report.text.size());
  return true;
}

void InputNotes::finish() {
  std::lock_guard<std::mutex> lock(mutex_);
  if (invalid_texts_ > named_max_)
    std::fprintf(out_, "%s: warning: %zu bytes of invalid UTF-8 in all, in %zu texts, replaced by U+FFFD\n",
                 program_.c_str(), invalid_bytes_, invalid_texts_);
  if (unspeakable_ > named_max_)
    std::fprintf(out_, "%s: %zu texts in all had nothing speakable\n", program_.c_str(), unspeakable_);
}

}  // namespace kokoro::app
