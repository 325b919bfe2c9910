/* capi_say: speaks through libkokoro's C API alone and writes the raw float32 samples to stdout; the reference
 * the Python tests compare kokoro_rt's audio with (python/tests/test_engine.py).
 *
 *   capi_say TEXT VOICE SEED MODE LANG > out.f32        MODE and LANG: "" for the engine's default */
#include <kokoro.h>
#include <stdio.h>
#include <stdlib.h>

static int write_samples(const float* samples, size_t count, void* user) {
  return fwrite(samples, sizeof(float), count, (FILE*)user) == count ? 0 : 1;
}

int main(int argc, char** argv) {
  if (argc != 6) {
    fprintf(stderr, "usage: capi_say TEXT VOICE SEED MODE LANG\n");
    return 2;
  }
  kokoro_engine* engine = kokoro_open(NULL);
  if (!engine) {
    fprintf(stderr, "capi_say: %s\n", kokoro_last_error());
    return 1;
  }
  kokoro_speak_options options = {0};
  options.size = sizeof options;
  options.voice = argv[2];
  options.seed = strtoull(argv[3], NULL, 10);
  options.mode = argv[4][0] ? argv[4] : NULL;
  options.language = argv[5][0] ? argv[5] : NULL;
  int status = kokoro_speak(engine, argv[1], &options, write_samples, NULL, stdout);
  if (status != KOKORO_OK) fprintf(stderr, "capi_say: %s\n", kokoro_last_error());
  kokoro_close(engine);
  return status == KOKORO_OK && fflush(stdout) == 0 ? 0 : 1;
}
