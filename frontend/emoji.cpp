#include "frontend/emoji.h"

#include <unicode/uchar.h>

#include <algorithm>
#include <cctype>

#include "frontend/number_words.h"

namespace kokoro::emoji {

namespace {

struct Entry {
  const char* sequence;  // UTF-8, without U+FE0F and skin tones
  const char* name;      // CLDR en
  const char* british;   // CLDR en_GB (else en_001); nullptr: as en
};

constexpr Entry kNames[] = {
#include "emoji_names.inc"
};

constexpr char32_t kEmojiStyle = 0xFE0F, kTextStyle = 0xFE0E, kJoiner = 0x200D, kKeycap = 0x20E3;
constexpr char32_t kBlackFlag = 0x1F3F4, kCancelTag = 0xE007F;

bool is_skin_tone(char32_t c) { return c >= 0x1F3FB && c <= 0x1F3FF; }
bool is_regional_indicator(char32_t c) { return c >= 0x1F1E6 && c <= 0x1F1FF; }
bool is_tag(char32_t c) { return c >= 0xE0020 && c <= 0xE007E; }
bool is_pictographic(char32_t c) {
  return c >= 0x80 && (u_hasBinaryProperty(static_cast<UChar32>(c), UCHAR_EXTENDED_PICTOGRAPHIC) ||
                       u_hasBinaryProperty(static_cast<UChar32>(c), UCHAR_EMOJI_PRESENTATION));
}
// Shown as a picture without a selector: emoji-presentation characters and the pictographs of the
// supplementary planes (🕊 is text-default but never written as text).
bool is_picture_by_default(char32_t c) {
  return c >= 0x1F000 || u_hasBinaryProperty(static_cast<UChar32>(c), UCHAR_EMOJI_PRESENTATION);
}

// One pictograph with its selector and skin tone at s[i]; `first`: the sequence's first element, which
// must be shown as a picture (by default, or asked for with U+FE0F or a skin tone).
template <class At>
size_t element_length(const At& at, size_t n, size_t i, bool first) {
  const char32_t c = at(i);
  if (!is_pictographic(c)) return 0;
  bool picture = is_picture_by_default(c);
  size_t k = i + 1;
  if (k < n && at(k) == kEmojiStyle) {
    picture = true;
    ++k;
  } else if (k < n && at(k) == kTextStyle) {
    return first ? 0 : k + 1 - i;  // asked for as text
  }
  if (k < n && is_skin_tone(at(k))) {
    picture = true;
    ++k;
  }
  if (first && !picture && !(k + 1 < n && at(k) == kJoiner && is_pictographic(at(k + 1)))) return 0;
  return k - i;
}

template <class At>
size_t length_at(const At& at, size_t n, size_t i) {
  const char32_t c = at(i);
  if (c < 0x80) {
    // Keycaps: 0-9 # * with U+20E3 (and usually U+FE0F before it).
    if (!((c >= U'0' && c <= U'9') || c == U'#' || c == U'*')) return 0;
    size_t k = i + 1;
    if (k < n && at(k) == kEmojiStyle) ++k;
    return k < n && at(k) == kKeycap ? k + 1 - i : 0;
  }
  if (is_regional_indicator(c)) return i + 1 < n && is_regional_indicator(at(i + 1)) ? 2 : 1;
  if (c == kBlackFlag && i + 1 < n && is_tag(at(i + 1))) {  // subdivision flags (England, Scotland, Wales)
    size_t k = i + 1;
    while (k < n && is_tag(at(k))) ++k;
    if (k < n && at(k) == kCancelTag) return k + 1 - i;
  }
  size_t k = i + element_length(at, n, i, true);
  if (k == i) return 0;
  while (k + 1 < n && at(k) == kJoiner) {
    const size_t more = element_length(at, n, k + 1, false);
    if (more == 0) break;
    k += 1 + more;
  }
  return k - i;
}

const Entry* find(const std::string& key) {
  const Entry* end = kNames + std::size(kNames);
  const Entry* it = std::lower_bound(kNames, end, key, [](const Entry& e, const std::string& k) {
    return std::string_view(e.sequence) < std::string_view(k);
  });
  return it != end && key == it->sequence ? it : nullptr;
}

// ICU's character name in lower case ("SHAKING FACE" -> "shaking face"), for emoji newer than the CLDR data.
std::string unicode_name(char32_t c) {
  char buf[128];
  UErrorCode status = U_ZERO_ERROR;
  const int32_t n = u_charName(static_cast<UChar32>(c), U_UNICODE_CHAR_NAME, buf, sizeof buf, &status);
  if (U_FAILURE(status) || n <= 0) return {};
  std::string name(buf, static_cast<size_t>(std::min<int32_t>(n, sizeof buf - 1)));
  for (char& ch : name) ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
  return name;
}

const char* pick(const Entry& e, bool british) { return british && e.british ? e.british : e.name; }

// One part of a sequence: CLDR's name, else ICU's names of its characters.
std::string part_name(const std::u32string& part, bool british) {
  if (const Entry* e = find(utf8::encode(part))) return pick(*e, british);
  std::string out;
  for (char32_t c : part)
    if (!is_tag(c) && c != kCancelTag)
      if (std::string n = unicode_name(c); !n.empty()) out += (out.empty() ? "" : " ") + n;
  return out;
}

// CLDR's name for the sequence, else its parts' names (a joined sequence CLDR does not list).
std::string raw_name(const std::u32string& key, bool british) {
  if (const Entry* e = find(utf8::encode(key))) return pick(*e, british);
  std::string out;
  for (size_t b = 0; b < key.size();) {
    size_t e = key.find(kJoiner, b);
    if (e == std::u32string::npos) e = key.size();
    if (std::string n = part_name(key.substr(b, e - b), british); !n.empty()) out += (out.empty() ? "" : " ") + n;
    b = e + 1;
  }
  return out;
}

// "flag: Japan" -> Japan flag, "keycap: 1" -> 1; quotes, "!" and brackets go, ":" and "&" are said as a
// pause and "and", hyphens separate words ("medium-light").
std::vector<std::string> words_of(std::string name) {
  auto strip_prefix = [&](std::string_view p) {
    if (name.compare(0, p.size(), p) != 0) return false;
    name.erase(0, p.size());
    return true;
  };
  if (strip_prefix("flag: ")) name += " flag";
  if (strip_prefix("keycap: ")) {
    if (name == "#") name = "hash";
    if (name == "*") name = "star";
  }
  if (const size_t p = name.find(" ("); p != std::string::npos) name.replace(p, 2, " , ");  // (blood type)
  std::string clean;
  for (size_t i = 0; i < name.size(); ++i) {
    const unsigned char c = static_cast<unsigned char>(name[i]);
    if (name.compare(i, 3, "\u2019") == 0) {  // o’clock
      clean += '\'';
      i += 2;
    } else if (name.compare(i, 3, "\u201c") == 0 || name.compare(i, 3, "\u201d") == 0) {
      i += 2;
    } else if (c == '!' || c == '"' || c == '(' || c == ')') {
    } else if (c == ':' || c == ',') {
      clean += " , ";
    } else if (c == '&') {
      clean += " and ";
    } else if (c == '-') {
      clean += ' ';
    } else {
      clean += static_cast<char>(c);
    }
  }
  std::vector<std::string> out;
  size_t i = 0;
  while (i < clean.size()) {
    while (i < clean.size() && clean[i] == ' ') ++i;
    size_t j = i;
    while (j < clean.size() && clean[j] != ' ') ++j;
    if (j == i) break;
    const std::string w = clean.substr(i, j - i);
    i = j;
    const size_t digits = static_cast<size_t>(
        std::find_if(w.begin(), w.end(), [](char c) { return c < '0' || c > '9'; }) - w.begin());
    std::vector<std::string> said;
    if (digits > 0 && digits == w.size()) {
      said = en::cardinal_words(w);
    } else if (digits > 0 && (w.substr(digits) == "st" || w.substr(digits) == "nd" || w.substr(digits) == "rd" ||
                              w.substr(digits) == "th")) {
      said = en::ordinal_words(w.substr(0, digits));
    } else {
      said = {w};
    }
    for (auto& s : said) {
      if (s == "," && (out.empty() || out.back() == ",")) continue;
      out.push_back(std::move(s));
    }
  }
  while (!out.empty() && out.back() == ",") out.pop_back();
  return out;
}

}  // namespace

size_t sequence_length(const std::vector<utf8::CodePoint>& line, size_t i) {
  if (i >= line.size()) return 0;
  return length_at([&](size_t k) { return line[k].cp; }, line.size(), i);
}

bool is_sequence(std::u32string_view s) {
  return !s.empty() && length_at([&](size_t k) { return s[k]; }, s.size(), 0) == s.size();
}

std::u32string reading_key(std::u32string_view sequence) {
  std::u32string key;
  for (char32_t c : sequence)
    if (c != kEmojiStyle && c != kTextStyle && !is_skin_tone(c)) key.push_back(c);
  // A skin tone alone is its own emoji ("medium skin tone").
  if (key.empty() && !sequence.empty() && is_skin_tone(sequence[0])) key.push_back(sequence[0]);
  return key;
}

std::vector<std::string> spoken_name(std::u32string_view sequence, bool british) {
  return words_of(raw_name(reading_key(sequence), british));
}

}  // namespace kokoro::emoji
