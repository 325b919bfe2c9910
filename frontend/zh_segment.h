// Word segmentation and readings as misaki's legacy zh G2P gets them: jieba.lcut (prefix-dictionary DAG,
// the maximum-probability route, and the BMES HMM for runs of single characters the dictionary does not
// know), then pypinyin.lazy_pinyin on each word (forward maximum matching over its phrase dictionary,
// phrase readings where a phrase matches, else each character's first reading).
#pragma once
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "frontend/zh_dict.h"

namespace kokoro::zh {

// [begin, end) code-point ranges of the words of a run of CJK ideographs (U+4E00..U+9FFF).
std::vector<std::pair<size_t, size_t>> cut_words(const Dict& dict, std::u32string_view han);

// Numbered readings ("zhong1"), one per character of `word`; "" or "-" where there is none.
std::vector<std::string> word_readings(const Dict& dict, std::u32string_view word);

}  // namespace kokoro::zh
