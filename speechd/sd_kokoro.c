/* sd_kokoro: a speech-dispatcher (0.11) output module on libkokoro's C API (include/kokoro.h).
 *
 * speech-dispatcher starts the module with its configuration file as argv[1] and talks to it over
 * stdin/stdout with its module protocol (lines; multi-line replies "NNN-..." ended by "NNN ..."):
 *
 *   INIT                        299-<message> / 299 OK LOADED SUCCESSFULLY      (the model is loaded here)
 *   AUDIO + key=value... + .    207 OK RECEIVING AUDIO SETTINGS / 203 OK AUDIO INITIALIZED
 *                               (only audio_output_method=server: the server plays the audio, so any of its
 *                               audio backends works and the module opens no device)
 *   SET + key=value... + .      207 OK RECEIVING SETTINGS / 203 OK SETTINGS RECEIVED
 *   SPEAK|CHAR|KEY|SOUND_ICON   202 OK RECEIVING MESSAGE, the text + ., 200 OK SPEAKING; then, from the
 *                               speech thread: 701 BEGIN, audio blocks (705), index marks (700-name,
 *                               700 INDEX MARK) where the engine reaches them in the audio, 702 END or
 *                               703 STOP (704 PAUSE after PAUSE)
 *   STOP                        barge-in (kokoro_stop): the speech ends with 703 STOP; no reply of its own
 *   PAUSE                       no reply of its own; the speech goes on up to the server's next index mark
 *                               (__spd_N), sends it and ends there with 704 PAUSE (702 END if the message
 *                               ends first), as speech-dispatcher's own modules do: the server stops its
 *                               playback at that mark and resumes the message from it
 *   LIST VOICES                 200-name\tlanguage\tvariant ... / 200 OK VOICE LIST SENT
 *   LOGLEVEL, DEBUG, QUIT       203 OK LOGLEVEL SET, 200 OK DEBUGGING ..., 210 OK QUIT
 *
 * Audio block (server audio): 705-bits=16, 705-num_channels=1, 705-sample_rate=24000, 705-num_samples=N,
 * 705-big_endian=0, then "705-AUDIO", a NUL, the samples with every '\n' and 0x7d byte escaped as 0x7d
 * followed by the byte xor 0x20, "\n705 AUDIO". Audio leaves as soon as the engine has it (kokoro_speak's
 * callback), so the first block goes out after the engine's first chunk.
 *
 * Text: a SPEAK message is SSML. speech-dispatcher escapes a text-mode message and wraps it in <speak>, and
 * passes an SSML-mode message (spd-say -x) on as the client wrote it, which may lack the <speak> root; both
 * carry its index marks (<mark name="__spd_N"/> after each sentence end, for PAUSE and resume). The module
 * wraps every SPEAK in a <speak> root of its own (a nested <speak> is harmless) and hands it to the engine,
 * whose SSML parser reads it (frontend/ssml.h) and reports each <mark> as KOKORO_EVENT_MARK once the audio
 * before it has gone to the audio callback: the module answers each with 700 right then, so a mark reaches
 * the server after the audio before it and before the audio after it. CHAR and KEY messages are plain text:
 * a character is spelled (CHAR "space" is the blank), a key name read ("shift_a" as "shift a").
 *
 * Settings: rate -100..100 -> speed 0.5..2 (0 = 1); volume -100..100 -> gain; language -> the engine's
 * languages (en-us, en-gb, es, fr-fr, hi, it, pt-br, ja, zh); synthesis_voice = one of LIST VOICES, or the voice
 * types (male1, female1, ...) pick a voice of the language; spelling_mode on spells the text character by
 * character; punctuation is left to the server's symbol preprocessing (as speech-dispatcher's defaults do);
 * pitch is accepted but not applied (Kokoro has no pitch control).
 *
 * Module configuration (dotconf-like, "Key value", # comments): KokoroModel, KokoroAssets, KokoroThreads,
 * KokoroMode (exact|stream|...), KokoroDefaultVoice, KokoroLogFile (timestamps and first-audio times). */
#define _POSIX_C_SOURCE 200809L
#include <ctype.h>
#include <math.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "kokoro.h"

/* ------------------------------------------------------------------------------------- output, log */

static pthread_mutex_t g_out = PTHREAD_MUTEX_INITIALIZER;
static FILE* g_log = NULL;
/* The protocol channel: the original stdout, duplicated, while fd 1 itself goes to stderr, so that nothing
 * printed by a library can ever be taken by the server for protocol. */
static FILE* g_proto = NULL;

static double now_ms(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

static void log_line(const char* fmt, ...) {
  va_list ap;
  if (!g_log) return;
  va_start(ap, fmt);
  fprintf(g_log, "sd_kokoro %.3f: ", now_ms() / 1e3);
  vfprintf(g_log, fmt, ap);
  fputc('\n', g_log);
  fflush(g_log);
  va_end(ap);
}

/* One protocol line (or several, with embedded newlines) to the server, whole. */
static void send_line(const char* fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  pthread_mutex_lock(&g_out);
  vfprintf(g_proto, fmt, ap);
  putc('\n', g_proto);
  fflush(g_proto);
  pthread_mutex_unlock(&g_out);
  va_end(ap);
}

#define MAX_BLOCK_SAMPLES 4096

static void send_audio(const int16_t* pcm, size_t n) {
  const unsigned char* p = (const unsigned char*)pcm;
  const unsigned char* end = p + n * 2;
  pthread_mutex_lock(&g_out);
  fprintf(g_proto, "705-bits=16\n705-num_channels=1\n705-sample_rate=%d\n705-num_samples=%zu\n705-big_endian=0\n705-AUDIO",
          KOKORO_SAMPLE_RATE, n);
  putc(0, g_proto);
  for (; p < end; p++) {
    if (*p == '\n' || *p == 0x7d) {
      putc(0x7d, g_proto);
      putc(*p ^ 0x20, g_proto);
    } else {
      putc(*p, g_proto);
    }
  }
  fputs("\n705 AUDIO\n", g_proto);
  fflush(g_proto);
  pthread_mutex_unlock(&g_out);
}

/* ------------------------------------------------------------------------------------- settings */

typedef struct settings {
  int rate, volume, pitch;
  char language[32];
  char voice[64];      /* synthesis_voice, "" = by language */
  char voice_type[32]; /* male1, female1, ... */
  int spelling;
} settings;

typedef struct module_config {
  char model[1024], assets[1024], mode[32], default_voice[64], log_file[1024];
  int threads;
} module_config;

static module_config g_conf;
static settings g_settings = {0, 0, 0, "en-us", "", "", 0};
static kokoro_engine* g_engine = NULL;
static const char* const* g_voices = NULL;
static size_t g_n_voices = 0;

static void copy_str(char* dst, size_t cap, const char* src) {
  size_t n = strlen(src);
  if (n >= cap) n = cap - 1;
  memcpy(dst, src, n);
  dst[n] = 0;
}

static void read_config(const char* path) {
  FILE* f = fopen(path, "r");
  char line[2048];
  if (!f) return;
  while (fgets(line, sizeof line, f)) {
    char key[64], value[1024];
    char* p = line;
    size_t k = 0, v = 0;
    while (isspace((unsigned char)*p)) p++;
    if (*p == '#' || !*p) continue;
    while (*p && !isspace((unsigned char)*p) && k + 1 < sizeof key) key[k++] = *p++;
    key[k] = 0;
    while (isspace((unsigned char)*p)) p++;
    if (*p == '"') p++;
    while (*p && *p != '"' && *p != '\n' && v + 1 < sizeof value) value[v++] = *p++;
    value[v] = 0;
    if (!strcmp(key, "KokoroModel")) copy_str(g_conf.model, sizeof g_conf.model, value);
    else if (!strcmp(key, "KokoroAssets")) copy_str(g_conf.assets, sizeof g_conf.assets, value);
    else if (!strcmp(key, "KokoroMode")) copy_str(g_conf.mode, sizeof g_conf.mode, value);
    else if (!strcmp(key, "KokoroDefaultVoice")) copy_str(g_conf.default_voice, sizeof g_conf.default_voice, value);
    else if (!strcmp(key, "KokoroLogFile")) copy_str(g_conf.log_file, sizeof g_conf.log_file, value);
    else if (!strcmp(key, "KokoroThreads")) g_conf.threads = atoi(value);
  }
  fclose(f);
}

/* speech-dispatcher language codes (en, en-US, pt-BR, fr...) -> the engine's. NULL: not supported. */
static const char* engine_language(const char* lang) {
  static const struct { const char* prefix; const char* engine; } map[] = {
      {"en-gb", "en-gb"}, {"en-uk", "en-gb"}, {"en", "en-us"}, {"es", "es"}, {"fr", "fr-fr"},
      {"hi", "hi"},       {"it", "it"},       {"pt", "pt-br"}, {"ja", "ja"}, {"zh", "zh"}, {"cmn", "zh"}};
  char low[32];
  size_t i;
  for (i = 0; lang[i] && i + 1 < sizeof low; i++) low[i] = (char)tolower((unsigned char)lang[i]);
  low[i] = 0;
  for (i = 0; i < sizeof map / sizeof *map; i++)
    if (!strncmp(low, map[i].prefix, strlen(map[i].prefix))) return map[i].engine;
  return NULL;
}

/* The voice's language from Kokoro's naming (first letter: a American English, b British, e Spanish, f
 * French, h Hindi, i Italian, j Japanese, p Brazilian Portuguese, z Mandarin). */
static const char* voice_language(const char* voice) {
  switch (voice[0]) {
    case 'a': return "en-US";
    case 'b': return "en-GB";
    case 'e': return "es";
    case 'f': return "fr-FR";
    case 'h': return "hi";
    case 'i': return "it";
    case 'j': return "ja";
    case 'p': return "pt-BR";
    case 'z': return "zh";
    default: return NULL;
  }
}

static int has_voice(const char* name) {
  size_t i;
  for (i = 0; i < g_n_voices; i++)
    if (!strcmp(g_voices[i], name)) return 1;
  return 0;
}

/* The voice for the current settings: the synthesis voice if set, else one of the language whose gender
 * follows the voice type (male*: the language's first 'm' voice), else the configured default. */
static void pick_voice(const char* engine_lang, char* out, size_t cap) {
  const int male = !strncmp(g_settings.voice_type, "male", 4) || !strncmp(g_settings.voice_type, "child_male", 10);
  size_t i;
  char letter = 0;
  if (g_settings.voice[0] && has_voice(g_settings.voice)) {
    copy_str(out, cap, g_settings.voice);
    return;
  }
  if (!strcmp(engine_lang, "en-us")) letter = 'a';
  else if (!strcmp(engine_lang, "en-gb")) letter = 'b';
  else letter = engine_lang[0];
  if (letter == 'a' && !male && g_conf.default_voice[0]) {
    copy_str(out, cap, g_conf.default_voice);
    return;
  }
  if (letter == 'a' && !male && has_voice("af_heart")) {
    copy_str(out, cap, "af_heart");
    return;
  }
  for (i = 0; i < g_n_voices; i++)
    if (g_voices[i][0] == letter && g_voices[i][1] == (male ? 'm' : 'f')) {
      copy_str(out, cap, g_voices[i]);
      return;
    }
  for (i = 0; i < g_n_voices; i++)
    if (g_voices[i][0] == letter) {
      copy_str(out, cap, g_voices[i]);
      return;
    }
  copy_str(out, cap, g_conf.default_voice[0] ? g_conf.default_voice : "af_heart");
}

static int set_one(const char* var, const char* val) {
  const int is_null = !strcmp(val, "NULL");
  if (!strcmp(var, "rate") || !strcmp(var, "volume") || !strcmp(var, "pitch") || !strcmp(var, "pitch_range")) {
    char* end;
    long v = strtol(val, &end, 10);
    if (*end || v < -100 || v > 100) return -1;
    if (!strcmp(var, "rate")) g_settings.rate = (int)v;
    else if (!strcmp(var, "volume")) g_settings.volume = (int)v;
    else if (!strcmp(var, "pitch")) g_settings.pitch = (int)v;
    return 0;
  }
  if (!strcmp(var, "language")) {
    if (!is_null) copy_str(g_settings.language, sizeof g_settings.language, val);
    return 0;
  }
  if (!strcmp(var, "synthesis_voice")) {
    copy_str(g_settings.voice, sizeof g_settings.voice, is_null ? "" : val);
    return 0;
  }
  if (!strcmp(var, "voice")) {
    copy_str(g_settings.voice_type, sizeof g_settings.voice_type, is_null ? "" : val);
    for (char* p = g_settings.voice_type; *p; p++) *p = (char)tolower((unsigned char)*p);
    return 0;
  }
  if (!strcmp(var, "spelling_mode")) {
    g_settings.spelling = !strcmp(val, "on");
    return 0;
  }
  if (!strcmp(var, "punctuation_mode") || !strcmp(var, "cap_let_recogn") || !strcmp(var, "punctuation_some") ||
      !strcmp(var, "punctuation_most"))
    return 0;
  return -1;
}

/* ------------------------------------------------------------------------------------- speech thread */

typedef enum { MSG_TEXT, MSG_CHAR, MSG_KEY, MSG_ICON } msg_type;

typedef struct job {
  char* text; /* what the engine reads: SSML (SPEAK, CHAR) or plain text (KEY); "" says nothing */
  kokoro_speak_options options;
  char voice[64], language[16];
  float gain;
  double queued_ms;
  unsigned stop_seq;  /* g_stop_seq when queued */
} job;

static pthread_mutex_t g_job_mutex = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t g_job_cv = PTHREAD_COND_INITIALIZER;
static job* g_pending = NULL;  /* handed to the speech thread */
static int g_speaking = 0;     /* a job is being spoken */
static int g_quit = 0;
static int g_pause_requested = 0; /* PAUSE: stop at the next __spd_ mark */
static unsigned g_stop_seq = 0;    /* bumped by STOP: a job queued before a stop is not spoken */

typedef struct speak_state {
  job* job;
  int begun;
  int paused; /* stopped at a __spd_ mark after PAUSE */
  double first_audio_ms;
  uint64_t samples;
  int16_t pcm[MAX_BLOCK_SAMPLES];
} speak_state;

static int stopped_since(const job* j) {
  int stopped;
  pthread_mutex_lock(&g_job_mutex);
  stopped = g_stop_seq != j->stop_seq;
  pthread_mutex_unlock(&g_job_mutex);
  return stopped;
}

static int on_audio(const float* samples, size_t count, void* user) {
  speak_state* s = (speak_state*)user;
  size_t done = 0;
  if (stopped_since(s->job)) return 1; /* a STOP that came before kokoro_speak had started */
  if (!s->begun) {
    s->begun = 1;
    s->first_audio_ms = now_ms() - s->job->queued_ms;
    send_line("701 BEGIN");
    log_line("first audio after %.1f ms", s->first_audio_ms);
  }
  while (done < count) {
    size_t n = count - done, i;
    if (n > MAX_BLOCK_SAMPLES) n = MAX_BLOCK_SAMPLES;
    for (i = 0; i < n; i++) {
      float x = samples[done + i] * s->job->gain;
      if (x > 1.0f) x = 1.0f;
      if (x < -1.0f) x = -1.0f;
      s->pcm[i] = (int16_t)lrintf(x * 32767.0f);
    }
    send_audio(s->pcm, n);
    done += n;
  }
  s->samples += count;
  return 0;
}

/* An index mark: the engine sends it once all audio before it has been through on_audio (on the same thread),
 * so the server gets it after that audio and before the audio after it. A line break in a name would end
 * the protocol line: it goes out as a space. After PAUSE, the first of the server's marks ends the speech. */
static int on_event(const kokoro_event* ev, void* user) {
  speak_state* s = (speak_state*)user;
  char name[256];
  size_t i;
  int pause;
  if (ev->kind != KOKORO_EVENT_MARK || !ev->name) return 0;
  for (i = 0; ev->name[i] && i + 1 < sizeof name; i++)
    name[i] = ev->name[i] == '\n' || ev->name[i] == '\r' ? ' ' : ev->name[i];
  name[i] = 0;
  send_line("700-%s\n700 INDEX MARK", name);
  log_line("mark %s after %.3f s of audio", name, (double)s->samples / KOKORO_SAMPLE_RATE);
  pthread_mutex_lock(&g_job_mutex);
  pause = g_pause_requested;
  pthread_mutex_unlock(&g_job_mutex);
  if (pause && !strncmp(name, "__spd_", 6)) s->paused = 1;
  return s->paused;
}

static void speak_job(job* j) {
  speak_state* s = (speak_state*)calloc(1, sizeof *s);
  int rc = KOKORO_OK;
  const char* p;
  if (!s) return;
  s->job = j;
  for (p = j->text; *p && isspace((unsigned char)*p); p++) {
  }
  if (stopped_since(j)) rc = KOKORO_STOPPED;
  else if (*p) rc = kokoro_speak(g_engine, j->text, &j->options, on_audio, on_event, s);
  if (!s->begun) send_line("701 BEGIN");
  if (rc == KOKORO_STOPPED) {
    send_line(s->paused ? "704 PAUSE" : "703 STOP");
  } else {
    if (rc < 0) log_line("cannot speak: %s", kokoro_last_error());
    send_line("702 END");
  }
  log_line("spoke %zu bytes, voice %s, language %s: %s, first audio after %.1f ms, %.2f s of audio",
           strlen(j->text), j->voice, j->language,
           rc == KOKORO_STOPPED ? (s->paused ? "paused" : "stopped") : (rc < 0 ? "failed" : "done"),
           s->first_audio_ms, (double)s->samples / KOKORO_SAMPLE_RATE);
  free(s);
}

static void* speech_thread(void* arg) {
  (void)arg;
  for (;;) {
    job* j;
    pthread_mutex_lock(&g_job_mutex);
    while (!g_pending && !g_quit) pthread_cond_wait(&g_job_cv, &g_job_mutex);
    if (g_quit) {
      pthread_mutex_unlock(&g_job_mutex);
      return NULL;
    }
    j = g_pending;
    g_pending = NULL;
    g_speaking = 1;
    pthread_mutex_unlock(&g_job_mutex);
    speak_job(j);
    free(j->text);
    free(j);
    pthread_mutex_lock(&g_job_mutex);
    g_speaking = 0;
    pthread_cond_broadcast(&g_job_cv);
    pthread_mutex_unlock(&g_job_mutex);
  }
}

/* Waits until the speech thread is idle (after a STOP the next SPEAK may come at once). */
static void wait_idle(void) {
  pthread_mutex_lock(&g_job_mutex);
  while (g_speaking || g_pending) pthread_cond_wait(&g_job_cv, &g_job_mutex);
  pthread_mutex_unlock(&g_job_mutex);
}

/* ------------------------------------------------------------------------------------- protocol */

static char* read_line(void) {
  char* line = NULL;
  size_t cap = 0;
  ssize_t n = getline(&line, &cap, stdin);
  if (n < 0) {
    free(line);
    return NULL;
  }
  if (n > 0 && line[n - 1] == '\n') line[n - 1] = 0;
  return line;
}

/* key=value lines until ".": each through `set`; returns 0 if all were accepted, -1 otherwise, -2 at EOF. */
static int read_params(int (*set)(const char*, const char*)) {
  int result = 0;
  for (;;) {
    char* line = read_line();
    char* eq;
    if (!line) return -2;
    if (!strcmp(line, ".")) {
      free(line);
      return result;
    }
    eq = strchr(line, '=');
    if (!eq) {
      result = -1;
    } else {
      *eq = 0;
      if (set(line, eq + 1) != 0) result = -1;
    }
    free(line);
  }
}

static int audio_param(const char* var, const char* val) {
  if (!strcmp(var, "audio_output_method")) return strcmp(val, "server") == 0 ? 0 : -1;
  return 0; /* devices of other methods: not ours to open */
}

static int loglevel_param(const char* var, const char* val) {
  (void)var;
  (void)val;
  return 0;
}

/* A growing string. Out of memory: data is freed and stays NULL (failed), later appends do nothing. */
typedef struct text_buf {
  char* data;
  size_t len, cap;
  int failed;
} text_buf;

static void append(text_buf* b, const char* s, size_t n) {
  if (b->failed) return;
  if (b->len + n + 1 > b->cap) {
    size_t cap = b->cap ? b->cap : 256;
    char* grown;
    while (cap < b->len + n + 1) cap *= 2;
    grown = (char*)realloc(b->data, cap);
    if (!grown) {
      free(b->data);
      b->data = NULL;
      b->failed = 1;
      return;
    }
    b->data = grown;
    b->cap = cap;
  }
  memcpy(b->data + b->len, s, n);
  b->len += n;
  b->data[b->len] = 0;
}

static void append_str(text_buf* b, const char* s) { append(b, s, strlen(s)); }

/* Plain text as SSML text: the three characters markup would take escaped. */
static void append_escaped(text_buf* b, const char* text) {
  for (; *text; text++) {
    if (*text == '<') append_str(b, "&lt;");
    else if (*text == '>') append_str(b, "&gt;");
    else if (*text == '&') append_str(b, "&amp;");
    else append(b, text, 1);
  }
}

/* Spelling: SSML in which every character of the text is said on its own, by the engine's
 * <say-as interpret-as="characters"> (letter names: "a" is the letter, not the article), separated by commas
 * (a short pause each). Tags stay as they are, so that index marks keep their places; an entity is one
 * character; blanks are dropped. */
static void append_spelled(text_buf* b, const char* ssml) {
  const char* p = ssml;
  int first = 1;
  while (*p) {
    size_t len = 1;
    const unsigned char c = (unsigned char)*p;
    if (c == '<') { /* a tag (quoted '>' included) or a comment, copied */
      const char* end = NULL;
      if (!strncmp(p, "<!--", 4)) {
        end = strstr(p + 4, "-->");
        if (end) end += 2;
      } else {
        char quote = 0;
        for (end = p + 1; *end && (quote || *end != '>'); end++)
          if (quote ? *end == quote : (*end == '"' || *end == '\'')) quote = quote ? 0 : *end;
        if (!*end) end = NULL;
      }
      len = end ? (size_t)(end - p) + 1 : strlen(p);
      append(b, p, len);
      p += len;
      continue;
    }
    if (isspace(c)) {
      p++;
      continue;
    }
    if (c == '&') {
      const char* semi = strchr(p, ';');
      if (semi && semi - p <= 12) len = (size_t)(semi - p) + 1;
    } else if (c >= 0xf0) len = 4;
    else if (c >= 0xe0) len = 3;
    else if (c >= 0xc0) len = 2;
    if (len > strlen(p)) len = strlen(p);
    if (!first) append_str(b, ", ");
    first = 0;
    append_str(b, "<say-as interpret-as=\"characters\">");
    append(b, p, len);
    append_str(b, "</say-as>");
    p += len;
  }
}

/* What the engine reads for a message: SSML in a <speak> root of the module's own for SPEAK (see the top of
 * the file) and CHAR, spelled for CHAR and in spelling mode; key names as plain text ("shift_a" ->
 * "shift a"); nothing for sound icons (no sound icons: an empty speech, begun and ended). NULL when out of
 * memory. */
static char* engine_text(msg_type type, const char* message) {
  text_buf b = {NULL, 0, 0, 0};
  if (type == MSG_ICON) return strdup("");
  if (type == MSG_CHAR && !strcmp(message, "space")) return strdup("space"); /* SSIP's name of ' ' */
  if (type == MSG_KEY) {
    char* key = strdup(message);
    for (char* p = key; p && *p; p++)
      if (*p == '_') *p = ' ';
    return key;
  }
  append_str(&b, "<speak>");
  if (type == MSG_CHAR) {
    text_buf escaped = {NULL, 0, 0, 0};
    append_escaped(&escaped, message);
    if (escaped.failed) {
      free(b.data);
      return NULL;
    }
    append_spelled(&b, escaped.data ? escaped.data : "");
    free(escaped.data);
  } else if (g_settings.spelling) {
    append_spelled(&b, message);
  } else {
    append_str(&b, message);
  }
  append_str(&b, "</speak>");
  return b.data;
}

static void cmd_speak(msg_type type) {
  char* text = NULL;
  size_t len = 0, lines = 0;
  job* j;
  const char* lang;
  send_line("202 OK RECEIVING MESSAGE");
  for (;;) {
    char* line = read_line();
    const char* body;
    size_t l;
    if (!line) {
      free(text);
      return;
    }
    if (!strcmp(line, ".")) {
      free(line);
      break;
    }
    body = line[0] == '.' ? line + 1 : line; /* a leading '.' is doubled by the server */
    l = strlen(body);
    text = (char*)realloc(text, len + l + 2);
    if (!text) {
      free(line);
      send_line("401 ERROR INTERNAL");
      return;
    }
    if (lines++) text[len++] = '\n';
    memcpy(text + len, body, l);
    len += l;
    text[len] = 0;
    free(line);
  }
  if (!text || !len) {
    free(text);
    send_line("301 ERROR CANT SPEAK");
    return;
  }
  j = (job*)calloc(1, sizeof *j);
  if (j) j->text = engine_text(type, text);
  free(text);
  if (!j || !j->text) {
    free(j);
    send_line("301 ERROR CANT SPEAK");
    return;
  }
  lang = engine_language(g_settings.language);
  copy_str(j->language, sizeof j->language, lang ? lang : "en-us");
  pick_voice(j->language, j->voice, sizeof j->voice);
  {
    /* A voice of another language than the one asked for speaks its own language. */
    const char* vl = voice_language(j->voice);
    const char* el = vl ? engine_language(vl) : NULL;
    if (g_settings.voice[0] && el) copy_str(j->language, sizeof j->language, el);
  }
  j->options.size = sizeof j->options;
  j->options.voice = j->voice;
  j->options.language = j->language;
  j->options.mode = g_conf.mode[0] ? g_conf.mode : NULL;
  j->options.speed = g_settings.rate >= 0 ? 1.0f + (float)g_settings.rate / 100.0f : 1.0f + (float)g_settings.rate / 200.0f;
  /* volume 0..100 is full scale (the engine's level); below 0 attenuates linearly to silence at -100 */
  j->gain = g_settings.volume >= 0 ? 1.0f : (float)(g_settings.volume + 100) / 100.0f;
  j->queued_ms = now_ms();
  wait_idle();
  pthread_mutex_lock(&g_job_mutex);
  j->stop_seq = g_stop_seq;
  g_pause_requested = 0; /* a PAUSE from now on is this message's */
  g_pending = j;
  pthread_cond_broadcast(&g_job_cv);
  pthread_mutex_unlock(&g_job_mutex);
  send_line("200 OK SPEAKING");
}

static void cmd_stop(void) {
  pthread_mutex_lock(&g_job_mutex);
  g_stop_seq++;
  pthread_mutex_unlock(&g_job_mutex);
  kokoro_stop(g_engine);
}

static void cmd_pause(void) {
  pthread_mutex_lock(&g_job_mutex);
  g_pause_requested = 1;
  pthread_mutex_unlock(&g_job_mutex);
}

static void cmd_list_voices(void) {
  size_t i;
  int any = 0;
  pthread_mutex_lock(&g_out);
  for (i = 0; i < g_n_voices; i++) {
    const char* lang = voice_language(g_voices[i]);
    if (!lang) continue;
    fprintf(g_proto, "200-%s\t%s\tnone\n", g_voices[i], lang);
    any = 1;
  }
  fputs(any ? "200 OK VOICE LIST SENT\n" : "304 CANT LIST VOICES\n", g_proto);
  fflush(g_proto);
  pthread_mutex_unlock(&g_out);
}

static int discard_audio(const float* samples, size_t n, void* user) {
  (void)samples, (void)n, (void)user;
  return 0;
}

int main(int argc, char** argv) {
  kokoro_config cfg;
  pthread_t speaker;
  char* line;
  {
    const int proto_fd = dup(STDOUT_FILENO);
    g_proto = proto_fd >= 0 ? fdopen(proto_fd, "w") : NULL;
    if (!g_proto || dup2(STDERR_FILENO, STDOUT_FILENO) < 0) return 2;
  }
  if (argc > 1) read_config(argv[1]);
  if (g_conf.log_file[0]) g_log = fopen(g_conf.log_file, "a");

  line = read_line();
  if (!line || strcmp(line, "INIT") != 0) {
    free(line);
    return 3;
  }
  free(line);
  memset(&cfg, 0, sizeof cfg);
  cfg.size = sizeof cfg;
  cfg.model_path = g_conf.model[0] ? g_conf.model : NULL;
  cfg.assets_dir = g_conf.assets[0] ? g_conf.assets : NULL;
  cfg.threads = g_conf.threads;
  g_engine = kokoro_open(&cfg);
  if (!g_engine || kokoro_list_voices(g_engine, &g_voices, &g_n_voices) != KOKORO_OK) {
    const char* err = kokoro_last_error();
    char one_line[512];
    size_t i;
    for (i = 0; err[i] && i + 1 < sizeof one_line; i++) one_line[i] = err[i] == '\n' ? ' ' : err[i];
    one_line[i] = 0;
    log_line("init failed: %s", err);
    send_line("399-kokoro: %s\n399 ERR CANT INIT MODULE", one_line);
    return 1;
  }
  /* One short, unheard sentence: the engine prepares its weights for the kernels now (bf16 packing, oneDNN
   * kernels, the model's pages), so that the first message the user hears starts as fast as the later ones. */
  if (kokoro_speak(g_engine, "Ready.", NULL, discard_audio, NULL, NULL) != KOKORO_OK)
    log_line("warm-up failed (not fatal): %s", kokoro_last_error());
  log_line("loaded kokoro %s, %zu voices", kokoro_version(), g_n_voices);
  send_line("299-kokoro %s: %zu voices\n299 OK LOADED SUCCESSFULLY", kokoro_version(), g_n_voices);
  if (pthread_create(&speaker, NULL, speech_thread, NULL) != 0) return 1;

  while ((line = read_line()) != NULL) {
    int rc;
    if (!strcmp(line, "SPEAK")) cmd_speak(MSG_TEXT);
    else if (!strcmp(line, "CHAR")) cmd_speak(MSG_CHAR);
    else if (!strcmp(line, "KEY")) cmd_speak(MSG_KEY);
    else if (!strcmp(line, "SOUND_ICON")) cmd_speak(MSG_ICON);
    else if (!strcmp(line, "STOP")) cmd_stop();
    else if (!strcmp(line, "PAUSE")) cmd_pause();
    else if (!strncmp(line, "LIST VOICES", 11)) cmd_list_voices();
    else if (!strcmp(line, "SET")) {
      send_line("207 OK RECEIVING SETTINGS");
      rc = read_params(set_one);
      if (rc == -2) break;
      send_line(rc == 0 ? "203 OK SETTINGS RECEIVED" : "303 ERROR INVALID PARAMETER OR VALUE");
    } else if (!strcmp(line, "AUDIO")) {
      send_line("207 OK RECEIVING AUDIO SETTINGS");
      rc = read_params(audio_param);
      if (rc == -2) break;
      send_line(rc == 0 ? "203 OK AUDIO INITIALIZED" : "300-kokoro sends its audio to the server only\n300 MODULE ERROR");
    } else if (!strcmp(line, "LOGLEVEL")) {
      send_line("207 OK RECEIVING LOGLEVEL SETTINGS");
      rc = read_params(loglevel_param);
      if (rc == -2) break;
      send_line("203 OK LOGLEVEL SET");
    } else if (!strncmp(line, "DEBUG", 5)) {
      send_line(strstr(line, "ON") ? "200 OK DEBUGGING ON" : "200 OK DEBUGGING OFF");
    } else if (!strcmp(line, "QUIT")) {
      free(line);
      line = NULL;
      break;
    } else {
      send_line("300 ERR UNKNOWN COMMAND");
    }
    free(line);
  }
  free(line);
  kokoro_stop(g_engine);
  pthread_mutex_lock(&g_job_mutex);
  g_quit = 1;
  pthread_cond_broadcast(&g_job_cv);
  pthread_mutex_unlock(&g_job_mutex);
  pthread_join(speaker, NULL);
  kokoro_close(g_engine);
  send_line("210 OK QUIT");
  if (g_log) fclose(g_log);
  return 0;
}
