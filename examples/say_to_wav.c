/* say_to_wav: speaks a line into a WAV file through the C API (kokoro.h) only.
 *
 *   cc -o say_to_wav say_to_wav.c $(pkg-config --cflags --libs kokoro)
 *   ./say_to_wav out.wav "Hello from kokoro." [voice]
 *
 * The engine hands float samples (24 kHz mono) to a callback as soon as they exist; this program writes
 * them as 16-bit PCM and fills in the WAV header's sizes at the end. Word events are printed with their
 * times, to show what a caption or screen-reader host gets. */
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <kokoro.h>

typedef struct output {
  FILE* file;
  uint32_t samples;
  const char* text;
  int write_failed;
} output;

static void put_u32(unsigned char* p, uint32_t v) {
  p[0] = (unsigned char)v;
  p[1] = (unsigned char)(v >> 8);
  p[2] = (unsigned char)(v >> 16);
  p[3] = (unsigned char)(v >> 24);
}

static void put_u16(unsigned char* p, uint16_t v) {
  p[0] = (unsigned char)v;
  p[1] = (unsigned char)(v >> 8);
}

/* A canonical 44-byte PCM header: mono, 16-bit, KOKORO_SAMPLE_RATE. */
static int write_header(FILE* f, uint32_t samples) {
  unsigned char h[44];
  const uint32_t data_bytes = samples * 2;
  memcpy(h, "RIFF", 4);
  put_u32(h + 4, 36 + data_bytes);
  memcpy(h + 8, "WAVEfmt ", 8);
  put_u32(h + 16, 16);
  put_u16(h + 20, 1); /* PCM */
  put_u16(h + 22, 1); /* mono */
  put_u32(h + 24, KOKORO_SAMPLE_RATE);
  put_u32(h + 28, KOKORO_SAMPLE_RATE * 2);
  put_u16(h + 32, 2);
  put_u16(h + 34, 16);
  memcpy(h + 36, "data", 4);
  put_u32(h + 40, data_bytes);
  return fseek(f, 0, SEEK_SET) == 0 && fwrite(h, 1, sizeof h, f) == sizeof h;
}

static int on_audio(const float* samples, size_t count, void* user) {
  output* out = (output*)user;
  size_t i;
  for (i = 0; i < count; i++) {
    float x = samples[i];
    unsigned char b[2];
    int v;
    if (x > 1.0f) x = 1.0f;
    if (x < -1.0f) x = -1.0f;
    v = (int)(x * 32767.0f);
    put_u16(b, (uint16_t)(int16_t)v);
    if (fwrite(b, 1, 2, out->file) != 2) {
      out->write_failed = 1;
      return 1; /* stop speaking: the file cannot take more */
    }
  }
  out->samples += (uint32_t)count;
  return 0;
}

static int on_event(const kokoro_event* ev, void* user) {
  const output* out = (const output*)user;
  if (ev->kind == KOKORO_EVENT_WORD)
    printf("%7.3f %7.3f  %.*s\n", (double)ev->start_sample / KOKORO_SAMPLE_RATE,
           (double)ev->end_sample / KOKORO_SAMPLE_RATE, (int)(ev->text_end - ev->text_begin), out->text + ev->text_begin);
  return 0;
}

int main(int argc, char** argv) {
  kokoro_engine* engine;
  kokoro_speak_options options;
  output out;
  int rc;
  if (argc < 3) {
    fprintf(stderr, "usage: %s OUT.wav \"text\" [voice]\n", argv[0]);
    return 2;
  }
  engine = kokoro_open(NULL); /* defaults: model and assets as kokoro-say finds them */
  if (!engine) {
    fprintf(stderr, "say_to_wav: %s\n", kokoro_last_error());
    return 1;
  }
  memset(&out, 0, sizeof out);
  out.text = argv[2];
  out.file = fopen(argv[1], "wb");
  if (!out.file || !write_header(out.file, 0)) {
    perror(argv[1]);
    kokoro_close(engine);
    return 1;
  }
  memset(&options, 0, sizeof options);
  options.size = sizeof options;
  options.voice = argc > 3 ? argv[3] : NULL;
  rc = kokoro_speak(engine, argv[2], &options, on_audio, on_event, &out);
  if (rc < 0) fprintf(stderr, "say_to_wav: %s: %s\n", kokoro_status_string(rc), kokoro_last_error());
  if (!write_header(out.file, out.samples) || fclose(out.file) != 0 || out.write_failed) {
    perror(argv[1]);
    rc = -1;
  }
  kokoro_close(engine);
  if (rc == KOKORO_OK)
    fprintf(stderr, "say_to_wav: %s: %.2f s (kokoro %s)\n", argv[1], (double)out.samples / KOKORO_SAMPLE_RATE,
            kokoro_version());
  return rc == KOKORO_OK ? 0 : 1;
}
