// Cuts text that arrives in pieces (Wyoming's synthesize-chunk) into whole sentences as soon as each one is
// complete, so that its audio can start before the rest of the text exists. A sentence ends at . ! ? …
// (followed by white space, closing quotes or brackets) or at the CJK full stops 。！？ (no space needed),
// or at a blank line. The engine segments each piece again itself; this only decides when text is ready.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace kokoro::server {

class SentenceSplitter {
 public:
  // Adds text; returns the sentences it completed (trimmed, non-empty).
  std::vector<std::string> add(std::string_view text);
  // The text left over (trimmed; "" if none); the splitter is empty afterwards.
  std::string finish();
  // Bytes held back waiting for a sentence end (a client that never ends a sentence must not grow it forever).
  size_t pending() const { return pending_.size(); }

 private:
  std::string pending_;
};

}  // namespace kokoro::server
