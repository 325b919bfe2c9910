/* CHECK and REQUIRE for the C API's C tests (test_capi.c, test_capi_sessions.c): C99, no test framework, so
 * that a C program built with only pkg-config's flags can run them (tests/test_install.sh). Each test file
 * has its own failure count; main returns nonzero when it is. */
#ifndef KOKORO_TESTS_CAPI_CHECK_H
#define KOKORO_TESTS_CAPI_CHECK_H
#include <stdio.h>
#include <stdlib.h>

static int g_failures = 0;

#define CHECK(cond, ...)                                         \
  do {                                                           \
    if (!(cond)) {                                               \
      fprintf(stderr, "%s:%d: CHECK(%s) failed: ", __FILE__, __LINE__, #cond); \
      fprintf(stderr, __VA_ARGS__);                              \
      fprintf(stderr, "\n");                                     \
      g_failures++;                                              \
    }                                                            \
  } while (0)

/* Fatal: the rest of the scenario cannot run. `cond` is evaluated exactly once: it may have side effects
 * (REQUIRE(pthread_create(...) == 0) once started two stopper threads, the second stop of which hit the
 * next scenario, and a stopper left waiting made capture_free hang in pthread_cond_destroy). */
#define REQUIRE(cond, ...)                                                                   \
  do {                                                                                       \
    if (!(cond)) {                                                                           \
      fprintf(stderr, "%s:%d: REQUIRE(%s) failed: ", __FILE__, __LINE__, #cond);             \
      fprintf(stderr, __VA_ARGS__);                                                          \
      fprintf(stderr, "\n");                                                                 \
      exit(1);                                                                               \
    }                                                                                        \
  } while (0)

#endif
