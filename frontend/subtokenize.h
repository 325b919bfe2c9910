// Splits a token into the pieces misaki looks up separately and merges back when it can: leading/trailing
// apostrophes, numbers ("-1,234.5"), runs of '-'/'_', camelCase and ACRONYMWord boundaries, letter runs
// with inner apostrophes, and any other single character. Characters none of these take (a lone inner
// apostrophe) are dropped, as misaki's regex findall drops them.
#pragma once
#include <string>
#include <string_view>
#include <vector>

namespace kokoro::en {

struct Piece {
  size_t begin;  // index into the token's UTF-32 text
  size_t end;
};

std::vector<Piece> subtokenize(std::u32string_view word);

}  // namespace kokoro::en
