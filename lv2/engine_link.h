// The plugin's one connection to the engine: libkokoro's C API (include/kokoro.h), nothing else of the
// engine. Every instance in a process shares one model (weights, frontends, voices, compute threads:
// loaded once, however many speaker tracks a host session has) and speaks through a session of its own.
// Opening loads the model if no instance has (about a second), which instantiate() does so that a note-on
// only waits for the engine's time to first audio.
#pragma once
#include <memory>
#include <string>

#include "kokoro.h"

namespace kokoro::lv2 {

class EngineLink {
 public:
  // nullptr on failure, with the engine's reason (which file is missing) in `error`.
  static std::unique_ptr<EngineLink> open(std::string& error);
  ~EngineLink();
  EngineLink(const EngineLink&) = delete;
  EngineLink& operator=(const EngineLink&) = delete;

  // kokoro_session_speak / kokoro_session_stop on this instance's session (see kokoro.h for their threads).
  int speak(const char* text, const kokoro_speak_options* options, kokoro_audio_callback on_audio,
            kokoro_event_callback on_event, void* user);
  void stop();

 private:
  explicit EngineLink(kokoro_session* session) : session_(session) {}
  kokoro_session* session_;
};

}  // namespace kokoro::lv2
