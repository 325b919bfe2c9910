// Leaving an app promptly when the user asks to quit (Ctrl-C, SIGTERM) or the audio server is gone.
#pragma once

#include "engine/speaker.h"

namespace kokoro::app {

// Stops the speaker (queue and current utterance) and waits up to `seconds` for its worker to finish the
// segment it may be synthesizing (exact mode cannot abandon a segment half-way). If the worker is still
// busy then, flushes stdio and ends the process at once with `exit_code` (the destructors would join the
// busy worker). Returns only when the worker is idle, so the caller can close the sink normally.
void stop_speaker_or_exit(Speaker& speaker, double seconds, int exit_code, const char* app_name);

}  // namespace kokoro::app
