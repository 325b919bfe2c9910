#include "lv2/engine_link.h"

namespace kokoro::lv2 {

std::unique_ptr<EngineLink> EngineLink::open(std::string& error) {
  kokoro_engine* engine = kokoro_open(nullptr);  // model and assets found as kokoro-say finds them
  if (!engine) {
    error = kokoro_last_error();
    return nullptr;
  }
  return std::unique_ptr<EngineLink>(new EngineLink(engine));
}

EngineLink::~EngineLink() { kokoro_close(engine_); }

int EngineLink::speak(const char* text, const kokoro_speak_options* options, kokoro_audio_callback on_audio,
                      kokoro_event_callback on_event, void* user) {
  return kokoro_speak(engine_, text, options, on_audio, on_event, user);
}

void EngineLink::stop() { kokoro_stop(engine_); }

}  // namespace kokoro::lv2
