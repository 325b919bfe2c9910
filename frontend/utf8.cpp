#include "frontend/utf8.h"

#include "core/error.h"

namespace kokoro::utf8 {

size_t decode_one(std::string_view text, size_t pos, char32_t& out) {
  const auto* s = reinterpret_cast<const unsigned char*>(text.data());
  const size_t n = text.size();
  const unsigned char b0 = s[pos];
  if (b0 < 0x80) {
    out = b0;
    return 1;
  }
  size_t len;
  char32_t cp;
  char32_t min;
  if ((b0 & 0xE0) == 0xC0) {
    len = 2, cp = b0 & 0x1F, min = 0x80;
  } else if ((b0 & 0xF0) == 0xE0) {
    len = 3, cp = b0 & 0x0F, min = 0x800;
  } else if ((b0 & 0xF8) == 0xF0) {
    len = 4, cp = b0 & 0x07, min = 0x10000;
  } else {
    out = kReplacement;
    return 1;
  }
  if (pos + len > n) {
    out = kReplacement;
    return 1;
  }
  for (size_t i = 1; i < len; ++i) {
    const unsigned char b = s[pos + i];
    if ((b & 0xC0) != 0x80) {
      out = kReplacement;
      return 1;
    }
    cp = (cp << 6) | (b & 0x3F);
  }
  if (cp < min || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) {
    out = kReplacement;
    return 1;
  }
  out = cp;
  return len;
}

std::vector<CodePoint> decode(std::string_view text) {
  if (text.size() >= UINT32_MAX) throw Error("text of " + std::to_string(text.size()) + " bytes is too long");
  std::vector<CodePoint> out;
  out.reserve(text.size());
  size_t pos = 0;
  while (pos < text.size()) {
    char32_t cp;
    const size_t len = decode_one(text, pos, cp);
    out.push_back({cp, static_cast<uint32_t>(pos), static_cast<uint32_t>(pos + len)});
    pos += len;
  }
  return out;
}

bool is_valid(std::string_view text) {
  size_t pos = 0;
  while (pos < text.size()) {
    char32_t cp;
    const size_t len = decode_one(text, pos, cp);
    if (cp == kReplacement && len == 1) return false;
    pos += len;
  }
  return true;
}

size_t incomplete_tail(std::string_view text) {
  const auto* s = reinterpret_cast<const unsigned char*>(text.data());
  for (size_t t = 1; t <= 3 && t <= text.size(); ++t) {
    const size_t k = text.size() - t;
    const unsigned char lead = s[k];
    if ((lead & 0xC0) == 0x80) continue;  // a continuation byte: the lead is further back
    const size_t len = lead >= 0xC2 && lead <= 0xDF ? 2 : lead >= 0xE0 && lead <= 0xEF ? 3 : lead >= 0xF0 && lead <= 0xF4 ? 4 : 0;
    if (len <= t) return 0;  // ASCII, an invalid lead, or a sequence that is already complete
    if (t >= 2) {
      // The second byte's range where the lead restricts it (no overlong forms, surrogates, or > U+10FFFF).
      const unsigned char b1 = s[k + 1];
      const unsigned char lo = lead == 0xE0 ? 0xA0 : lead == 0xF0 ? 0x90 : 0x80;
      const unsigned char hi = lead == 0xED ? 0x9F : lead == 0xF4 ? 0x8F : 0xBF;
      if (b1 < lo || b1 > hi) return 0;
    }
    return t;  // the bytes after the lead were all continuation bytes (checked on the way back)
  }
  return 0;
}

void append(std::string& out, char32_t cp) {
  if (cp < 0x80) {
    out.push_back(static_cast<char>(cp));
  } else if (cp < 0x800) {
    out.push_back(static_cast<char>(0xC0 | (cp >> 6)));
    out.push_back(static_cast<char>(0x80 | (cp & 0x3F)));
  } else if (cp < 0x10000) {
    out.push_back(static_cast<char>(0xE0 | (cp >> 12)));
    out.push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3F)));
    out.push_back(static_cast<char>(0x80 | (cp & 0x3F)));
  } else {
    out.push_back(static_cast<char>(0xF0 | (cp >> 18)));
    out.push_back(static_cast<char>(0x80 | ((cp >> 12) & 0x3F)));
    out.push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3F)));
    out.push_back(static_cast<char>(0x80 | (cp & 0x3F)));
  }
}

std::string encode(std::u32string_view s) {
  std::string out;
  out.reserve(s.size());
  for (char32_t c : s) append(out, c);
  return out;
}

std::u32string to_u32(std::string_view s) {
  std::u32string out;
  out.reserve(s.size());
  size_t pos = 0;
  while (pos < s.size()) {
    char32_t cp;
    pos += decode_one(s, pos, cp);
    out.push_back(cp);
  }
  return out;
}

size_t count_code_points(std::string_view s) {
  size_t n = 0;
  for (char c : s) n += (static_cast<unsigned char>(c) & 0xC0) != 0x80;
  return n;
}

}  // namespace kokoro::utf8
