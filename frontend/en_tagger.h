// A cheap part-of-speech guesser standing in for spaCy's tagger. misaki only looks at tags in a few
// places, so only those distinctions are attempted, with word lists and the neighbouring words:
//   - punctuation classes (which quote opens, which dash is a pause, currency signs before numbers);
//   - noun vs verb vs adjective for heteronyms ("the record" / "to record", "read" past vs present);
//   - function words whose reading depends on their role: a (DT), I (PRP), by (adverb), in (IN vs
//     particle), that (DT), used (VBD before "to"), AM (noun);
//   - proper nouns: ALL-CAPS words and capitalised words inside a sentence (NNP), which misaki spells
//     out when the dictionary has no stressed reading for them.
// Tags use the Penn Treebank names spaCy uses.
#pragma once
#include <vector>

#include "frontend/en_token.h"

namespace kokoro::en {

void tag_tokens(std::vector<Token>& tokens);

}  // namespace kokoro::en
