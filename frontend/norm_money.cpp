// Money that misaki misreads. It reads "$5.50", "£3" and "$2 billion" well (those are left to it) but
// drops the currency from amounts with a magnitude suffix and does not know the yen or rupee sign:
//   $2.3M   -> two point three million dollars      €5bn -> five billion euros
//   £10K    -> ten thousand pounds                  ¥500 -> five hundred yen
//   ₹1,200  -> one thousand two hundred rupees      99¢  -> ninety nine cents
#include <cstring>

#include "frontend/norm_passes.h"
#include "frontend/norm_support.h"

namespace kokoro::en::norm {

namespace {

struct Currency {
  const char32_t* sign;
  const char* one;
  const char* many;
};
constexpr Currency kCurrencies[] = {{U"$", "dollar", "dollars"}, {U"€", "euro", "euros"}, {U"£", "pound", "pounds"},
                                    {U"¥", "yen", "yen"},        {U"₹", "rupee", "rupees"}};

const char* magnitude(const std::string& s) {
  if (s == "K" || s == "k") return "thousand";
  if (s == "M" || s == "m" || s == "mn" || s == "MM") return "million";
  if (s == "B" || s == "b" || s == "bn" || s == "Bn") return "billion";
  if (s == "T" || s == "tn" || s == "trn") return "trillion";
  return nullptr;
}

const Currency* currency_of(const Token& t) {
  for (const auto& c : kCurrencies)
    if (t.text == c.sign) return &c;
  return nullptr;
}

}  // namespace

void normalize_money(std::vector<Token>& toks, const Dialect&) {
  for (size_t i = 0; i < toks.size(); ++i) {
    if (!is_free(toks[i])) continue;
    // "99¢": cents sign after the number.
    {
      const std::u32string& t = toks[i].text;
      if (t.size() >= 2 && t.back() == U'¢') {
        const std::string num = ascii(t.substr(0, t.size() - 1));
        if (is_plain_number(num)) {
          Words w = number_words(num);
          w.emplace_back(is_singular(num) ? "cent" : "cents");
          i = replace(toks, i, i + 1, w) - 1;
        }
        continue;
      }
    }
    const Currency* cur = currency_of(toks[i]);
    if (!cur || !joined(toks, i) || i + 1 >= toks.size() || !is_free(toks[i + 1])) continue;
    std::string a = ascii(toks[i + 1]);
    // "$400M." at the end of a sentence keeps its full stop in the token ("M." is not split off).
    const bool full_stop = a.size() > 2 && a.back() == '.' && std::isalpha(static_cast<unsigned char>(a[a.size() - 2]));
    if (full_stop) a.pop_back();
    // Split "2.3M" into the number and the magnitude.
    size_t k = a.size();
    while (k > 0 && std::isalpha(static_cast<unsigned char>(a[k - 1]))) --k;
    const std::string num = a.substr(0, k), suffix = a.substr(k);
    if (!is_plain_number(num)) continue;
    const char* mag = suffix.empty() ? nullptr : magnitude(suffix);
    size_t end = i + 2;
    if (!suffix.empty() && !mag) continue;
    // "$5 bn", "€2 m" with the magnitude as its own word.
    if (!mag && end < toks.size() && is_free(toks[end])) {
      const std::string next = ascii(toks[end]);
      if (next == "bn" || next == "mn" || next == "tn" || next == "K" || next == "M") {
        mag = magnitude(next);
        ++end;
      }
    }
    const bool sign_unknown_to_misaki = std::u32string_view(cur->sign) == U"¥" || std::u32string_view(cur->sign) == U"₹";
    if (!mag && !sign_unknown_to_misaki) continue;  // misaki reads plain amounts well
    Words w = number_words(num);
    if (mag) w.emplace_back(mag);
    w.emplace_back(!mag && is_singular(num) ? cur->one : cur->many);
    if (full_stop && end == i + 2) w.emplace_back(".");
    i = replace(toks, i, end, w) - 1;
  }
}

}  // namespace kokoro::en::norm
