/* The C API's model/session split (include/kokoro.h) as a C program sees it (C99, -Wpedantic, shared libkokoro):
 *
 *   1. one model, four sessions with different voices, languages, speeds and seeds; each speaks alone, then all
 *      four speak at once on four threads: every session's audio is identical to its audio alone
 *   2. kokoro_model_load while they speak: sessions, speaking, demand, capacity, admit are consistent
 *   3. a session stopped (kokoro_session_stop) and then closed while another speaks: the other's audio is
 *      identical to its audio alone, the stopped call returns KOKORO_STOPPED
 *   4. session defaults: a session made with {voice bf_emma, speed 1.1} speaking with NULL options sounds as
 *      another session given those options per call
 *   5. handles: the model closed while sessions live (they keep working; the model handle is refused); NULL,
 *      closed and foreign session/model handles give KOKORO_ERR_INVALID_HANDLE; bad defaults are refused
 *
 * Run under ThreadSanitizer by scripts/sanitize.sh. Needs the converted model and the assets; fails without. */
#define _POSIX_C_SOURCE 200809L
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kokoro.h"

#include "capi_buffer.h"
#include "capi_check.h"

static int on_audio(const float* samples, size_t n, void* user) {
  buffer_append((buffer*)user, samples, n);
  return 0;
}

typedef struct line {
  const char* voice;
  const char* language;
  float speed;
  uint64_t seed;
  const char* text;
} line;

static const line kLines[4] = {
    {"af_heart", NULL, 1.0f, 7, "The lamp flickered twice. Then it went dark."},
    {"bf_emma", "en-gb", 1.2f, 11, "Good morning! The kettle is on."},
    {"am_michael", NULL, 0.9f, 3, "Turn left at the next light, then keep right."},
    {"ef_dora", NULL, 1.0f, 5, "Hola, buenos días. ¿Qué tal estás?"},
};

static kokoro_speak_options options_of(const line* l) {
  kokoro_speak_options o;
  memset(&o, 0, sizeof o);
  o.size = sizeof o;
  o.voice = l->voice;
  o.language = l->language;
  o.speed = l->speed;
  o.seed = l->seed;
  return o;
}

typedef struct job {
  kokoro_session* session;
  const line* l;
  buffer out;
  int rc;
  /* 3: stop this job's session once `stop_after` samples have come (0: never) */
  size_t stop_after;
  kokoro_session* stop_target;
} job;

static int job_on_audio(const float* samples, size_t n, void* user) {
  job* j = (job*)user;
  on_audio(samples, n, &j->out);
  if (j->stop_after > 0 && j->out.count >= j->stop_after && j->stop_target) {
    CHECK(kokoro_session_stop(j->stop_target) == KOKORO_OK, "stop: %s", kokoro_last_error());
    j->stop_target = NULL;
  }
  return 0;
}

static void* job_main(void* arg) {
  job* j = (job*)arg;
  kokoro_speak_options o = options_of(j->l);
  j->rc = kokoro_session_speak(j->session, j->l->text, &o, job_on_audio, NULL, j);
  return NULL;
}

static int scenario_sessions(void) {
  kokoro_config cfg;
  kokoro_model* m;
  kokoro_session* s[4];
  buffer alone[4];
  job jobs[4];
  pthread_t threads[4];
  kokoro_load load;
  int i, rc;

  memset(&cfg, 0, sizeof cfg);
  m = kokoro_model_open(&cfg);
  REQUIRE(m != NULL, "kokoro_model_open: %s", kokoro_last_error());
  for (i = 0; i < 4; i++) {
    s[i] = kokoro_session_new(m, NULL);
    REQUIRE(s[i] != NULL, "kokoro_session_new: %s", kokoro_last_error());
  }
  memset(&load, 0, sizeof load);
  load.size = sizeof load;
  CHECK(kokoro_model_load(m, &load) == KOKORO_OK, "load: %s", kokoro_last_error());
  CHECK(load.sessions == 4 && load.speaking == 0, "idle: %d sessions, %d speaking", load.sessions, load.speaking);
  CHECK(load.capacity >= 1 && load.admit, "idle: capacity %.2f, admit %d", load.capacity, load.admit);

  /* 1. Each alone, then all four at once. */
  for (i = 0; i < 4; i++) {
    kokoro_speak_options o = options_of(&kLines[i]);
    memset(&alone[i], 0, sizeof alone[i]);
    rc = kokoro_session_speak(s[i], kLines[i].text, &o, on_audio, NULL, &alone[i]);
    CHECK(rc == KOKORO_OK, "alone %d: %d %s", i, rc, kokoro_last_error());
    CHECK(alone[i].count > KOKORO_SAMPLE_RATE / 2, "alone %d: %zu samples", i, alone[i].count);
  }
  for (i = 0; i < 4; i++) {
    memset(&jobs[i], 0, sizeof jobs[i]);
    jobs[i].session = s[i];
    jobs[i].l = &kLines[i];
    jobs[i].rc = -100;
    REQUIRE(pthread_create(&threads[i], NULL, job_main, &jobs[i]) == 0, "pthread_create");
  }
  /* 2. Load while they speak (some may have finished already: speaking <= 4). */
  CHECK(kokoro_model_load(m, &load) == KOKORO_OK, "load: %s", kokoro_last_error());
  CHECK(load.sessions == 4 && load.speaking >= 0 && load.speaking <= 4, "busy: %d sessions, %d speaking", load.sessions,
        load.speaking);
  CHECK(load.demand >= 0 && load.capacity >= 1, "busy: demand %.2f capacity %.2f", load.demand, load.capacity);
  printf("during 4 streams: %d speaking, demand %.2f of %.2f slots, admit %d\n", load.speaking, load.demand,
         load.capacity, load.admit);
  for (i = 0; i < 4; i++) CHECK(pthread_join(threads[i], NULL) == 0, "join");
  for (i = 0; i < 4; i++) {
    CHECK(jobs[i].rc == KOKORO_OK, "together %d: %d", i, jobs[i].rc);
    CHECK(same(&jobs[i].out, &alone[i]), "session %d (%s): %zu samples together, %zu alone, or different samples", i,
          kLines[i].voice, jobs[i].out.count, alone[i].count);
    free(jobs[i].out.samples);
  }
  CHECK(kokoro_model_load(m, &load) == KOKORO_OK && load.speaking == 0, "after: %d speaking", load.speaking);

  /* 3. Session 1 stopped mid-way by session 0's callback, then closed, while session 0 speaks on. */
  memset(&jobs[0], 0, sizeof jobs[0]);
  memset(&jobs[1], 0, sizeof jobs[1]);
  jobs[0].session = s[0];
  jobs[0].l = &kLines[0];
  jobs[0].stop_after = KOKORO_SAMPLE_RATE / 4;
  jobs[0].stop_target = s[1];
  jobs[1].session = s[1];
  jobs[1].l = &kLines[2]; /* a longer line: still speaking when the stop comes, mostly */
  REQUIRE(pthread_create(&threads[1], NULL, job_main, &jobs[1]) == 0, "pthread_create");
  REQUIRE(pthread_create(&threads[0], NULL, job_main, &jobs[0]) == 0, "pthread_create");
  CHECK(pthread_join(threads[1], NULL) == 0, "join");
  CHECK(jobs[1].rc == KOKORO_STOPPED || jobs[1].rc == KOKORO_OK, "stopped session returned %d", jobs[1].rc);
  kokoro_session_close(s[1]);
  s[1] = NULL;
  CHECK(pthread_join(threads[0], NULL) == 0, "join");
  CHECK(jobs[0].rc == KOKORO_OK, "the other session: %d %s", jobs[0].rc, kokoro_last_error());
  CHECK(same(&jobs[0].out, &alone[0]), "the other session's audio changed: %zu samples, %zu alone", jobs[0].out.count,
        alone[0].count);
  printf("stopped session: %s after %zu samples\n", jobs[1].rc == KOKORO_STOPPED ? "stopped" : "finished first",
         jobs[1].out.count);
  free(jobs[0].out.samples);
  free(jobs[1].out.samples);

  /* 4. Session defaults. */
  {
    kokoro_speak_options d, o;
    buffer a, b;
    kokoro_session* with_defaults;
    memset(&d, 0, sizeof d);
    d.size = sizeof d;
    d.voice = "bf_emma";
    d.speed = 1.1f;
    with_defaults = kokoro_session_new(m, &d);
    REQUIRE(with_defaults != NULL, "session with defaults: %s", kokoro_last_error());
    memset(&a, 0, sizeof a);
    memset(&b, 0, sizeof b);
    CHECK(kokoro_session_speak(with_defaults, "Mind the gap.", NULL, on_audio, NULL, &a) == KOKORO_OK, "%s",
          kokoro_last_error());
    o = d;
    CHECK(kokoro_session_speak(s[2], "Mind the gap.", &o, on_audio, NULL, &b) == KOKORO_OK, "%s", kokoro_last_error());
    CHECK(a.count > 0 && same(&a, &b), "defaults: %zu samples, per call %zu", a.count, b.count);
    kokoro_session_close(with_defaults);
    free(a.samples);
    free(b.samples);
  }

  /* 5. Handles. */
  {
    kokoro_speak_options bad;
    const char* const* names = NULL;
    size_t n = 0;
    buffer c;
    memset(&bad, 0, sizeof bad);
    bad.voice = "no_such_voice";
    CHECK(kokoro_session_new(m, &bad) == NULL, "a session with an unknown voice was made");
    CHECK(strstr(kokoro_last_error(), "no_such_voice") != NULL, "message: %s", kokoro_last_error());
    bad.voice = NULL;
    bad.mode = "warp";
    CHECK(kokoro_session_new(m, &bad) == NULL, "a session with an unknown mode was made");
    CHECK(kokoro_session_new(NULL, NULL) == NULL, "a session on a NULL model");
    CHECK(kokoro_session_speak(NULL, "Hi.", NULL, NULL, NULL, NULL) == KOKORO_ERR_INVALID_HANDLE, "NULL session");
    CHECK(kokoro_session_stop((kokoro_session*)&bad) == KOKORO_ERR_INVALID_HANDLE, "foreign session");
    CHECK(kokoro_model_list_voices(m, &names, &n) == KOKORO_OK && n >= 4, "voices: %zu", n);
    kokoro_model_close(m); /* sessions keep the model alive */
    CHECK(kokoro_model_list_voices(m, &names, &n) == KOKORO_ERR_INVALID_HANDLE, "closed model still answers");
    CHECK(kokoro_session_new(m, NULL) == NULL, "a session on a closed model");
    kokoro_model_close(m); /* harmless */
    memset(&c, 0, sizeof c);
    CHECK(kokoro_session_speak(s[3], "Still here.", NULL, on_audio, NULL, &c) == KOKORO_OK, "after model close: %s",
          kokoro_last_error());
    CHECK(c.count > KOKORO_SAMPLE_RATE / 4, "after model close: %zu samples", c.count);
    free(c.samples);
  }
  for (i = 0; i < 4; i++) {
    if (s[i]) kokoro_session_close(s[i]);
    free(alone[i].samples);
  }
  kokoro_session_close(s[0]); /* closed already: harmless */
  CHECK(kokoro_session_speak(s[0], "Hi.", NULL, NULL, NULL, NULL) == KOKORO_ERR_INVALID_HANDLE, "closed session");
  return g_failures ? 1 : 0;
}

int main(void) { return scenario_sessions(); }
