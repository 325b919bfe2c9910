#include "apps/common/shutdown.h"

#include <unistd.h>

#include <cstdio>

namespace kokoro::app {

void stop_speaker_or_exit(Speaker& speaker, double seconds, int exit_code, const char* app_name) {
  speaker.stop();
  if (speaker.wait_idle(seconds)) return;
  std::fprintf(stderr, "%s: not waiting for the segment being synthesized; exiting\n", app_name);
  std::fflush(stdout);
  std::fflush(stderr);
  ::_exit(exit_code);
}

}  // namespace kokoro::app
