/* install_probe: a C program that links libkokoro, for tests/test_install_layout.cpp. Prints which compute
 * library the loader picked (the path it used, as dladdr in the engine sees it) and what kokoro_open with
 * defaults gives: "opened" or its error, which names where the engine looked for its data. */
#define _GNU_SOURCE
#include <link.h>
#include <stdio.h>
#include <string.h>

#include <kokoro.h>

static int print_compute(struct dl_phdr_info* info, size_t size, void* data) {
  (void)size;
  (void)data;
  if (info->dlpi_name && strstr(info->dlpi_name, "libkokoro_compute.so")) printf("compute: %s\n", info->dlpi_name);
  return 0;
}

int main(void) {
  kokoro_engine* engine;
  dl_iterate_phdr(print_compute, NULL);
  engine = kokoro_open(NULL);
  if (engine) {
    printf("opened\n");
    kokoro_close(engine);
    return 0;
  }
  printf("error: %s\n", kokoro_last_error());
  return 1;
}
