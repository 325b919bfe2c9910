/* The C API (include/kokoro.h) as a C program sees it: compiled as C99 with -Wpedantic to prove the header
 * is C, linked to the shared libkokoro only. One executable, one scenario per argument (ctest runs each):
 *
 *   speak     open with defaults, list voices, speak a sentence into a buffer (> 1 s, events in order), stop
 *             a second utterance mid-way from another thread, stop a third from inside a callback, speak
 *             again after the barge-ins, close
 *   errors    every bad argument: NULL, closed or unknown engine, invalid UTF-8, empty text, unknown voice,
 *             language and mode, bad speed, wrong struct sizes, missing model and assets, a concurrent
 *             speak -> the documented error code and a message, no crash
 *   fuzz      random argument combinations (fixed seed), each call must return a documented code
 *   phonemize kokoro_model_phonemize: segments per line, output speakable as phoneme input, error codes;
 *             kokoro_model_assets_dir
 *
 * Needs the converted model (models/kokoro-v1_0.kokoro or $KOKORO_MODEL) and the assets; fails without. */
#define _POSIX_C_SOURCE 200809L
#include <math.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kokoro.h"

#include "capi_check.h"

/* ------------------------------------------------------------------------------------------ capture */

#define MAX_EVENTS 4096

typedef struct capture {
  float* samples;
  size_t count, capacity;
  kokoro_event events[MAX_EVENTS];
  size_t n_events;
  int nonfinite;
  /* barge-in */
  kokoro_engine* engine;
  pthread_mutex_t mutex;
  pthread_cond_t cond;
  int stop_requested;             /* set by the stopper thread once kokoro_stop has returned */
  size_t samples_after_stop;      /* audio and callbacks seen after kokoro_stop returned: at most the one */
  size_t callbacks_after_stop;    /* callback that was already running may finish (kokoro.h) */
  size_t stop_from_callback_at;   /* > 0: the audio callback returns 1 once this many samples have come */
} capture;

static void capture_init(capture* c, kokoro_engine* e) {
  memset(c, 0, sizeof *c);
  c->engine = e;
  pthread_mutex_init(&c->mutex, NULL);
  pthread_cond_init(&c->cond, NULL);
}

static void capture_free(capture* c) {
  free(c->samples);
  pthread_mutex_destroy(&c->mutex);
  pthread_cond_destroy(&c->cond);
}

static int on_audio(const float* samples, size_t n, void* user) {
  capture* c = (capture*)user;
  size_t i;
  pthread_mutex_lock(&c->mutex);
  if (c->stop_requested) {
    c->samples_after_stop += n;
    c->callbacks_after_stop++;
  }
  if (c->count + n > c->capacity) {
    size_t cap = c->capacity ? c->capacity * 2 : 48000;
    while (cap < c->count + n) cap *= 2;
    c->samples = (float*)realloc(c->samples, cap * sizeof(float));
    REQUIRE(c->samples != NULL, "out of memory");
    c->capacity = cap;
  }
  for (i = 0; i < n; i++) {
    if (!isfinite(samples[i])) c->nonfinite++;
    c->samples[c->count + i] = samples[i];
  }
  c->count += n;
  pthread_cond_broadcast(&c->cond);
  pthread_mutex_unlock(&c->mutex);
  return c->stop_from_callback_at > 0 && c->count >= c->stop_from_callback_at;
}

static int on_event(const kokoro_event* ev, void* user) {
  capture* c = (capture*)user;
  pthread_mutex_lock(&c->mutex);
  if (c->stop_requested) c->callbacks_after_stop++;
  CHECK(ev->size >= sizeof(kokoro_event), "event size %zu", ev->size);
  if (c->n_events < MAX_EVENTS) c->events[c->n_events++] = *ev;
  pthread_mutex_unlock(&c->mutex);
  return 0;
}

static double rms(const float* x, size_t n) {
  double s = 0;
  size_t i;
  for (i = 0; i < n; i++) s += (double)x[i] * x[i];
  return n ? sqrt(s / (double)n) : 0;
}

/* Events as documented: UTTERANCE_START first, UTTERANCE_END last (if complete), segments bracketing their
 * words, start samples never going back, words inside their segment and inside the text. */
static void check_events(const capture* c, const char* text, int complete) {
  size_t i, words = 0, segments = 0;
  int in_segment = 0;
  uint64_t last = 0, seg_begin = 0, seg_end = 0, prev_word_text_end = 0;
  const size_t len = strlen(text);
  CHECK(c->n_events >= 1, "no events");
  if (c->n_events == 0) return;
  CHECK(c->events[0].kind == KOKORO_EVENT_UTTERANCE_START, "first event is %d", c->events[0].kind);
  CHECK(c->events[0].start_sample == 0, "utterance starts at %llu", (unsigned long long)c->events[0].start_sample);
  for (i = 1; i < c->n_events; i++) {
    const kokoro_event* e = &c->events[i];
    CHECK(e->start_sample >= last, "event %zu starts at %llu, before %llu", i, (unsigned long long)e->start_sample,
          (unsigned long long)last);
    CHECK(e->end_sample >= e->start_sample, "event %zu ends before it starts", i);
    CHECK(e->start_sample <= c->count, "event %zu at %llu beyond the %zu samples delivered", i,
          (unsigned long long)e->start_sample, c->count);
    last = e->start_sample;
    switch (e->kind) {
      case KOKORO_EVENT_SEGMENT_START:
        CHECK(!in_segment, "segment start inside a segment (event %zu)", i);
        in_segment = 1;
        segments++;
        seg_begin = e->text_begin;
        seg_end = e->text_end;
        CHECK(e->text_begin < e->text_end && e->text_end <= len, "segment text %zu..%zu of %zu", e->text_begin,
              e->text_end, len);
        break;
      case KOKORO_EVENT_WORD:
        CHECK(in_segment, "word outside a segment (event %zu)", i);
        CHECK(e->text_begin < e->text_end && e->text_end <= len, "word text %zu..%zu of %zu", e->text_begin,
              e->text_end, len);
        CHECK(e->text_begin >= seg_begin && e->text_end <= seg_end, "word %zu..%zu outside its segment %llu..%llu",
              e->text_begin, e->text_end, (unsigned long long)seg_begin, (unsigned long long)seg_end);
        CHECK(e->text_begin >= prev_word_text_end, "words out of text order at event %zu", i);
        prev_word_text_end = e->text_end;
        words++;
        break;
      case KOKORO_EVENT_SEGMENT_END:
        CHECK(in_segment, "segment end outside a segment (event %zu)", i);
        in_segment = 0;
        break;
      case KOKORO_EVENT_UTTERANCE_END:
        CHECK(i == c->n_events - 1, "utterance end is event %zu of %zu", i, c->n_events);
        CHECK(e->start_sample == c->count, "utterance end at %llu, audio %zu", (unsigned long long)e->start_sample,
              c->count);
        break;
      default:
        CHECK(0, "unexpected event kind %d", e->kind);
    }
  }
  if (complete) {
    CHECK(c->events[c->n_events - 1].kind == KOKORO_EVENT_UTTERANCE_END, "last event is %d",
          c->events[c->n_events - 1].kind);
    CHECK(segments >= 1 && words >= 3, "%zu segments, %zu words", segments, words);
  }
}

/* ------------------------------------------------------------------------------------------ speak */

typedef struct stopper {
  capture* c;
  size_t after_samples;
  int rc;
  int speak_returned; /* set (under c->mutex) when kokoro_speak has returned: the stopper must not wait on */
  int fired;          /* whether kokoro_stop was called */
} stopper;

/* Waits until the speech has produced `after_samples`, then barges in from this (non-engine) thread. */
static void* stopper_main(void* arg) {
  stopper* s = (stopper*)arg;
  pthread_mutex_lock(&s->c->mutex);
  while (s->c->count < s->after_samples && !s->speak_returned) pthread_cond_wait(&s->c->cond, &s->c->mutex);
  if (s->speak_returned) { /* the speech ended before the barge-in point: nothing to stop (a failure below) */
    pthread_mutex_unlock(&s->c->mutex);
    return NULL;
  }
  pthread_mutex_unlock(&s->c->mutex);
  s->fired = 1;
  s->rc = kokoro_stop(s->c->engine);
  pthread_mutex_lock(&s->c->mutex);
  s->c->stop_requested = 1;
  pthread_mutex_unlock(&s->c->mutex);
  return NULL;
}

static const char* kSentence = "The quick brown fox jumps over the lazy dog, and then it runs away.";
static const char* kLong =
    "This second utterance is deliberately long, so that it is still being spoken when another thread asks "
    "the engine to stop. It goes on for several sentences. Each one is synthesized while the previous one "
    "plays. None of the later ones should ever be heard, because the barge-in comes during the first.";

static int scenario_speak(void) {
  kokoro_config cfg;
  kokoro_engine* e;
  const char* const* names = NULL;
  size_t n_names = 0, i;
  int found = 0, rc;
  capture c;
  stopper s;
  pthread_t thread;

  printf("kokoro %s\n", kokoro_version());
  CHECK(kokoro_version() != NULL && strlen(kokoro_version()) > 0, "no version");

  memset(&cfg, 0, sizeof cfg); /* zero-initialised config: every default */
  e = kokoro_open(&cfg);
  REQUIRE(e != NULL, "kokoro_open(defaults): %s", kokoro_last_error());

  rc = kokoro_list_voices(e, &names, &n_names);
  CHECK(rc == KOKORO_OK, "list voices: %d %s", rc, kokoro_last_error());
  CHECK(n_names >= 1, "no voices");
  for (i = 0; i < n_names; i++)
    if (strcmp(names[i], "af_heart") == 0) found = 1;
  CHECK(found, "af_heart is not among the %zu voices", n_names);

  /* 1. A sentence into a buffer, with every event. */
  capture_init(&c, e);
  rc = kokoro_speak(e, kSentence, NULL, on_audio, on_event, &c);
  CHECK(rc == KOKORO_OK, "speak: %d %s", rc, kokoro_last_error());
  printf("sentence: %zu samples (%.2f s), %zu events, rms %.4f\n", c.count, (double)c.count / KOKORO_SAMPLE_RATE,
         c.n_events, rms(c.samples, c.count));
  CHECK(c.count > KOKORO_SAMPLE_RATE, "only %zu samples (need > 1 s)", c.count);
  CHECK(c.nonfinite == 0, "%d non-finite samples", c.nonfinite);
  CHECK(rms(c.samples, c.count) > 0.01, "audio is (nearly) silent: rms %f", rms(c.samples, c.count));
  check_events(&c, kSentence, 1);
  capture_free(&c);

  /* 2. Barge-in from another thread once 0.5 s of the long utterance has come. */
  capture_init(&c, e);
  s.c = &c;
  s.after_samples = KOKORO_SAMPLE_RATE / 2;
  s.rc = -100;
  s.speak_returned = 0;
  s.fired = 0;
  REQUIRE(pthread_create(&thread, NULL, stopper_main, &s) == 0, "pthread_create");
  rc = kokoro_speak(e, kLong, NULL, on_audio, on_event, &c);
  pthread_mutex_lock(&c.mutex);
  s.speak_returned = 1; /* wakes a stopper still waiting: a speech that ended early must not hang the test */
  pthread_cond_broadcast(&c.cond);
  pthread_mutex_unlock(&c.mutex);
  CHECK(pthread_join(thread, NULL) == 0, "pthread_join");
  CHECK(s.fired, "kokoro_speak returned %d (%s) after %zu samples, before the barge-in point", rc,
        kokoro_last_error(), c.count);
  printf("stopped: %zu samples (%.2f s) before the stop, %zu after it\n", c.count, (double)c.count / KOKORO_SAMPLE_RATE,
         c.samples_after_stop);
  CHECK(rc == KOKORO_STOPPED, "stopped speak returned %d (%s)", rc, kokoro_last_error());
  CHECK(s.rc == KOKORO_OK, "kokoro_stop returned %d", s.rc);
  /* Callbacks run one at a time on the engine's output thread: one may have been under way when kokoro_stop
   * returned (and have reached this test's lock later); none may start afterwards. */
  CHECK(c.callbacks_after_stop <= 1, "%zu callbacks (%zu samples) after kokoro_stop returned",
        c.callbacks_after_stop, c.samples_after_stop);
  CHECK(c.n_events == 0 || c.events[c.n_events - 1].kind != KOKORO_EVENT_UTTERANCE_END, "a stopped utterance ended");
  /* The whole text is ~18 s of speech: far more than what came before the stop. */
  CHECK(c.count < 10 * KOKORO_SAMPLE_RATE, "%zu samples: the stop did not cut the utterance", c.count);
  check_events(&c, kLong, 0);
  capture_free(&c);

  /* 3. Stop from inside the audio callback (nonzero return). */
  capture_init(&c, e);
  c.stop_from_callback_at = KOKORO_SAMPLE_RATE / 4;
  rc = kokoro_speak(e, kLong, NULL, on_audio, on_event, &c);
  CHECK(rc == KOKORO_STOPPED, "callback-stopped speak returned %d (%s)", rc, kokoro_last_error());
  CHECK(c.count >= KOKORO_SAMPLE_RATE / 4 && c.count < 10 * KOKORO_SAMPLE_RATE, "%zu samples", c.count);
  capture_free(&c);

  /* 4. The engine speaks normally after barge-ins, with other options (another voice, speed, mode). */
  {
    kokoro_speak_options o;
    memset(&o, 0, sizeof o);
    o.size = sizeof o;
    o.voice = n_names > 1 ? names[1] : names[0];
    o.speed = 1.25f;
    o.mode = "exact";
    capture_init(&c, e);
    rc = kokoro_speak(e, "Speaking again after the barge-in.", &o, on_audio, on_event, &c);
    CHECK(rc == KOKORO_OK, "speak after stop: %d %s", rc, kokoro_last_error());
    CHECK(c.count > KOKORO_SAMPLE_RATE / 2, "%zu samples", c.count);
    check_events(&c, "Speaking again after the barge-in.", 1);
    capture_free(&c);
  }

  /* 5. A Mandarin voice with no language speaks Mandarin (the language comes from the voice name). */
  {
    static const char* kMandarin = "你好，世界。今天天气很好。";
    kokoro_speak_options o;
    memset(&o, 0, sizeof o);
    o.size = sizeof o;
    o.voice = "zf_xiaobei";
    capture_init(&c, e);
    rc = kokoro_speak(e, kMandarin, &o, on_audio, on_event, &c);
    CHECK(rc == KOKORO_OK, "Mandarin speak: %d %s", rc, kokoro_last_error());
    CHECK(c.count > KOKORO_SAMPLE_RATE, "Mandarin: %zu samples", c.count);
    CHECK(c.count == 0 || rms(c.samples, c.count) > 0.01, "Mandarin: silent");
    check_events(&c, kMandarin, 1);
    capture_free(&c);
  }

  /* kokoro_stop with nothing running does nothing. */
  CHECK(kokoro_stop(e) == KOKORO_OK, "idle stop: %s", kokoro_last_error());
  kokoro_close(e);
  return g_failures ? 1 : 0;
}

/* ------------------------------------------------------------------------------------------ errors */

#define EXPECT_STATUS(call, expected)                                                                     \
  do {                                                                                                    \
    int got_ = (call);                                                                                    \
    CHECK(got_ == (expected), "%s returned %d (%s), expected %d", #call, got_, kokoro_last_error(), (expected)); \
    if (got_ < 0) CHECK(strlen(kokoro_last_error()) > 0, "%s: no message", #call);                       \
    if (got_ < 0) printf("  %-24s %s\n", kokoro_status_string(got_), kokoro_last_error());               \
  } while (0)

typedef struct busy_probe {
  kokoro_engine* engine;
  int rc;
  int probed;
} busy_probe;

/* Inside a speech: a second kokoro_speak on the same engine must return BUSY, not deadlock. */
static int busy_on_audio(const float* samples, size_t n, void* user) {
  busy_probe* p = (busy_probe*)user;
  (void)samples;
  (void)n;
  if (!p->probed) {
    p->probed = 1;
    p->rc = kokoro_speak(p->engine, "Nested.", NULL, NULL, NULL, NULL);
  }
  return 1; /* and stop */
}

static int scenario_errors(void) {
  kokoro_config cfg;
  kokoro_speak_options o;
  kokoro_engine* e;
  kokoro_engine* closed;
  const char* const* names = NULL;
  size_t count = 0;
  busy_probe probe;

  /* Opening. */
  memset(&cfg, 0, sizeof cfg);
  cfg.size = sizeof cfg + 8;
  CHECK(kokoro_open(&cfg) == NULL, "open with a wrong struct size succeeded");
  CHECK(strstr(kokoro_last_error(), "size") != NULL, "message: %s", kokoro_last_error());
  cfg.size = 3;
  CHECK(kokoro_open(&cfg) == NULL, "open with size 3 succeeded");
  memset(&cfg, 0, sizeof cfg);
  cfg.model_path = "/nonexistent/model.kokoro";
  CHECK(kokoro_open(&cfg) == NULL, "open with a missing model succeeded");
  CHECK(strstr(kokoro_last_error(), "/nonexistent/model.kokoro") != NULL, "message: %s", kokoro_last_error());
  memset(&cfg, 0, sizeof cfg);
  cfg.assets_dir = "/nonexistent/assets";
  CHECK(kokoro_open(&cfg) == NULL, "open with missing assets succeeded");
  CHECK(strstr(kokoro_last_error(), "/nonexistent/assets") != NULL, "message: %s", kokoro_last_error());
  memset(&cfg, 0, sizeof cfg);
  cfg.threads = -1;
  CHECK(kokoro_open(&cfg) == NULL, "open with threads -1 succeeded");
  memset(&cfg, 0, sizeof cfg);
  cfg.precision = "fp8";
  CHECK(kokoro_open(&cfg) == NULL, "open with precision fp8 succeeded");
  CHECK(strstr(kokoro_last_error(), "fp8") != NULL, "message: %s", kokoro_last_error());

  /* NULL and closed engines. */
  EXPECT_STATUS(kokoro_speak(NULL, "Hello.", NULL, NULL, NULL, NULL), KOKORO_ERR_INVALID_HANDLE);
  EXPECT_STATUS(kokoro_stop(NULL), KOKORO_ERR_INVALID_HANDLE);
  EXPECT_STATUS(kokoro_list_voices(NULL, &names, &count), KOKORO_ERR_INVALID_HANDLE);
  kokoro_close(NULL);
  CHECK(strlen(kokoro_last_error()) > 0, "close(NULL) set no message");

  e = kokoro_open(NULL); /* NULL config: every default */
  REQUIRE(e != NULL, "kokoro_open(NULL): %s", kokoro_last_error());
  closed = kokoro_open(NULL);
  REQUIRE(closed != NULL, "second kokoro_open: %s", kokoro_last_error());
  kokoro_close(closed);
  EXPECT_STATUS(kokoro_speak(closed, "Hello.", NULL, NULL, NULL, NULL), KOKORO_ERR_INVALID_HANDLE);
  EXPECT_STATUS(kokoro_stop(closed), KOKORO_ERR_INVALID_HANDLE);
  EXPECT_STATUS(kokoro_list_voices(closed, &names, &count), KOKORO_ERR_INVALID_HANDLE);
  kokoro_close(closed); /* twice: harmless */
  {
    /* A pointer that never came from kokoro_open (never dereferenced by the library). */
    int not_an_engine = 0;
    EXPECT_STATUS(kokoro_speak((kokoro_engine*)&not_an_engine, "Hello.", NULL, NULL, NULL, NULL),
                  KOKORO_ERR_INVALID_HANDLE);
  }

  /* Arguments. */
  EXPECT_STATUS(kokoro_list_voices(e, NULL, &count), KOKORO_ERR_INVALID_ARGUMENT);
  EXPECT_STATUS(kokoro_list_voices(e, &names, NULL), KOKORO_ERR_INVALID_ARGUMENT);
  EXPECT_STATUS(kokoro_speak(e, NULL, NULL, NULL, NULL, NULL), KOKORO_ERR_INVALID_ARGUMENT);
  EXPECT_STATUS(kokoro_speak(e, "", NULL, NULL, NULL, NULL), KOKORO_ERR_INVALID_ARGUMENT);
  EXPECT_STATUS(kokoro_speak(e, "caf\xc3", NULL, NULL, NULL, NULL), KOKORO_ERR_INVALID_TEXT);       /* truncated */
  EXPECT_STATUS(kokoro_speak(e, "\xff\xfe hello", NULL, NULL, NULL, NULL), KOKORO_ERR_INVALID_TEXT); /* not UTF-8 */
  EXPECT_STATUS(kokoro_speak(e, "\xc0\xaf", NULL, NULL, NULL, NULL), KOKORO_ERR_INVALID_TEXT);       /* overlong */
  EXPECT_STATUS(kokoro_speak(e, "\xed\xa0\x80", NULL, NULL, NULL, NULL), KOKORO_ERR_INVALID_TEXT);   /* surrogate */

  memset(&o, 0, sizeof o);
  o.voice = "no_such_voice";
  EXPECT_STATUS(kokoro_speak(e, "Hello.", &o, NULL, NULL, NULL), KOKORO_ERR_VOICE);
  CHECK(strstr(kokoro_last_error(), "no_such_voice") != NULL, "message: %s", kokoro_last_error());
  o.voice = "";
  EXPECT_STATUS(kokoro_speak(e, "Hello.", &o, NULL, NULL, NULL), KOKORO_ERR_VOICE);
  o.voice = "af_heart:nan,af_bella";
  {
    int rc = kokoro_speak(e, "Hello.", &o, NULL, NULL, NULL);
    CHECK(rc == KOKORO_ERR_VOICE || rc == KOKORO_OK, "blend with a bad weight returned %d", rc);
  }
  memset(&o, 0, sizeof o);
  o.language = "xx-klingon";
  EXPECT_STATUS(kokoro_speak(e, "Hello.", &o, NULL, NULL, NULL), KOKORO_ERR_LANGUAGE);
  memset(&o, 0, sizeof o);
  o.mode = "warp";
  EXPECT_STATUS(kokoro_speak(e, "Hello.", &o, NULL, NULL, NULL), KOKORO_ERR_INVALID_ARGUMENT);
  CHECK(strstr(kokoro_last_error(), "warp") != NULL, "message: %s", kokoro_last_error());
  memset(&o, 0, sizeof o);
  o.speed = 10.0f;
  EXPECT_STATUS(kokoro_speak(e, "Hello.", &o, NULL, NULL, NULL), KOKORO_ERR_INVALID_ARGUMENT);
  o.speed = -1.0f;
  EXPECT_STATUS(kokoro_speak(e, "Hello.", &o, NULL, NULL, NULL), KOKORO_ERR_INVALID_ARGUMENT);
  o.speed = NAN;
  EXPECT_STATUS(kokoro_speak(e, "Hello.", &o, NULL, NULL, NULL), KOKORO_ERR_INVALID_ARGUMENT);
  memset(&o, 0, sizeof o);
  o.size = sizeof o + 16;
  EXPECT_STATUS(kokoro_speak(e, "Hello.", &o, NULL, NULL, NULL), KOKORO_ERR_STRUCT_SIZE);
  o.size = 1;
  EXPECT_STATUS(kokoro_speak(e, "Hello.", &o, NULL, NULL, NULL), KOKORO_ERR_STRUCT_SIZE);

  /* A second speak while one runs. */
  probe.engine = e;
  probe.rc = -100;
  probe.probed = 0;
  EXPECT_STATUS(kokoro_speak(e, "A sentence that is long enough to be busy for a while.", NULL, busy_on_audio, NULL,
                             &probe),
                KOKORO_STOPPED);
  CHECK(probe.probed && probe.rc == KOKORO_ERR_BUSY, "nested speak returned %d", probe.rc);

  /* After all of that the engine still works; NULL callbacks are allowed. */
  EXPECT_STATUS(kokoro_speak(e, "Still fine.", NULL, NULL, NULL, NULL), KOKORO_OK);
  CHECK(strcmp(kokoro_status_string(KOKORO_ERR_VOICE), "voice not found") == 0, "status string");
  CHECK(strcmp(kokoro_status_string(12345), "unknown status") == 0, "unknown status string");
  kokoro_close(e);
  return g_failures ? 1 : 0;
}

/* ------------------------------------------------------------------------------------------ fuzz */

static uint64_t g_rng = 0x9E3779B97F4A7C15ull;
static uint64_t next_random(void) { /* xorshift64* */
  g_rng ^= g_rng >> 12;
  g_rng ^= g_rng << 25;
  g_rng ^= g_rng >> 27;
  return g_rng * 0x2545F4914F6CDD1Dull;
}

static int stop_at_once(const float* samples, size_t n, void* user) {
  (void)samples;
  (void)n;
  (void)user;
  return 1;
}

static int is_documented(int rc) { return rc == KOKORO_OK || rc == KOKORO_STOPPED || (rc <= -1 && rc >= -10); }

static int scenario_fuzz(int iterations) {
  static const char* voices[] = {NULL, "af_heart", "", "nope", "af_heart:0.5,am_michael:0.5", "/etc/passwd", "a,b,"};
  static const char* langs[] = {NULL, "en-us", "en-gb", "", "zz", "es"};
  static const char* modes[] = {NULL, "exact", "stream", "slice", "", "EXACT"}; /* "stream": retired, an error */
  static const float speeds[] = {0.0f, 1.0f, 0.25f, 4.0f, 4.5f, -0.0f, 0.1f, 1e30f};
  static const char* texts[] = {"Hi.", "1 2 3", "!!!", " ", "\t\n", "e\xcc\x81t\xc3\xa9.", "\xe2\x80\x8b"};
  kokoro_engine* e = kokoro_open(NULL);
  int i, spoken = 0;
  char buf[64];
  REQUIRE(e != NULL, "kokoro_open: %s", kokoro_last_error());
  for (i = 0; i < iterations; i++) {
    kokoro_speak_options o;
    const char* text;
    int rc;
    const uint64_t r = next_random();
    memset(&o, 0, sizeof o);
    o.size = (r & 7) == 0 ? (size_t)(next_random() % 128) : sizeof o;
    o.voice = voices[next_random() % (sizeof voices / sizeof *voices)];
    o.language = langs[next_random() % (sizeof langs / sizeof *langs)];
    o.mode = modes[next_random() % (sizeof modes / sizeof *modes)];
    o.speed = speeds[next_random() % (sizeof speeds / sizeof *speeds)];
    o.phonemes = (int)(next_random() % 4 == 0);
    if ((r >> 8) % 3 == 0) {
      /* random bytes, mostly invalid UTF-8 */
      size_t n = 1 + next_random() % (sizeof buf - 1), k;
      for (k = 0; k < n; k++) buf[k] = (char)(1 + next_random() % 255);
      buf[n] = 0;
      text = buf;
    } else {
      text = texts[next_random() % (sizeof texts / sizeof *texts)];
    }
    rc = kokoro_speak((r >> 16) % 17 == 0 ? NULL : e, (r >> 24) % 13 == 0 ? NULL : text, (r >> 32) % 5 == 0 ? NULL : &o,
                      stop_at_once, NULL, NULL);
    CHECK(is_documented(rc), "iteration %d returned %d", i, rc);
    if (rc < 0) CHECK(strlen(kokoro_last_error()) > 0, "iteration %d: code %d without a message", i, rc);
    if (rc >= 0) spoken++;
  }
  printf("fuzz: %d calls, %d accepted, no crash\n", iterations, spoken);
  kokoro_close(e);
  return g_failures ? 1 : 0;
}

/* ------------------------------------------------------------------------------------------ phonemize */

static int count_lines(const char* s) {
  int n = *s ? 1 : 0;
  for (; *s; s++) n += *s == '\n';
  return n;
}

static int scenario_phonemize(void) {
  kokoro_model* m = kokoro_model_open(NULL);
  kokoro_session* session;
  kokoro_speak_options opts;
  const char* ph = NULL;
  char first[1024];
  int rc;
  capture c;
  REQUIRE(m != NULL, "kokoro_model_open(defaults): %s", kokoro_last_error());

  rc = kokoro_model_phonemize(m, "Hello world.\nHow are you?", NULL, &ph);
  REQUIRE(rc == KOKORO_OK && ph != NULL, "phonemize: %d %s", rc, kokoro_last_error());
  printf("phonemize: \"%s\"\n", ph);
  CHECK(count_lines(ph) == 2, "two lines, two segments: \"%s\"", ph);
  CHECK(strstr(ph, "wˈɜɹld") != NULL, "no \"world\" (wˈɜɹld) in \"%s\"", ph);
  rc = kokoro_model_phonemize(m, "Bonjour.", "fr-fr", &ph);
  CHECK(rc == KOKORO_OK && strlen(ph) > 0, "French: %d %s", rc, kokoro_last_error());
  rc = kokoro_model_phonemize(m, " ", NULL, &ph);
  CHECK(rc == KOKORO_OK && strcmp(ph, "") == 0, "nothing to say: %d \"%s\"", rc, ph);

  /* Its output is phoneme input: the first line spoken with phonemes = 1 gives speech. */
  rc = kokoro_model_phonemize(m, "Hello world.\nHow are you?", NULL, &ph);
  REQUIRE(rc == KOKORO_OK, "phonemize: %s", kokoro_last_error());
  snprintf(first, sizeof first, "%.*s", (int)strcspn(ph, "\n"), ph);
  session = kokoro_session_new(m, NULL);
  REQUIRE(session != NULL, "session: %s", kokoro_last_error());
  memset(&opts, 0, sizeof opts);
  opts.phonemes = 1;
  capture_init(&c, NULL);
  rc = kokoro_session_speak(session, first, &opts, on_audio, NULL, &c);
  CHECK(rc == KOKORO_OK && c.count > KOKORO_SAMPLE_RATE / 2, "speaking \"%s\": %d, %zu samples", first, rc, c.count);
  capture_free(&c);
  kokoro_session_close(session);

  /* The assets directory it reads: where config.json is. */
  {
    const char* dir = NULL;
    char path[4096];
    FILE* f;
    CHECK(kokoro_model_assets_dir(m, &dir) == KOKORO_OK && dir != NULL, "assets dir: %s", kokoro_last_error());
    snprintf(path, sizeof path, "%s/config.json", dir ? dir : "");
    f = fopen(path, "rb");
    CHECK(f != NULL, "no %s", path);
    if (f) fclose(f);
    CHECK(kokoro_model_assets_dir(m, NULL) == KOKORO_ERR_INVALID_ARGUMENT, "NULL dir");
  }

  /* Errors: the documented codes, with messages. */
  CHECK(kokoro_model_phonemize(m, "Hi.", "tlh", &ph) == KOKORO_ERR_LANGUAGE, "unknown language");
  CHECK(strstr(kokoro_last_error(), "tlh") != NULL, "message: %s", kokoro_last_error());
  CHECK(kokoro_model_phonemize(m, "caf\xe9", NULL, &ph) == KOKORO_ERR_INVALID_TEXT, "invalid UTF-8");
  CHECK(kokoro_model_phonemize(m, NULL, NULL, &ph) == KOKORO_ERR_INVALID_ARGUMENT, "NULL text");
  CHECK(kokoro_model_phonemize(m, "Hi.", NULL, NULL) == KOKORO_ERR_INVALID_ARGUMENT, "NULL result");
  CHECK(kokoro_model_phonemize(NULL, "Hi.", NULL, &ph) == KOKORO_ERR_INVALID_HANDLE, "NULL model");
  kokoro_model_close(m);
  CHECK(kokoro_model_phonemize(m, "Hi.", NULL, &ph) == KOKORO_ERR_INVALID_HANDLE, "closed model");
  return g_failures ? 1 : 0;
}

int main(int argc, char** argv) {
  if (argc < 2) {
    fprintf(stderr, "usage: %s speak|errors|fuzz|phonemize [iterations]\n", argv[0]);
    return 2;
  }
  if (strcmp(argv[1], "speak") == 0) return scenario_speak();
  if (strcmp(argv[1], "errors") == 0) return scenario_errors();
  if (strcmp(argv[1], "fuzz") == 0) return scenario_fuzz(argc > 2 ? atoi(argv[2]) : 150);
  if (strcmp(argv[1], "phonemize") == 0) return scenario_phonemize();
  fprintf(stderr, "unknown scenario %s\n", argv[1]);
  return 2;
}
