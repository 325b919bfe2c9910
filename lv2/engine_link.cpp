#include "lv2/engine_link.h"

#include <mutex>

namespace kokoro::lv2 {
namespace {

// The process's model and how many instances use it. Opened by the first instance, closed with the last
// (the engine frees it once its last session is closed too).
std::mutex g_model_mutex;
kokoro_model* g_model = nullptr;
int g_model_users = 0;

void release_model() {
  if (--g_model_users == 0) {
    kokoro_model_close(g_model);
    g_model = nullptr;
  }
}

}  // namespace

std::unique_ptr<EngineLink> EngineLink::open(std::string& error) {
  std::lock_guard<std::mutex> lock(g_model_mutex);
  if (!g_model) {
    g_model = kokoro_model_open(nullptr);  // model and assets found as kokoro-say finds them
    if (!g_model) {
      error = kokoro_last_error();
      return nullptr;
    }
  }
  ++g_model_users;
  kokoro_session* session = kokoro_session_new(g_model, nullptr);
  if (!session) {
    error = kokoro_last_error();
    release_model();
    return nullptr;
  }
  return std::unique_ptr<EngineLink>(new EngineLink(session));
}

EngineLink::~EngineLink() {
  kokoro_session_close(session_);
  std::lock_guard<std::mutex> lock(g_model_mutex);
  release_model();
}

int EngineLink::speak(const char* text, const kokoro_speak_options* options, kokoro_audio_callback on_audio,
                      kokoro_event_callback on_event, void* user) {
  return kokoro_session_speak(session_, text, options, on_audio, on_event, user);
}

void EngineLink::stop() { kokoro_session_stop(session_); }

}  // namespace kokoro::lv2
