#include "frontend/ssml.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <map>
#include <optional>
#include <set>

#include "core/error.h"
#include "frontend/utf8.h"

namespace kokoro::ssml {

namespace {

constexpr double kMaxBreakSeconds = 60.0;

bool is_space(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r'; }
bool is_name_char(char c) {
  return std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '_' || c == ':' || c == '.' ||
         static_cast<unsigned char>(c) >= 0x80;
}

struct Element {
  std::string name;
  uint32_t begin = 0;  // source offset of "<"
  std::string voice;   // state to restore at the end tag
  double rate = 1.0;
  bool splits = false;  // starts and ends a piece
};

class Parser {
 public:
  explicit Parser(std::string_view src) : src_(src) {}

  Document run() {
    start_piece();
    bool seen_speak = false;
    while (pos_ < src_.size()) {
      if (src_[pos_] == '<') {
        markup(seen_speak);
      } else {
        text_run();
      }
    }
    if (!stack_.empty()) fail(stack_.back().begin, "<" + stack_.back().name + "> is never closed");
    finish_piece();
    // A piece with no words left at the end: its pause and marks belong after the last text.
    if (!doc_.pieces.empty() && !has_words(doc_.pieces.back().text)) {
      doc_.pause_after = doc_.pieces.back().pause_before;
      for (const Mark& m : doc_.pieces.back().marks) doc_.trailing_marks.push_back(m.name);
      doc_.pieces.pop_back();
    }
    return std::move(doc_);
  }

 private:
  [[noreturn]] void fail(size_t at, const std::string& what) const {
    size_t line = 1, col = 1;
    for (size_t i = 0; i < at && i < src_.size(); ++i) {
      if (src_[i] == '\n') {
        ++line;
        col = 1;
      } else if ((static_cast<unsigned char>(src_[i]) & 0xC0) != 0x80) {
        ++col;
      }
    }
    throw Error("SSML line " + std::to_string(line) + ", column " + std::to_string(col) + ": " + what);
  }

  void warn(const std::string& key, const std::string& message) {
    if (warned_.insert(key).second) doc_.warnings.push_back(message);
  }

  static bool has_words(const std::string& s) {
    return std::any_of(s.begin(), s.end(), [](char c) { return !is_space(c); });
  }

  // ---- output ----
  void start_piece() {
    Piece p;
    p.voice = voice_;
    p.rate = rate_;
    doc_.pieces.push_back(std::move(p));
  }
  Piece& piece() { return doc_.pieces.back(); }
  // Ends the current piece if it has words; a piece without words keeps collecting pauses and marks.
  void finish_piece() {
    if (doc_.pieces.empty()) return;
    Piece& p = piece();
    if (!has_words(p.text)) {
      p.voice = voice_;
      p.rate = rate_;
      return;
    }
    start_piece();
  }
  void emit(std::string_view text, uint32_t begin, uint32_t end) {
    Piece& p = piece();
    p.text.append(text);
    p.begin_of.insert(p.begin_of.end(), text.size(), begin);
    p.end_of.insert(p.end_of.end(), text.size(), end);
  }
  // Text copied from the source: each byte maps to itself (an entity maps to all of it).
  void emit_source(std::string_view text, uint32_t begin, uint32_t end) {
    Piece& p = piece();
    p.text.append(text);
    for (size_t k = 0; k < text.size(); ++k) {
      const uint32_t b = text.size() == end - begin ? begin + static_cast<uint32_t>(k) : begin;
      p.begin_of.push_back(b);
      p.end_of.push_back(text.size() == end - begin ? b + 1 : end);
    }
  }

  // ---- lexing ----
  bool starts(std::string_view s) const { return src_.substr(pos_, s.size()) == s; }

  std::string entity(size_t& i) {
    const size_t semi = src_.find(';', i);
    if (semi == std::string_view::npos || semi - i > 12) fail(i, "'&' must start an entity such as &amp;");
    const std::string_view name = src_.substr(i + 1, semi - i - 1);
    std::string out;
    if (name == "amp") out = "&";
    else if (name == "lt") out = "<";
    else if (name == "gt") out = ">";
    else if (name == "quot") out = "\"";
    else if (name == "apos") out = "'";
    else if (name.size() > 1 && name[0] == '#') {
      const bool hex = name[1] == 'x' || name[1] == 'X';
      const std::string digits(name.substr(hex ? 2 : 1));
      char* end = nullptr;
      const unsigned long v = digits.empty() ? 0 : std::strtoul(digits.c_str(), &end, hex ? 16 : 10);
      if (digits.empty() || *end != '\0' || v == 0 || v > 0x10FFFF || (v >= 0xD800 && v <= 0xDFFF))
        fail(i, "bad character reference &" + std::string(name) + ";");
      utf8::append(out, static_cast<char32_t>(v));
    } else {
      fail(i, "unknown entity &" + std::string(name) + ";");
    }
    i = semi + 1;
    return out;
  }

  void text_run() {
    while (pos_ < src_.size() && src_[pos_] != '<') {
      if (src_[pos_] == '&') {
        const size_t at = pos_;
        const std::string s = entity(pos_);
        add_text(s, static_cast<uint32_t>(at), static_cast<uint32_t>(pos_));
      } else {
        size_t e = pos_;
        while (e < src_.size() && src_[e] != '<' && src_[e] != '&') ++e;
        add_text(src_.substr(pos_, e - pos_), static_cast<uint32_t>(pos_), static_cast<uint32_t>(e));
        pos_ = e;
      }
    }
  }

  void add_text(std::string_view s, uint32_t begin, uint32_t end) {
    if (capture_) {
      capture_text_ += s;
      return;
    }
    emit_source(s, begin, end);
  }

  std::string read_name() {
    const size_t b = pos_;
    while (pos_ < src_.size() && is_name_char(src_[pos_])) ++pos_;
    if (pos_ == b) fail(b, "expected a name");
    return std::string(src_.substr(b, pos_ - b));
  }

  void skip_space() {
    while (pos_ < src_.size() && is_space(src_[pos_])) ++pos_;
  }

  void markup(bool& seen_speak) {
    const size_t lt = pos_;
    if (starts("<!--")) {
      const size_t e = src_.find("-->", pos_ + 4);
      if (e == std::string_view::npos) fail(lt, "comment is never closed");
      pos_ = e + 3;
      return;
    }
    if (starts("<![CDATA[")) {
      const size_t e = src_.find("]]>", pos_ + 9);
      if (e == std::string_view::npos) fail(lt, "CDATA section is never closed");
      add_text(src_.substr(pos_ + 9, e - pos_ - 9), static_cast<uint32_t>(pos_ + 9), static_cast<uint32_t>(e));
      pos_ = e + 3;
      return;
    }
    if (starts("<?") || starts("<!")) {
      const size_t e = src_.find('>', pos_);
      if (e == std::string_view::npos) fail(lt, "declaration is never closed");
      pos_ = e + 1;
      return;
    }
    ++pos_;
    const bool closing = pos_ < src_.size() && src_[pos_] == '/';
    if (closing) ++pos_;
    const std::string name = read_name();
    std::map<std::string, std::string> attrs;
    bool self_closing = false;
    while (true) {
      skip_space();
      if (pos_ >= src_.size()) fail(lt, "<" + name + "> is never closed with '>'");
      if (src_[pos_] == '>') {
        ++pos_;
        break;
      }
      if (src_[pos_] == '/' && pos_ + 1 < src_.size() && src_[pos_ + 1] == '>') {
        if (closing) fail(pos_, "'/>' in an end tag");
        self_closing = true;
        pos_ += 2;
        break;
      }
      if (closing) fail(pos_, "attributes in the end tag </" + name + ">");
      const size_t at = pos_;
      const std::string key = read_name();
      skip_space();
      if (pos_ >= src_.size() || src_[pos_] != '=') fail(pos_, "attribute " + key + " needs ='value'");
      ++pos_;
      skip_space();
      if (pos_ >= src_.size() || (src_[pos_] != '"' && src_[pos_] != '\'')) fail(pos_, "attribute values are quoted");
      const char q = src_[pos_++];
      std::string value;
      while (pos_ < src_.size() && src_[pos_] != q) {
        if (src_[pos_] == '&') {
          value += entity(pos_);
        } else if (src_[pos_] == '<') {
          fail(pos_, "'<' in an attribute value");
        } else {
          value.push_back(src_[pos_++]);
        }
      }
      if (pos_ >= src_.size()) fail(at, "attribute " + key + " is never closed");
      ++pos_;
      if (!attrs.emplace(key, value).second) fail(at, "attribute " + key + " given twice");
    }
    if (closing) {
      end_element(name, lt);
    } else {
      if (name == "speak") seen_speak = true;
      start_element(name, attrs, self_closing, lt);
    }
  }

  // ---- elements ----
  static std::optional<double> parse_seconds(const std::string& v) {
    char* end = nullptr;
    const double x = std::strtod(v.c_str(), &end);
    if (end == v.c_str() || !std::isfinite(x) || x < 0) return std::nullopt;
    const std::string unit(end);
    if (unit == "ms") return x / 1000.0;
    if (unit == "s") return x;
    return std::nullopt;
  }

  void start_element(const std::string& name, const std::map<std::string, std::string>& attrs, bool self_closing,
                     size_t lt) {
    auto attr = [&](const char* k) -> std::optional<std::string> {
      auto it = attrs.find(k);
      return it == attrs.end() ? std::nullopt : std::optional<std::string>(it->second);
    };
    if (capture_ && name != "break" && name != "mark")
      fail(lt, "<" + name + "> inside <" + stack_.back().name + "> (only text is allowed there)");
    if (name == "break") {
      double seconds = 0.4;  // "medium"
      if (auto t = attr("time")) {
        auto s = parse_seconds(*t);
        if (!s) fail(lt, "break time must be like 500ms or 1.5s, got '" + *t + "'");
        seconds = std::min(*s, kMaxBreakSeconds);
      } else if (auto st = attr("strength")) {
        static const std::map<std::string, double> kStrength = {{"none", 0},      {"x-weak", 0.1}, {"weak", 0.25},
                                                                {"medium", 0.4},  {"strong", 0.75}, {"x-strong", 1.2}};
        auto it = kStrength.find(*st);
        if (it == kStrength.end()) fail(lt, "unknown break strength '" + *st + "'");
        seconds = it->second;
      }
      if (!capture_ && seconds > 0) {
        finish_piece();
        piece().pause_before += seconds;
      }
      if (!self_closing) stack_.push_back({name, static_cast<uint32_t>(lt), voice_, rate_, false});
      return;
    }
    if (name == "mark") {
      auto n = attr("name");
      if (!n) fail(lt, "<mark> needs a name");
      // Not a new piece: a mark is a place in the text, and splitting the sentence there would change how
      // it is said (speech-dispatcher puts one after every "." followed by a space, "Mr.<mark/> Smith").
      if (!capture_) piece().marks.push_back({*n, piece().text.size()});
      if (!self_closing) stack_.push_back({name, static_cast<uint32_t>(lt), voice_, rate_, false});
      return;
    }
    Element el{name, static_cast<uint32_t>(lt), voice_, rate_, false};
    if (name == "speak" || name == "p" || name == "s" || name == "paragraph" || name == "sentence") {
      el.splits = name != "speak";
      if (el.splits) finish_piece();
    } else if (name == "voice") {
      auto n = attr("name");
      if (!n) warn("voice-no-name", "<voice> without a name keeps the current voice");
      finish_piece();
      if (n) voice_ = *n;
      piece().voice = voice_;
      el.splits = true;
    } else if (name == "prosody") {
      if (auto r = attr("rate")) {
        static const std::map<std::string, double> kRates = {
            {"x-slow", 0.5}, {"slow", 0.75}, {"medium", 1.0}, {"default", 1.0}, {"fast", 1.25}, {"x-fast", 1.5}};
        double factor;
        if (auto it = kRates.find(*r); it != kRates.end()) {
          factor = it->second;
        } else {
          char* end = nullptr;
          const double x = std::strtod(r->c_str(), &end);
          const std::string unit(end);
          if (end == r->c_str() || !std::isfinite(x) || x <= 0 || (unit != "%" && !unit.empty()))
            fail(lt, "prosody rate must be x-slow..x-fast, a percentage or a factor, got '" + *r + "'");
          factor = unit == "%" ? x / 100.0 : x;
        }
        finish_piece();
        rate_ = std::clamp(rate_ * factor, 0.25, 4.0);
        piece().rate = rate_;
        el.splits = true;
      }
      if (attr("pitch") || attr("volume") || attr("contour") || attr("range"))
        warn("prosody", "prosody pitch, volume, contour and range are ignored (only rate is used)");
    } else if (name == "say-as" || name == "sub" || name == "phoneme") {
      if (name == "sub" && !attr("alias")) fail(lt, "<sub> needs an alias");
      if (name == "phoneme" && !attr("ph")) fail(lt, "<phoneme> needs ph");
      if (name == "say-as" && !attr("interpret-as")) fail(lt, "<say-as> needs interpret-as");
      capture_attrs_ = attrs;
      capture_ = true;
      capture_text_.clear();
      if (self_closing) {
        capture_ = false;
        finish_capture(name, static_cast<uint32_t>(lt), static_cast<uint32_t>(pos_));
        return;
      }
    } else if (name == "lang") {
      warn("lang", "<lang> is read in the frontend's language");
    } else {
      warn("element:" + name, "unknown SSML element <" + name + "> ignored (its text is read)");
    }
    if (!self_closing) stack_.push_back(el);
    else if (el.splits) end_effects(el);
  }

  void end_effects(const Element& el) {
    if (!el.splits) return;
    finish_piece();
    voice_ = el.voice;
    rate_ = el.rate;
    piece().voice = voice_;
    piece().rate = rate_;
  }

  void end_element(const std::string& name, size_t lt) {
    if (stack_.empty() || stack_.back().name != name)
      fail(lt, "</" + name + "> does not close " + (stack_.empty() ? "anything" : "<" + stack_.back().name + ">"));
    const Element el = stack_.back();
    stack_.pop_back();
    if (capture_ && (name == "say-as" || name == "sub" || name == "phoneme")) {
      capture_ = false;
      finish_capture(name, el.begin, static_cast<uint32_t>(pos_));
      return;
    }
    end_effects(el);
  }

  // The text said for a <say-as>, <sub> or <phoneme> element spanning [begin, end) of the source.
  void finish_capture(const std::string& name, uint32_t begin, uint32_t end) {
    const std::string content = capture_text_;
    auto attr = [&](const char* k) {
      auto it = capture_attrs_.find(k);
      return it == capture_attrs_.end() ? std::string() : it->second;
    };
    std::string said;
    if (name == "sub") {
      said = attr("alias");
    } else if (name == "phoneme") {
      const std::string alphabet = attr("alphabet");
      std::string ps = alphabet == "x-kokoro" || alphabet == "kokoro" || alphabet == "x-misaki" ? attr("ph")
                                                                                                 : ipa_to_kokoro(attr("ph"));
      if (alphabet != "" && alphabet != "ipa" && alphabet != "x-kokoro" && alphabet != "kokoro" && alphabet != "x-misaki")
        warn("alphabet:" + alphabet, "phoneme alphabet '" + alphabet + "' read as IPA");
      std::string words;
      for (char c : content)
        if (c != '[' && c != ']' && c != '(' && c != ')' && c != '\n') words.push_back(c);
      while (!words.empty() && is_space(words.back())) words.pop_back();
      while (!words.empty() && is_space(words.front())) words.erase(0, 1);
      ps.erase(std::remove_if(ps.begin(), ps.end(), [](char c) { return c == '/' || c == ')' || c == '(' || c == '\n'; }),
               ps.end());
      if (ps.empty()) {
        said = words;
      } else {
        said = " [" + (words.empty() ? std::string("_") : words) + "](/" + ps + "/) ";
      }
    } else {
      said = say_as(attr("interpret-as"), attr("format"), content);
    }
    emit(said, begin, end);
  }

  std::string spaced(const std::string& s, bool letters_as_names) {
    std::string out;
    for (char32_t c : utf8::to_u32(s)) {
      if (c == U' ' || c == U'\t' || c == U'\n') continue;
      if (!out.empty()) out += " ";
      // A lone "a" would be the article: say the letter's name through markup.
      if (letters_as_names && (c == U'a' || c == U'A')) {
        out += "[a](/ˈA/)";
      } else {
        utf8::append(out, c >= U'a' && c <= U'z' && letters_as_names ? c - 32 : c);
      }
    }
    return out;
  }

  std::string say_as(const std::string& kind, const std::string& format, const std::string& content) {
    if (kind == "characters" || kind == "spell-out" || kind == "verbatim") return " " + spaced(content, true) + " ";
    if (kind == "digits") {
      std::string digits;
      for (char c : content)
        if (c >= '0' && c <= '9') digits.push_back(c);
      return " " + spaced(digits, false) + " ";
    }
    if (kind == "ordinal") {
      std::string digits;
      for (char c : content)
        if (c >= '0' && c <= '9') digits.push_back(c);
      if (digits.empty() || digits.size() > 30) return content;
      const int last2 = digits.size() >= 2 ? std::stoi(digits.substr(digits.size() - 2)) : digits.back() - '0';
      const int last = digits.back() - '0';
      const char* suffix = (last2 >= 11 && last2 <= 13) ? "th" : last == 1 ? "st" : last == 2 ? "nd" : last == 3 ? "rd" : "th";
      return " " + digits + suffix + " ";
    }
    if (kind == "telephone") {
      std::string out;
      bool in_group = false, any_digit = false;
      for (char c : content) {
        if (c >= '0' && c <= '9') {
          if (any_digit && !in_group) out += ",";
          any_digit = true;
          out += " ";
          out.push_back(c);
          in_group = true;
        } else if (c == '+' && out.empty()) {
          out += "plus";
        } else {
          in_group = false;
        }
      }
      return out + " ";
    }
    if (kind == "date") return " " + date(format, content) + " ";
    if (kind != "cardinal" && kind != "number" && kind != "time")
      warn("say-as:" + kind, "say-as interpret-as='" + kind + "' is read as plain text");
    return content;
  }

  static std::string date(const std::string& format, const std::string& content) {
    std::vector<std::string> parts(1);
    for (char c : content) {
      if (c >= '0' && c <= '9') {
        parts.back().push_back(c);
      } else if (!parts.back().empty()) {
        parts.emplace_back();
      }
    }
    if (parts.back().empty()) parts.pop_back();
    if (format.empty() || parts.size() != format.size()) return content;
    static const char* kMonths[] = {"January", "February", "March", "April", "May", "June", "July",
                                    "August", "September", "October", "November", "December"};
    std::string y, m, d;
    for (size_t k = 0; k < format.size(); ++k) {
      if (parts[k].size() > 4) return content;
      if (format[k] == 'y') y = parts[k];
      else if (format[k] == 'm') m = parts[k];
      else if (format[k] == 'd') d = parts[k];
      else return content;
    }
    const int mv = m.empty() ? 0 : std::stoi(m), dv = d.empty() ? 0 : std::stoi(d);
    if ((!m.empty() && (mv < 1 || mv > 12)) || (!d.empty() && (dv < 1 || dv > 31))) return content;
    if (!y.empty() && !m.empty() && !d.empty() && y.size() == 4)
      return y + "-" + (mv < 10 ? "0" : "") + std::to_string(mv) + "-" + (dv < 10 ? "0" : "") + std::to_string(dv);
    std::string out;
    if (!m.empty()) out = kMonths[mv - 1];
    if (!d.empty()) out += " " + std::to_string(dv);
    if (!y.empty()) out += (out.empty() ? "" : (d.empty() ? " " : ", ")) + y;
    return out.empty() ? content : out;
  }

  std::string_view src_;
  size_t pos_ = 0;
  Document doc_;
  std::vector<Element> stack_;
  std::string voice_;
  double rate_ = 1.0;
  bool capture_ = false;
  std::string capture_text_;
  std::map<std::string, std::string> capture_attrs_;
  std::set<std::string> warned_;
};

}  // namespace

bool looks_like_ssml(std::string_view t) {
  size_t i = 0;
  if (t.substr(0, 3) == "\xEF\xBB\xBF") i = 3;
  while (true) {
    while (i < t.size() && is_space(t[i])) ++i;
    if (t.substr(i, 5) == "<?xml" || t.substr(i, 4) == "<!--") {
      const size_t e = t.find('>', i);
      if (e == std::string_view::npos) return false;
      i = e + 1;
      continue;
    }
    break;
  }
  return t.substr(i, 6) == "<speak" && i + 6 < t.size() && (t[i + 6] == '>' || is_space(t[i + 6]) || t[i + 6] == '/');
}

Document parse(std::string_view ssml) {
  if (ssml.size() > 0xFFFFFFF0u) throw Error("SSML document too large");
  return Parser(ssml).run();
}

std::string ipa_to_kokoro(std::string_view ipa) {
  static const std::vector<std::pair<std::string_view, std::string_view>> kMap = {
      {"t͡ʃ", "ʧ"}, {"d͡ʒ", "ʤ"}, {"tʃ", "ʧ"}, {"dʒ", "ʤ"}, {"eɪ", "A"}, {"aɪ", "I"}, {"aʊ", "W"},
      {"ɔɪ", "Y"},  {"oʊ", "O"},  {"əʊ", "Q"}, {"ɝ", "ɜɹ"}, {"ɚ", "əɹ"}, {"ɾ", "T"},  {"ʔ", "t"},
      {"g", "ɡ"},   {"r", "ɹ"},   {"ɫ", "l"},  {"e", "ɛ"},  {"ɐ", "ə"},  {"‿", ""},   {".", ""},
      {"ʲ", ""},    {"ʰ", ""},    {"̃", ""},   {"'", "ˈ"},  {",", "ˌ"}};
  std::string out;
  size_t i = 0;
  while (i < ipa.size()) {
    bool done = false;
    for (const auto& [from, to] : kMap) {
      if (ipa.substr(i, from.size()) == from) {
        out += to;
        i += from.size();
        done = true;
        break;
      }
    }
    if (!done) out.push_back(ipa[i++]);
  }
  return out;
}

}  // namespace kokoro::ssml
