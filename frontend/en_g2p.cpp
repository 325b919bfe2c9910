#include "frontend/en_g2p.h"

#include <algorithm>
#include <set>
#include <tuple>

#include "frontend/en_heteronyms.h"
#include "frontend/inline_markup.h"
#include "frontend/en_normalize.h"
#include "frontend/en_tagger.h"
#include "frontend/en_tokenizer.h"
#include "frontend/stress.h"
#include "frontend/subtokenize.h"
#include "frontend/unicode_text.h"

namespace kokoro::en {

namespace {

constexpr std::u32string_view kPuncts = U";:,.!?—…\"“”";
constexpr std::u32string_view kNonQuotePuncts = U";:,.!?—…";
constexpr std::u32string_view kSubtokenJunks = U"',-._‘’/";

bool is_punct_tag(const std::string& t) {
  return t == "." || t == "," || t == "-LRB-" || t == "-RRB-" || t == "``" || t == "\"\"" || t == "''" ||
         t == ":" || t == "$" || t == "#" || t == "NFP";
}

bool all_junk(const std::u32string& s) {
  return std::all_of(s.begin(), s.end(), [](char32_t c) { return kSubtokenJunks.find(c) != std::u32string_view::npos; });
}

bool is_non_quote_punct(const std::u32string& s) {
  return s.size() == 1 && kNonQuotePuncts.find(s[0]) != std::u32string_view::npos;
}

bool is_currency(const std::u32string& s) { return s == U"$" || s == U"£" || s == U"€"; }

int upper_weight(const std::u32string& s) {
  int w = 0;
  for (char32_t c : s) {
    const char32_t l = text::lower(std::u32string(1, c))[0];
    w += c == l ? 1 : 2;
  }
  return w;
}

TokenContext next_context(const TokenContext& ctx, const std::optional<std::u32string>& ps, const Token& tk) {
  TokenContext out;
  out.future_vowel = ctx.future_vowel;
  if (ps && !ps->empty()) {
    for (char32_t c : *ps) {
      const bool punct = kNonQuotePuncts.find(c) != std::u32string_view::npos;
      if (is_vowel(c) || is_consonant(c) || punct) {
        out.future_vowel = punct ? std::nullopt : std::optional<bool>(is_vowel(c));
        break;
      }
    }
  }
  out.future_to = tk.text == U"to" || tk.text == U"To" || (tk.text == U"TO" && (tk.tag == "TO" || tk.tag == "IN"));
  return out;
}

// misaki's resolve_tokens: finish a run of pieces whose words were all read separately.
void resolve_pieces(std::vector<Token>& tokens) {
  std::u32string text;
  for (size_t i = 0; i < tokens.size(); ++i) {
    text += tokens[i].text;
    if (i + 1 < tokens.size() && tokens[i].space_after) text.push_back(U' ');
  }
  std::set<int> classes;
  for (char32_t c : text) {
    if (kSubtokenJunks.find(c) != std::u32string_view::npos) continue;
    classes.insert(text::is_letter(c) ? 0 : (text::is_ascii_digit(c) ? 1 : 2));
  }
  const bool prespace = text::contains(text, U' ') || text::contains(text, U'/') || classes.size() > 1;
  for (size_t i = 0; i < tokens.size(); ++i) {
    Token& tk = tokens[i];
    if (!tk.phonemes) {
      if (i + 1 == tokens.size() && is_non_quote_punct(tk.text)) {
        tk.phonemes = tk.text;
        tk.rating = 3;
      } else if (all_junk(tk.text)) {
        tk.phonemes = U"";
        tk.rating = 3;
      }
    } else if (i > 0) {
      tk.prespace = prespace;
    }
  }
  if (prespace) return;
  std::vector<std::tuple<bool, int, size_t>> indices;
  for (size_t i = 0; i < tokens.size(); ++i) {
    const auto& ps = tokens[i].phonemes;
    if (ps && !ps->empty()) indices.emplace_back(text::contains(*ps, kPrimaryStress), stress_weight(*ps), i);
  }
  if (indices.size() == 2 && tokens[std::get<2>(indices[0])].text.size() == 1) {
    Token& t = tokens[std::get<2>(indices[1])];
    t.phonemes = apply_stress(*t.phonemes, -0.5);
    return;
  }
  size_t primaries = 0;
  for (const auto& idx : indices) primaries += std::get<0>(idx);
  if (indices.size() < 2 || primaries <= (indices.size() + 1) / 2) return;
  std::sort(indices.begin(), indices.end());
  indices.resize(indices.size() / 2);
  for (const auto& idx : indices) {
    Token& t = tokens[std::get<2>(idx)];
    t.phonemes = apply_stress(*t.phonemes, -0.5);
  }
}

}  // namespace

Token merge_tokens(const std::vector<Token>& parts, size_t begin, size_t end, bool join_phonemes) {
  Token out;
  const Token& first = parts[begin];
  const Token& last = parts[end - 1];
  int best = -1;
  std::set<double> stresses;
  char32_t currency = 0;
  std::set<char> flags;
  for (size_t i = begin; i < end; ++i) {
    const Token& tk = parts[i];
    out.text += tk.text;
    if (i + 1 < end && tk.space_after) out.text.push_back(U' ');
    const int w = upper_weight(tk.text);
    if (w > best) {
      best = w;
      out.tag = tk.tag;
    }
    if (tk.stress) stresses.insert(*tk.stress);
    if (tk.currency) currency = std::max(currency, tk.currency);
    for (char f : tk.num_flags) flags.insert(f);
  }
  out.space_after = last.space_after;
  out.begin = first.begin;
  out.end = last.end;
  out.is_head = first.is_head;
  if (stresses.size() == 1) out.stress = *stresses.begin();
  out.currency = currency;
  out.num_flags.assign(flags.begin(), flags.end());
  out.prespace = first.prespace;
  if (join_phonemes) {
    std::u32string ps;
    int rating = 5;
    for (size_t i = begin; i < end; ++i) {
      const Token& tk = parts[i];
      if (tk.prespace && !ps.empty() && !text::is_space(ps.back()) && tk.phonemes && !tk.phonemes->empty())
        ps.push_back(U' ');
      if (tk.phonemes) ps += *tk.phonemes;
      rating = std::min(rating, tk.rating);
    }
    out.phonemes = ps;
    out.rating = rating;
  }
  return out;
}

G2P::G2P(std::shared_ptr<const LexiconData> lexicon, Fallback fallback, G2POptions options)
    : lexicon_(std::move(lexicon)), fallback_(std::move(fallback)), options_(std::move(options)) {}

std::optional<std::u32string> G2P::fallback(const std::u32string& text) const {
  if (!fallback_) return std::nullopt;
  return fallback_(text);
}

std::vector<G2P::Group> G2P::retokenize(std::vector<Token>& tokens) const {
  std::vector<Group> words;
  bool last_is_open_group = false;  // words.back() is a run of pieces still open to more
  char32_t currency = 0;
  for (size_t i = 0; i < tokens.size(); ++i) {
    Token& token = tokens[i];
    std::vector<Token> tks;
    if (!token.alias && !token.phonemes) {
      // Letter runs longer than any dictionary word are cut so that nothing downstream sees them whole.
      std::vector<Piece> pieces;
      for (const Piece& p : subtokenize(token.text)) {
        for (size_t b = p.begin; b < p.end; b += kMaxWordLength)
          pieces.push_back({b, std::min(p.end, b + kMaxWordLength)});
      }
      const size_t n = token.text.size();
      for (const Piece& p : pieces) {
        Token t;
        t.text = token.text.substr(p.begin, p.end - p.begin);
        t.tag = token.tag;
        t.num_flags = token.num_flags;
        t.stress = token.stress;
        // Byte ranges of the pieces, spread over the token proportionally when its text was altered.
        const uint64_t span = token.end - token.begin;
        t.begin = token.begin + static_cast<uint32_t>(span * p.begin / std::max<size_t>(n, 1));
        t.end = token.begin + static_cast<uint32_t>(span * p.end / std::max<size_t>(n, 1));
        tks.push_back(std::move(t));
      }
      if (tks.empty()) continue;  // nothing readable in it
    } else {
      tks.push_back(token);
    }
    tks.back().space_after = token.space_after;
    for (size_t j = 0; j < tks.size(); ++j) {
      Token& tk = tks[j];
      if (tk.alias || tk.phonemes) {
      } else if (tk.tag == "$" && is_currency(tk.text)) {
        currency = tk.text[0];
        tk.phonemes = U"";
        tk.rating = 4;
      } else if (tk.tag == ":" && !tk.text.empty() &&
                 std::all_of(tk.text.begin(), tk.text.end(), [](char32_t c) { return c == U'-' || c == U'–'; })) {
        // A dash between words is a pause. misaki does this for "-" and "–" only and drops "--";
        // we read "--" (a common typewritten dash) the same way.
        tk.phonemes = U"—";
        tk.rating = 3;
      } else if (is_punct_tag(tk.tag) &&
                 !std::all_of(tk.text.begin(), tk.text.end(), [](char32_t c) { return text::is_ascii_letter(c); })) {
        if (tk.tag == "-LRB-") {
          tk.phonemes = U"(";
        } else if (tk.tag == "-RRB-") {
          tk.phonemes = U")";
        } else if (tk.tag == "``") {
          tk.phonemes = U"“";
        } else if (tk.tag == "''" || tk.tag == "\"\"") {
          tk.phonemes = U"”";
        } else {
          std::u32string ps;
          for (char32_t c : tk.text)
            if (kPuncts.find(c) != std::u32string_view::npos) ps.push_back(c);
          tk.phonemes = ps;
        }
        tk.rating = 4;
      } else if (currency) {
        if (tk.tag != "CD") {
          currency = 0;
        } else if (j + 1 == tks.size() && (i + 1 == tokens.size() || tokens[i + 1].tag != "CD")) {
          tk.currency = currency;
        }
      } else if (j > 0 && j + 1 < tks.size() && tk.text == U"2" && !tks[j - 1].text.empty() &&
                 !tks[j + 1].text.empty() && text::is_letter(tks[j - 1].text.back()) &&
                 text::is_letter(tks[j + 1].text.front())) {
        tk.alias = U"to";
      }
      if (tk.alias || tk.phonemes) {
        words.push_back(Group{std::move(tk)});
        last_is_open_group = false;
      } else if (!words.empty() && last_is_open_group && !words.back().back().space_after &&
                 words.back().size() < kMaxGroupPieces) {
        tk.is_head = false;
        words.back().push_back(std::move(tk));
      } else {
        const bool open = !tk.space_after;
        words.push_back(Group{std::move(tk)});
        last_is_open_group = open;
      }
    }
  }
  return words;
}

void G2P::resolve_group(Group& w, TokenContext& ctx) const {
  if (w.size() == 1) {
    Token& tk = w[0];
    if (!tk.phonemes) {
      Reading r = lexicon_(tk, ctx);
      tk.phonemes = r.phonemes;
      tk.rating = r.rating;
    }
    if (!tk.phonemes) {
      tk.phonemes = fallback(tk.text);
      tk.rating = 2;
    }
    ctx = next_context(ctx, tk.phonemes, tk);
    return;
  }
  size_t left = 0, right = w.size();
  bool should_fallback = false;
  while (left < right) {
    bool blocked = false;
    for (size_t k = left; k < right; ++k) blocked |= w[k].alias.has_value() || w[k].phonemes.has_value();
    Reading r;
    Token merged;
    if (!blocked) {
      merged = merge_tokens(w, left, right, false);
      r = lexicon_(merged, ctx);
    }
    if (r.found()) {
      w[left].phonemes = r.phonemes;
      w[left].rating = r.rating;
      for (size_t k = left + 1; k < right; ++k) {
        w[k].phonemes = U"";
        w[k].rating = r.rating;
      }
      ctx = next_context(ctx, r.phonemes, merged);
      right = left;
      left = 0;
    } else if (left + 1 < right) {
      ++left;
    } else {
      --right;
      Token& tk = w[right];
      if (!tk.phonemes) {
        if (all_junk(tk.text)) {
          tk.phonemes = U"";
          tk.rating = 3;
        } else if (fallback_) {
          should_fallback = true;
          break;
        }
      }
      left = 0;
    }
  }
  if (should_fallback) {
    const Token merged = merge_tokens(w, 0, w.size(), false);
    w[0].phonemes = fallback(merged.text);
    w[0].rating = 2;
    for (size_t k = 1; k < w.size(); ++k) {
      w[k].phonemes = U"";
      w[k].rating = 2;
    }
  } else {
    resolve_pieces(w);
  }
}

std::vector<Token> G2P::prepare_line(const std::vector<utf8::CodePoint>& line) const {
  std::vector<Token> tokens;
  if (options_.inline_markup) {
    std::vector<Markup> marks;
    const std::vector<utf8::CodePoint> stripped = strip_markup(line, marks);
    tokens = tokenize_line(stripped);
    apply_markup(tokens, marks);
  } else {
    tokens = tokenize_line(line);
  }
  if (options_.user) for_each_piece(tokens, [this](std::vector<Token>& piece) { options_.user->apply(piece); });
  normalize_tokens(tokens, lexicon_.british());
  return tokens;
}

std::string G2P::normalize_line(const std::vector<utf8::CodePoint>& line) const {
  return normalized_text(prepare_line(line));
}

std::vector<Token> G2P::phonemize_line(const std::vector<utf8::CodePoint>& line) const {
  std::vector<Token> tokens = prepare_line(line);
  tag_tokens(tokens);
  refine_heteronyms(tokens);
  std::vector<Group> words = retokenize(tokens);
  TokenContext ctx;
  for (size_t i = words.size(); i-- > 0;) resolve_group(words[i], ctx);
  std::vector<Token> out;
  out.reserve(words.size());
  for (auto& w : words) {
    Token t = w.size() == 1 ? std::move(w[0]) : merge_tokens(w, 0, w.size(), true);
    if (!t.phonemes) t.phonemes = U"";
    // Kokoro v1.0's phoneme set: flap and glottal stop are written T and t.
    for (auto& c : *t.phonemes) {
      if (c == U'ɾ') c = U'T';
      if (c == U'ʔ') c = U't';
    }
    // Words a normaliser made from one written form are one word again ("5km" -> "fˈIv kɪlˈɑmətəɹz").
    if (t.group != 0 && !out.empty() && out.back().group == t.group) {
      Token& g = out.back();
      const bool pause = t.phonemes->size() == 1 && kPuncts.find((*t.phonemes)[0]) != std::u32string_view::npos;
      if (!pause && !g.phonemes->empty() && g.space_after) g.phonemes->push_back(U' ');
      *g.phonemes += *t.phonemes;
      g.end = std::max(g.end, t.end);
      g.space_after = t.space_after;
      continue;
    }
    out.push_back(std::move(t));
  }
  return out;
}

}  // namespace kokoro::en
