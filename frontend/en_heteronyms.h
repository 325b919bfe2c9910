// Sense decisions for heteronyms that the tagger's neighbour rules (en_tagger.h) get wrong, from the
// words around them: "lead pipes" (the metal) vs "lead the team", "the path wound through" (past of
// wind) vs "the wound", "stay close to" vs "close the door", "bass guitar" vs "caught a bass", "a minute
// amount", subjects before verbs ("Officials estimate that", "Factories produce steel"), and "read" in a
// sentence that says when ("every night" present, "yesterday" past). Runs after tag_tokens; changes tags
// (and, for the metal "lead", which the lexicon has no entry for, the phonemes).
// Measured on tests/data/heteronyms/en-us.tsv (test_frontend_heteronyms.cpp).
#pragma once
#include <vector>

#include "frontend/en_token.h"

namespace kokoro::en {

void refine_heteronyms(std::vector<Token>& tokens);

}  // namespace kokoro::en
