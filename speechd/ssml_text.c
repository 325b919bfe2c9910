#define _POSIX_C_SOURCE 200809L
#include "speechd/ssml_text.h"

#include <stdlib.h>
#include <string.h>

/* Appends the UTF-8 encoding of code point cp. */
static size_t put_utf8(char* out, unsigned long cp) {
  if (cp < 0x80) {
    out[0] = (char)cp;
    return 1;
  }
  if (cp < 0x800) {
    out[0] = (char)(0xc0 | (cp >> 6));
    out[1] = (char)(0x80 | (cp & 0x3f));
    return 2;
  }
  if (cp < 0x10000) {
    out[0] = (char)(0xe0 | (cp >> 12));
    out[1] = (char)(0x80 | ((cp >> 6) & 0x3f));
    out[2] = (char)(0x80 | (cp & 0x3f));
    return 3;
  }
  out[0] = (char)(0xf0 | (cp >> 18));
  out[1] = (char)(0x80 | ((cp >> 12) & 0x3f));
  out[2] = (char)(0x80 | ((cp >> 6) & 0x3f));
  out[3] = (char)(0x80 | (cp & 0x3f));
  return 4;
}

/* An entity at s (after '&'): writes its text, returns the bytes consumed after '&' (0: not an entity). */
static size_t entity(const char* s, char* out, size_t* written) {
  static const struct { const char* name; char c; } named[] = {
      {"lt;", '<'}, {"gt;", '>'}, {"amp;", '&'}, {"quot;", '"'}, {"apos;", '\''}};
  size_t i;
  for (i = 0; i < sizeof named / sizeof *named; i++) {
    size_t n = strlen(named[i].name);
    if (!strncmp(s, named[i].name, n)) {
      out[0] = named[i].c;
      *written = 1;
      return n;
    }
  }
  if (s[0] == '#') {
    char* end;
    unsigned long cp = (s[1] == 'x' || s[1] == 'X') ? strtoul(s + 2, &end, 16) : strtoul(s + 1, &end, 10);
    if (*end == ';' && cp > 0 && cp <= 0x10ffff && !(cp >= 0xd800 && cp <= 0xdfff)) {
      *written = put_utf8(out, cp);
      return (size_t)(end - s) + 1;
    }
  }
  return 0;
}

/* The value of attribute `name` in the tag [tag, tag_end), malloc'ed; NULL if absent. */
static char* attribute(const char* tag, const char* tag_end, const char* name) {
  const size_t n = strlen(name);
  const char* p = tag;
  while (p + n < tag_end) {
    if (!strncmp(p, name, n) && (p[n] == '=' || p[n] == ' ')) {
      const char* q = p + n;
      char quote;
      const char* v;
      while (q < tag_end && (*q == ' ' || *q == '=')) q++;
      if (q >= tag_end || (*q != '"' && *q != '\'')) return NULL;
      quote = *q++;
      v = q;
      while (q < tag_end && *q != quote) q++;
      if (q >= tag_end) return NULL;
      return strndup(v, (size_t)(q - v));
    }
    p++;
  }
  return NULL;
}

int ssml_text_parse(const char* input, ssml_text* out) {
  const size_t n = strlen(input);
  const char* p = input;
  size_t o = 0;
  memset(out, 0, sizeof *out);
  out->text = (char*)malloc(n + 1);
  if (!out->text) return -1;
  if (input[0] != '<') {
    memcpy(out->text, input, n + 1);
    return 0;
  }
  while (*p) {
    if (*p == '<') {
      const char* end = strchr(p, '>');
      if (!end) break; /* an unterminated tag: the rest is markup */
      if (!strncmp(p, "<mark", 5)) {
        char* name = attribute(p + 5, end, "name");
        if (name) {
          ssml_mark* m = (ssml_mark*)realloc(out->marks, (out->n_marks + 1) * sizeof *m);
          if (!m) {
            free(name);
            ssml_text_free(out);
            return -1;
          }
          out->marks = m;
          m[out->n_marks].name = name;
          m[out->n_marks].offset = o;
          out->n_marks++;
        }
      } else if (o > 0 && out->text[o - 1] != ' ' && (!strncmp(p, "<break", 6) || !strncmp(p, "</s>", 4) ||
                                                      !strncmp(p, "</p>", 4))) {
        out->text[o++] = ' '; /* keep words of neighbouring elements apart */
      }
      p = end + 1;
    } else if (*p == '&') {
      size_t written = 0, used = entity(p + 1, out->text + o, &written);
      if (used) {
        o += written;
        p += used + 1;
      } else {
        out->text[o++] = *p++;
      }
    } else {
      out->text[o++] = *p++;
    }
  }
  out->text[o] = 0;
  return 0;
}

void ssml_text_free(ssml_text* t) {
  size_t i;
  for (i = 0; i < t->n_marks; i++) free(t->marks[i].name);
  free(t->marks);
  free(t->text);
  memset(t, 0, sizeof *t);
}
