/* Text that streams in through the C API (include/kokoro.h: kokoro_session_begin_text, _append_text, _end_text)
 * as a C program sees it (C99, -Wpedantic, shared libkokoro):
 *
 *   1. the text appended at once, and byte by byte (characters split between appends): identical audio, one
 *      UTTERANCE_START and one UTTERANCE_END, word events whose offsets are in the whole text
 *   2. a piece that is not UTF-8 is refused (KOKORO_ERR_INVALID_TEXT) and the stream goes on without it
 *   3. a text that ends inside a character: the rest is spoken, end_text says KOKORO_ERR_INVALID_TEXT
 *   4. one call at a time: speak and a second begin during a stream are KOKORO_ERR_BUSY
 *   5. kokoro_session_stop during a stream: appends and end_text return KOKORO_STOPPED; the session goes on
 *   6. bad arguments and handles
 *
 * The pause flush is set to an hour: no wall-clock stall of this machine can cut a sentence. Needs the converted
 * model and the assets; fails without. */
#define _POSIX_C_SOURCE 200809L
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "kokoro.h"

#include "capi_buffer.h"
#include "capi_check.h"

static const char kText[] = "The caf\xC3\xA9 opened at nine. Was it early? \"Yes,\" she said.";
static const double kNoFlush = 3600.0;

typedef struct capture {
  pthread_mutex_t mutex;
  buffer audio;
  int starts, ends, words, bad_words;
  size_t text_length; /* words must lie inside the text */
} capture;

static void capture_init(capture* c, size_t text_length) {
  memset(c, 0, sizeof *c);
  pthread_mutex_init(&c->mutex, NULL);
  c->text_length = text_length;
}

static void capture_free(capture* c) {
  pthread_mutex_destroy(&c->mutex);
  free(c->audio.samples);
}

static size_t captured(capture* c) {
  size_t n;
  pthread_mutex_lock(&c->mutex);
  n = c->audio.count;
  pthread_mutex_unlock(&c->mutex);
  return n;
}

static int on_audio(const float* samples, size_t n, void* user) {
  capture* c = (capture*)user;
  pthread_mutex_lock(&c->mutex);
  buffer_append(&c->audio, samples, n);
  pthread_mutex_unlock(&c->mutex);
  return 0;
}

static int on_event(const kokoro_event* e, void* user) {
  capture* c = (capture*)user;
  pthread_mutex_lock(&c->mutex);
  if (e->kind == KOKORO_EVENT_UTTERANCE_START) c->starts++;
  if (e->kind == KOKORO_EVENT_UTTERANCE_END) c->ends++;
  if (e->kind == KOKORO_EVENT_WORD) {
    c->words++;
    if (e->text_begin >= e->text_end || e->text_end > c->text_length) c->bad_words++;
  }
  pthread_mutex_unlock(&c->mutex);
  return 0;
}

static int same_audio(const capture* a, const capture* b) { return same(&a->audio, &b->audio); }

static kokoro_speak_options options(void) {
  kokoro_speak_options o;
  memset(&o, 0, sizeof o);
  o.size = sizeof o;
  o.voice = "af_heart";
  o.seed = 7;
  return o;
}

/* Streams `text` in pieces of `piece` bytes (0: at once); returns end_text's status. */
static int stream(kokoro_session* s, const char* text, size_t piece, capture* c) {
  kokoro_speak_options o = options();
  size_t at = 0, n = strlen(text);
  int rc = kokoro_session_begin_text(s, &o, on_audio, on_event, c, kNoFlush);
  CHECK(rc == KOKORO_OK, "begin_text: %d %s", rc, kokoro_last_error());
  if (rc != KOKORO_OK) return rc;
  while (at < n) {
    size_t len = piece == 0 || n - at < piece ? n - at : piece;
    rc = kokoro_session_append_text(s, text + at, len);
    CHECK(rc == KOKORO_OK, "append_text at byte %zu: %d %s", at, rc, kokoro_last_error());
    at += len;
  }
  return kokoro_session_end_text(s);
}

static void sleep_ms(int ms) {
  struct timespec t;
  t.tv_sec = ms / 1000;
  t.tv_nsec = (long)(ms % 1000) * 1000000L;
  nanosleep(&t, NULL);
}

int main(void) {
  kokoro_model* m = kokoro_model_open(NULL);
  kokoro_session* s;
  capture whole, pieces;
  int rc, i;
  REQUIRE(m != NULL, "kokoro_model_open: %s", kokoro_last_error());
  s = kokoro_session_new(m, NULL);
  REQUIRE(s != NULL, "kokoro_session_new: %s", kokoro_last_error());

  /* 1. At once and byte by byte. */
  capture_init(&whole, strlen(kText));
  rc = stream(s, kText, 0, &whole);
  CHECK(rc == KOKORO_OK, "whole: %d %s", rc, kokoro_last_error());
  CHECK(whole.audio.count > KOKORO_SAMPLE_RATE * 2, "whole: %zu samples", whole.audio.count);
  CHECK(whole.starts == 1 && whole.ends == 1, "whole: %d starts, %d ends", whole.starts, whole.ends);
  CHECK(whole.words >= 9 && whole.bad_words == 0, "whole: %d words, %d outside the text", whole.words, whole.bad_words);
  capture_init(&pieces, strlen(kText));
  rc = stream(s, kText, 1, &pieces);
  CHECK(rc == KOKORO_OK, "byte by byte: %d %s", rc, kokoro_last_error());
  CHECK(same_audio(&whole, &pieces), "byte by byte: %zu samples, at once %zu, or different samples", pieces.audio.count,
        whole.audio.count);
  CHECK(pieces.starts == 1 && pieces.ends == 1 && pieces.bad_words == 0, "byte by byte: events");
  capture_free(&pieces);
  capture_init(&pieces, strlen(kText));
  rc = stream(s, kText, 7, &pieces);
  CHECK(rc == KOKORO_OK && same_audio(&whole, &pieces), "7-byte pieces: %d, %zu samples", rc, pieces.audio.count);
  capture_free(&pieces);

  /* 2. A piece that is not UTF-8 is refused; the stream goes on. */
  {
    capture a, b;
    kokoro_speak_options o = options();
    capture_init(&a, 64);
    capture_init(&b, 64);
    CHECK(stream(s, "Good morning.", 0, &a) == KOKORO_OK, "%s", kokoro_last_error());
    CHECK(kokoro_session_begin_text(s, &o, on_audio, on_event, &b, kNoFlush) == KOKORO_OK, "%s", kokoro_last_error());
    CHECK(kokoro_session_append_text(s, "Good ", 5) == KOKORO_OK, "%s", kokoro_last_error());
    rc = kokoro_session_append_text(s, "\xff", 1);
    CHECK(rc == KOKORO_ERR_INVALID_TEXT, "invalid byte: %d", rc);
    rc = kokoro_session_append_text(s, "\xC3\x28", 2);
    CHECK(rc == KOKORO_ERR_INVALID_TEXT, "broken sequence: %d", rc);
    CHECK(kokoro_session_append_text(s, "morning.", 8) == KOKORO_OK, "%s", kokoro_last_error());
    CHECK(kokoro_session_end_text(s) == KOKORO_OK, "%s", kokoro_last_error());
    CHECK(a.audio.count > 0 && same_audio(&a, &b), "refused pieces changed the audio: %zu vs %zu samples",
          b.audio.count, a.audio.count);
    capture_free(&a);
    capture_free(&b);
  }

  /* 3. The text ends inside a character. */
  {
    capture c;
    capture_init(&c, 64);
    rc = stream(s, "Hello there. \xE2\x82", 0, &c);
    CHECK(rc == KOKORO_ERR_INVALID_TEXT, "ended inside a character: %d", rc);
    CHECK(strstr(kokoro_last_error(), "inside a UTF-8 character") != NULL, "message: %s", kokoro_last_error());
    CHECK(c.audio.count > KOKORO_SAMPLE_RATE / 2, "the rest must be spoken: %zu samples", c.audio.count);
    capture_free(&c);
  }

  /* 4. One call at a time. */
  {
    capture c;
    kokoro_speak_options o = options();
    capture_init(&c, 64);
    CHECK(kokoro_session_begin_text(s, &o, on_audio, on_event, &c, kNoFlush) == KOKORO_OK, "%s", kokoro_last_error());
    rc = kokoro_session_speak(s, "Hi.", NULL, NULL, NULL, NULL);
    CHECK(rc == KOKORO_ERR_BUSY, "speak during a stream: %d", rc);
    CHECK(strstr(kokoro_last_error(), "kokoro_session_end_text") != NULL, "message: %s", kokoro_last_error());
    rc = kokoro_session_begin_text(s, &o, on_audio, on_event, &c, kNoFlush);
    CHECK(rc == KOKORO_ERR_BUSY, "second begin: %d", rc);
    rc = kokoro_session_end_text(s);
    CHECK(rc == KOKORO_OK, "an empty stream: %d %s", rc, kokoro_last_error());
    CHECK(c.audio.count == 0, "an empty stream said %zu samples", c.audio.count);
    capture_free(&c);
  }

  /* 5. Barge-in during a stream. */
  {
    capture c;
    kokoro_speak_options o = options();
    capture_init(&c, 256);
    CHECK(kokoro_session_begin_text(s, &o, on_audio, on_event, &c, kNoFlush) == KOKORO_OK, "%s", kokoro_last_error());
    CHECK(kokoro_session_append_text(s, "The first sentence is spoken at once. The second", 48) == KOKORO_OK, "%s",
          kokoro_last_error());
    for (i = 0; i < 60000 && captured(&c) == 0; i++) sleep_ms(5);
    CHECK(captured(&c) > 0, "no audio from the first sentence");
    CHECK(kokoro_session_stop(s) == KOKORO_OK, "%s", kokoro_last_error());
    rc = kokoro_session_append_text(s, " never comes.", 13);
    CHECK(rc == KOKORO_STOPPED, "append after stop: %d", rc);
    rc = kokoro_session_end_text(s);
    CHECK(rc == KOKORO_STOPPED, "end after stop: %d %s", rc, kokoro_last_error());
    capture_free(&c);
    capture_init(&c, 64);
    rc = stream(s, "Still here.", 0, &c);
    CHECK(rc == KOKORO_OK && c.audio.count > 0, "after a stop: %d, %zu samples", rc, c.audio.count);
    capture_free(&c);
  }

  /* 6. Arguments and handles. */
  rc = kokoro_session_append_text(s, "x", 1);
  CHECK(rc == KOKORO_ERR_INVALID_ARGUMENT, "append without a stream: %d", rc);
  CHECK(kokoro_session_end_text(s) == KOKORO_ERR_INVALID_ARGUMENT, "end without a stream");
  CHECK(kokoro_session_append_text(s, NULL, 3) == KOKORO_ERR_INVALID_ARGUMENT, "NULL text");
  CHECK(kokoro_session_begin_text(s, NULL, NULL, NULL, NULL, -1.0) == KOKORO_ERR_INVALID_ARGUMENT, "negative pause flush");
  CHECK(kokoro_session_begin_text(NULL, NULL, NULL, NULL, NULL, 0) == KOKORO_ERR_INVALID_HANDLE, "NULL session");
  CHECK(kokoro_session_append_text((kokoro_session*)&whole, "x", 1) == KOKORO_ERR_INVALID_HANDLE, "foreign session");
  kokoro_session_close(s);
  CHECK(kokoro_session_end_text(s) == KOKORO_ERR_INVALID_HANDLE, "closed session");
  kokoro_model_close(m);
  capture_free(&whole);
  printf("text stream: %zu samples, %d words\n", whole.audio.count, whole.words);
  return g_failures ? 1 : 0;
}
