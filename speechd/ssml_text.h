/* The text of a speech-dispatcher message: SSML (<speak>...<mark name="x"/>...</speak>, as the server sends
 * it) reduced to plain text and the byte offsets of its index marks in that text; other tags are dropped
 * and the five XML entities (and numeric ones) decoded. Text that does not start with '<' is taken as is. */
#ifndef SD_KOKORO_SSML_TEXT_H
#define SD_KOKORO_SSML_TEXT_H
#include <stddef.h>

typedef struct ssml_mark {
  char* name;
  size_t offset; /* bytes into ssml_text.text where the mark stands */
} ssml_mark;

typedef struct ssml_text {
  char* text;
  ssml_mark* marks;
  size_t n_marks;
} ssml_text;

/* 0 on success (free with ssml_text_free), -1 when out of memory. */
int ssml_text_parse(const char* input, ssml_text* out);
void ssml_text_free(ssml_text* t);

#endif
