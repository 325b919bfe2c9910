// UTF-8 decoding that never fails. Invalid input (stray continuation bytes, truncated or overlong
// sequences, surrogates, values above U+10FFFF) decodes to U+FFFD one byte at a time, so every code point
// keeps the byte range it came from in the caller's text: word offsets stay offsets into the original.
#pragma once
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace kokoro::utf8 {

inline constexpr char32_t kReplacement = 0xFFFD;

struct CodePoint {
  char32_t cp;
  uint32_t begin;  // byte offset in the source text
  uint32_t end;
};

// Decodes the whole text (throws kokoro::Error for texts of 4 GiB or more, whose offsets do not fit).
std::vector<CodePoint> decode(std::string_view text);
// Decodes one code point at `pos`; returns its length in bytes (>= 1) and writes the value (U+FFFD when
// the bytes there are not valid UTF-8).
size_t decode_one(std::string_view text, size_t pos, char32_t& out);
bool is_valid(std::string_view text);
// Bytes at the end of `text` (0 to 3) that begin a valid multi-byte character whose last bytes have not come
// yet: text that arrives in pieces holds them back until the rest comes, instead of reading them as U+FFFD.
size_t incomplete_tail(std::string_view text);

void append(std::string& out, char32_t cp);
std::string encode(std::u32string_view s);
std::u32string to_u32(std::string_view s);  // invalid bytes become U+FFFD
size_t count_code_points(std::string_view s);

}  // namespace kokoro::utf8
