#include "frontend/stress.h"

#include <algorithm>
#include <utility>
#include <vector>

#include "frontend/unicode_text.h"

namespace kokoro::en {

namespace {

constexpr std::u32string_view kVowels = U"AIOQWYaiuæɑɒɔəɛɜɪʊʌᵻ";
constexpr std::u32string_view kConsonants = U"bdfhjklmnpstvwzðŋɡɹɾʃʒʤʧθ";
constexpr std::u32string_view kDiphthongs = U"AIOQWYʤʧ";

bool is_stress(char32_t c) { return c == kPrimaryStress || c == kSecondaryStress; }
bool has_stress(const std::u32string& ps) {
  return std::any_of(ps.begin(), ps.end(), is_stress);
}
bool has_vowel(const std::u32string& ps) { return std::any_of(ps.begin(), ps.end(), is_vowel); }

// Moves every stress mark to just before the first vowel at or after it.
std::u32string restress(const std::u32string& ps) {
  std::vector<std::pair<double, char32_t>> placed;
  placed.reserve(ps.size());
  for (size_t i = 0; i < ps.size(); ++i) {
    double pos = static_cast<double>(i);
    if (is_stress(ps[i])) {
      for (size_t j = i; j < ps.size(); ++j) {
        if (is_vowel(ps[j])) {
          pos = static_cast<double>(j) - 0.5;
          break;
        }
      }
    }
    placed.emplace_back(pos, ps[i]);
  }
  std::stable_sort(placed.begin(), placed.end());
  std::u32string out;
  out.reserve(ps.size());
  for (const auto& p : placed) out.push_back(p.second);
  return out;
}

void erase_char(std::u32string& s, char32_t c) { s.erase(std::remove(s.begin(), s.end(), c), s.end()); }
void replace_char(std::u32string& s, char32_t from, char32_t to) { std::replace(s.begin(), s.end(), from, to); }

}  // namespace

bool is_vowel(char32_t c) { return kVowels.find(c) != std::u32string_view::npos; }
bool is_consonant(char32_t c) { return kConsonants.find(c) != std::u32string_view::npos; }

std::u32string apply_stress(std::u32string ps, std::optional<double> stress) {
  if (!stress) return ps;
  const double s = *stress;
  const bool has_primary = text::contains(ps, kPrimaryStress);
  const bool has_secondary = text::contains(ps, kSecondaryStress);
  if (s < -1) {
    erase_char(ps, kPrimaryStress);
    erase_char(ps, kSecondaryStress);
    return ps;
  }
  if (s == -1 || ((s == 0 || s == -0.5) && has_primary)) {
    erase_char(ps, kSecondaryStress);
    replace_char(ps, kPrimaryStress, kSecondaryStress);
    return ps;
  }
  if ((s == 0 || s == 0.5 || s == 1) && !has_stress(ps)) {
    if (!has_vowel(ps)) return ps;
    return restress(std::u32string(1, kSecondaryStress) + ps);
  }
  if (s >= 1 && !has_primary && has_secondary) {
    replace_char(ps, kSecondaryStress, kPrimaryStress);
    return ps;
  }
  if (s > 1 && !has_stress(ps)) {
    if (!has_vowel(ps)) return ps;
    return restress(std::u32string(1, kPrimaryStress) + ps);
  }
  return ps;
}

int stress_weight(const std::u32string& ps) {
  int w = 0;
  for (char32_t c : ps) w += kDiphthongs.find(c) != std::u32string_view::npos ? 2 : 1;
  return w;
}

}  // namespace kokoro::en
