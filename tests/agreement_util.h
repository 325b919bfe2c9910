// Helpers of the G2P agreement tests (English, Japanese, Mandarin against misaki's expectations).
#pragma once
#include <algorithm>
#include <cstddef>
#include <sstream>
#include <string>
#include <vector>

namespace kokoro::test {

// Whitespace-separated words.
inline std::vector<std::string> split_words(const std::string& s) {
  std::vector<std::string> out;
  std::istringstream in(s);
  std::string w;
  while (in >> w) out.push_back(w);
  return out;
}

// Length of the longest common subsequence: how many items of a are matched, in order, in b.
template <class T>
size_t lcs(const std::vector<T>& a, const std::vector<T>& b) {
  std::vector<size_t> prev(b.size() + 1, 0), cur(b.size() + 1, 0);
  for (size_t i = 1; i <= a.size(); ++i) {
    for (size_t j = 1; j <= b.size(); ++j)
      cur[j] = a[i - 1] == b[j - 1] ? prev[j - 1] + 1 : std::max(prev[j], cur[j - 1]);
    std::swap(prev, cur);
  }
  return prev[b.size()];
}

}  // namespace kokoro::test
