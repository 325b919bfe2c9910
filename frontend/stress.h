// Stress marks in misaki phoneme strings: ˈ primary, ˌ secondary, placed before the vowel they govern.
// apply_stress moves a word's stress to the level the context asks for, with the same levels misaki uses:
//   < -1  remove all stress            -1  demote everything to secondary
//   0, -0.5  demote primary to secondary (if any primary); 0/0.5 add secondary to an unstressed word
//   >= 1  promote secondary to primary when there is no primary; > 1 add primary to an unstressed word
#pragma once
#include <optional>
#include <string>

namespace kokoro::en {

inline constexpr char32_t kPrimaryStress = U'ˈ';
inline constexpr char32_t kSecondaryStress = U'ˌ';

bool is_vowel(char32_t c);      // misaki's VOWELS (diphthong capitals included)
bool is_consonant(char32_t c);  // misaki's CONSONANTS
std::u32string apply_stress(std::u32string ps, std::optional<double> stress);
// Diphthongs and affricates count double: used to pick which parts of a compound keep their stress.
int stress_weight(const std::u32string& ps);

}  // namespace kokoro::en
