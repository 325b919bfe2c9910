#include "frontend/sentence_feed.h"

#include <algorithm>

#include "core/error.h"
#include "frontend/utf8.h"

namespace kokoro {

namespace {

bool is_line_break(char32_t c) { return c == U'\n' || c == 0x2028 || c == 0x2029; }

// Characters a G2P may read as a sentence mark (. ! ? …): the Latin ones, the CJK full stops, Devanagari's
// danda, the Arabic question mark. A superset is harmless (the frontend decides); one missing only joins
// two sentences.
bool is_sentence_mark(char32_t c) {
  static constexpr std::u32string_view kMarks = U".!?…。！？．｡‼⁇⁈⁉‽।॥؟";
  return kMarks.find(c) != std::u32string_view::npos;
}

// Quotes and brackets that may close a sentence after its mark.
bool is_closer(char32_t c) {
  static constexpr std::u32string_view kClosers = U"\"')]}”’»›」』）］｝】〉》〕";
  return kClosers.find(c) != std::u32string_view::npos;
}

bool is_ascii_alnum(char32_t c) { return (c >= U'0' && c <= U'9') || (c >= U'a' && c <= U'z') || (c >= U'A' && c <= U'Z'); }

// The code point that ends at byte `end` of `text` (end > 0), and where it starts.
char32_t code_point_before(std::string_view text, size_t end, size_t& start) {
  size_t b = end - 1;
  while (b > 0 && end - b < 4 && (static_cast<unsigned char>(text[b]) & 0xC0) == 0x80) --b;
  char32_t cp = 0;
  if (utf8::decode_one(text, b, cp) != end - b) {  // not one whole character: a stray byte
    start = end - 1;
    return utf8::kReplacement;
  }
  start = b;
  return cp;
}

// Whether a sentence may end at byte p of `text`, before the character `next` (a cheap test on the text, so
// that the frontend is asked only there): a sentence mark, then up to three closing quotes or brackets. A
// Latin mark right before a letter or digit ("3.5", "example.com") ends nothing.
bool may_end_before(std::string_view text, size_t p, char32_t next) {
  size_t at = p;
  for (int closers = 0; at > 0; ++closers) {
    size_t start = 0;
    const char32_t c = code_point_before(text, at, start);
    if (is_sentence_mark(c)) return !(c < 0x80 && at == p && is_ascii_alnum(next));
    if (!is_closer(c) || closers == 3) return false;
    at = start;
  }
  return false;
}

}  // namespace

size_t cut_long_text(std::string_view text, size_t begin, size_t max_bytes) {
  if (text.size() - begin <= max_bytes) return text.size();
  const size_t limit = begin + max_bytes;
  const std::string_view window(text.data() + begin, max_bytes);
  if (auto nl = window.rfind('\n'); nl != std::string_view::npos && nl > 0) return begin + nl + 1;
  for (size_t i = max_bytes - 1; i > 0; --i) {
    const char c = window[i - 1];
    if ((c == '.' || c == '!' || c == '?') && window[i] == ' ') return begin + i + 1;
  }
  if (auto sp = window.rfind(' '); sp != std::string_view::npos && sp > 0) return begin + sp + 1;
  size_t end = limit;
  while (end > begin + 1 && (static_cast<unsigned char>(text[end]) & 0xC0) == 0x80) --end;
  return end;
}

SentenceFeed::SentenceFeed(const Frontend& frontend, size_t max_bytes) : frontend_(frontend), max_bytes_(max_bytes) {
  if (max_bytes_ < 64) throw Error("sentence feed: sentences of at least 64 bytes");
}

void SentenceFeed::append(std::string_view bytes) { pending_.append(bytes); }

SentenceFeed::Sentence SentenceFeed::take(size_t bytes) {
  Sentence s{pending_.substr(0, bytes), offset_};
  pending_.erase(0, bytes);
  offset_ += bytes;
  scanned_ = 0;
  questions_ = 0;
  return s;
}

std::optional<SentenceFeed::Sentence> SentenceFeed::next() {
  const std::string_view text(pending_.data(), pending_.size() - utf8::incomplete_tail(pending_));
  // Each position p is decided once, when the character at p (the one after a sentence ending at p) is there.
  for (size_t p = scanned_; p < text.size() && p <= max_bytes_;) {
    char32_t next = 0;
    const size_t len = utf8::decode_one(text, p, next);
    if (is_line_break(next)) return take(p + len);
    if (p > 0 && questions_ < kMaxQuestions && may_end_before(text, p, next)) {
      ++questions_;
      const std::vector<size_t> ends = frontend_.sentence_ends(text.substr(0, p + len));
      if (std::find(ends.begin(), ends.end(), p) != ends.end()) return take(p);
    }
    p += len;
    scanned_ = p;
  }
  // Every position up to max_bytes has been decided (the text reaches past it): no sentence end in reach.
  if (text.size() > max_bytes_) return take(cut_long_text(text, 0, max_bytes_));
  return std::nullopt;
}

std::optional<SentenceFeed::Sentence> SentenceFeed::rest(bool partial_character) {
  const size_t n = partial_character ? pending_.size() : pending_.size() - utf8::incomplete_tail(pending_);
  if (n == 0) return std::nullopt;
  return take(n);
}

bool SentenceFeed::pending_text() const {
  return pending_.find_first_not_of(" \t\r\n\f\v") != std::string::npos;
}

}  // namespace kokoro
