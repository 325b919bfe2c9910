// Written forms from computing (URLs and e-mail addresses are expanded by the tokenizer):
//   192.168.0.1 -> one nine two dot one six eight dot zero dot one   (an IPv4 address, digit by digit)
//   v2.1.3, 2.1.3 -> version two point one point three / two point one point three
//   #ThrowbackThursday -> hashtag throwback thursday     #1 stays "number one" (misaki)
#include "frontend/norm_passes.h"
#include "frontend/norm_support.h"
#include "frontend/unicode_text.h"
#include "frontend/utf8.h"

namespace kokoro::en::norm {

namespace {

std::vector<std::string> split_dots(const std::string& s) {
  std::vector<std::string> parts(1);
  for (char c : s) {
    if (c == '.') {
      parts.emplace_back();
    } else {
      parts.back().push_back(c);
    }
  }
  return parts;
}

bool is_ip(const std::vector<std::string>& parts) {
  if (parts.size() != 4) return false;
  for (const auto& p : parts) {
    const auto v = int_value(p);
    if (!v || *v > 255 || p.size() > 3) return false;
  }
  return true;
}

// "ThrowbackThursday2024" -> Throwback, Thursday, 2024 (read as a number).
Words camel_words(const std::u32string& w) {
  Words out;
  std::u32string cur;
  auto flush = [&]() {
    if (cur.empty()) return;
    const std::string a = ascii(cur);
    if (all_digits(a)) {
      append(out, number_words(a));
    } else {
      out.push_back(utf8::encode(text::lower(cur)));
    }
    cur.clear();
  };
  for (size_t i = 0; i < w.size(); ++i) {
    const char32_t c = w[i];
    if (!text::is_letter(c) && !text::is_ascii_digit(c)) {
      flush();
      continue;
    }
    if (!cur.empty()) {
      const char32_t p = cur.back();
      const bool case_break = text::is_lower_letter(p) && text::is_upper_letter(c);
      const bool digit_break = text::is_ascii_digit(p) != text::is_ascii_digit(c);
      if (case_break || digit_break) flush();
    }
    cur.push_back(c);
  }
  flush();
  return out;
}

}  // namespace

void normalize_web(std::vector<Token>& toks, const Dialect&) {
  for (size_t i = 0; i < toks.size(); ++i) {
    if (!is_free(toks[i]) || toks[i].text.empty()) continue;
    const char32_t first = toks[i].text[0];
    if (first != U'#' && first != U'v' && first != U'V' && !text::is_ascii_digit(first)) continue;
    const std::string a = ascii(toks[i]);
    // Hashtags: "#" written before a word.
    if (a == "#" && joined(toks, i) && i + 1 < toks.size() && is_free(toks[i + 1]) && !toks[i + 1].text.empty() &&
        text::is_letter(toks[i + 1].text[0])) {
      Words w = {"hashtag"};
      append(w, camel_words(toks[i + 1].text));
      i = replace(toks, i, i + 2, w) - 1;
      continue;
    }
    const bool v_prefix = a.size() > 1 && (a[0] == 'v' || a[0] == 'V') && a[1] >= '0' && a[1] <= '9';
    const std::string body = v_prefix ? a.substr(1) : a;
    if (body.empty() || body[0] < '0' || body[0] > '9' || body.back() == '.') continue;
    const auto parts = split_dots(body);
    bool digits = true;
    for (const auto& p : parts) digits &= all_digits(p);
    if (!digits) continue;
    if (!v_prefix && is_ip(parts)) {
      Words w;
      for (size_t k = 0; k < parts.size(); ++k) {
        if (k) w.emplace_back("dot");
        append(w, digits_spoken(parts[k], false));
      }
      i = replace(toks, i, i + 1, w) - 1;
      continue;
    }
    if (parts.size() >= 3 || (v_prefix && parts.size() >= 1)) {
      Words w;
      if (v_prefix) w.emplace_back("version");
      for (size_t k = 0; k < parts.size(); ++k) {
        if (k) w.emplace_back("point");
        append(w, cardinal_words(parts[k]).empty() ? Words{"zero"} : cardinal_words(parts[k]));
      }
      i = replace(toks, i, i + 1, w) - 1;
    }
  }
}

}  // namespace kokoro::en::norm
