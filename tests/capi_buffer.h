/* A growing buffer of audio samples for the C API's C tests (test_capi_sessions.c, test_capi_text_stream.c):
 * what an audio callback appends to, and whether two runs gave the same samples bit for bit. C99. */
#ifndef KOKORO_TESTS_CAPI_BUFFER_H
#define KOKORO_TESTS_CAPI_BUFFER_H
#include <stdlib.h>
#include <string.h>

#include "capi_check.h"

typedef struct buffer {
  float* samples;
  size_t count, capacity;
} buffer;

static void buffer_append(buffer* b, const float* samples, size_t n) {
  if (b->count + n > b->capacity) {
    size_t cap = b->capacity ? b->capacity * 2 : 48000;
    while (cap < b->count + n) cap *= 2;
    b->samples = (float*)realloc(b->samples, cap * sizeof(float));
    REQUIRE(b->samples != NULL, "out of memory");
    b->capacity = cap;
  }
  memcpy(b->samples + b->count, samples, n * sizeof(float));
  b->count += n;
}

static int same(const buffer* a, const buffer* b) {
  return a->count == b->count && (a->count == 0 || memcmp(a->samples, b->samples, a->count * sizeof(float)) == 0);
}

#endif
