// What a C API call does with a session (capi/session.h): options, the engine for the call's mode, and the
// one call at a time that kokoro_session_speak and a text stream share.
#include "capi/session.h"

#include <cmath>
#include <string_view>

#include "engine/speaker.h"
#include "frontend/utf8.h"
#include "frontend/voice_language.h"

namespace kokoro::capi {

namespace {
thread_local std::string t_last_error;
}  // namespace

std::string& last_error() { return t_last_error; }

int fail(int status, const std::string& message) {
  t_last_error = message;
  return status;
}

bool known_size(size_t size, size_t ours, const char* what) {
  if (size == 0 || size == ours) return true;
  fail(KOKORO_ERR_STRUCT_SIZE, std::string(what) + ".size is " + std::to_string(size) + ", this library knows " +
                                   std::to_string(ours) + " (set it to sizeof(" + what + ") or 0)");
  return false;
}

int read_options(const kokoro_speak_options* options, OwnedOptions& out) {
  out = OwnedOptions{};
  if (!options) return KOKORO_OK;
  if (!known_size(options->size, sizeof(kokoro_speak_options), "kokoro_speak_options")) return KOKORO_ERR_STRUCT_SIZE;
  for (const char* s : {options->voice, options->language, options->mode})
    if (s && !kokoro::utf8::is_valid(s))
      return fail(KOKORO_ERR_INVALID_ARGUMENT, "voice, language or mode is not valid UTF-8");
  if (options->voice) out.voice = options->voice;
  if (options->language) out.language = options->language;
  if (options->mode) out.mode = options->mode;
  out.speed = options->speed;
  out.seed = options->seed;
  out.seed_set = options->seed != 0;
  out.phonemes = options->phonemes;
  return KOKORO_OK;
}

bool resolve(const OwnedOptions& defaults, const OwnedOptions& call, CallSettings& out, int& status) {
  out.voice = call.voice ? *call.voice : defaults.voice ? *defaults.voice : "af_heart";
  const std::optional<std::string>& lang = call.language ? call.language : defaults.language;
  out.language = lang ? *lang : kokoro::language_for_voice(out.voice);
  if (out.language.empty()) out.language = "en-us";
  out.mode = call.mode ? *call.mode : defaults.mode ? *defaults.mode : "";
  const float speed = call.speed != 0.0f ? call.speed : defaults.speed;
  out.speed = speed == 0.0f ? 1.0f : speed;
  out.seed = call.seed_set ? call.seed : defaults.seed;
  out.phonemes = (call.phonemes ? call.phonemes : defaults.phonemes) != 0;
  if (!std::isfinite(out.speed) || out.speed < 0.25f || out.speed > 4.0f) {
    status = fail(KOKORO_ERR_INVALID_ARGUMENT, "speed " + std::to_string(out.speed) + " is outside 0.25..4");
    return false;
  }
  if (out.voice.empty()) {
    status = fail(KOKORO_ERR_VOICE, "voice name is empty");
    return false;
  }
  return true;
}

bool parse_mode(const std::string& name, kokoro::SynthesisMode& mode, int& status) {
  mode = kokoro::SpeakerOptions{}.mode;
  if (name.empty()) return true;
  try {
    mode = kokoro::parse_synthesis_mode(name);
    return true;
  } catch (const std::exception& ex) {
    status = fail(KOKORO_ERR_INVALID_ARGUMENT, ex.what());
    return false;
  }
}

// The session's engine for this mode: the existing one when the mode matches, else a new one (the old one is
// destroyed first; its threads are idle between calls).
int prepare_engine(kokoro_session& s, kokoro::SynthesisMode mode) {
  if (s.engine && s.engine_mode == mode) return KOKORO_OK;
  std::unique_ptr<kokoro::StreamEngine> old;
  {
    std::lock_guard<std::mutex> lock(s.stop_mutex);
    old = std::move(s.engine);
  }
  old.reset();  // joins its threads: outside the lock, which a callback's stop request takes
  std::unique_ptr<kokoro::StreamEngine> engine;
  try {
    // No voice or language of its own: every call brings them (kokoro::UtteranceSettings).
    const kokoro::Model& m = *s.model->model;
    engine = std::make_unique<kokoro::StreamEngine>(m.synthesizer(), m.frontend("en-us"), kokoro::VoicePack{}, s.sink,
                                                    kokoro::EngineVoice{}, mode, m.stream_options(mode));
  } catch (const std::exception& ex) {
    return fail(KOKORO_ERR_MODEL, ex.what());
  }
  kokoro_session* sp = &s;
  engine->on_report([sp](const kokoro::UtteranceReport& r) {
    // One utterance is in flight per session (each call waits for its report), so a report that comes
    // while a call waits is that call's.
    std::lock_guard<std::mutex> lock(sp->report_mutex);
    if (sp->waiting_for == 0) return;
    sp->report = r;
    sp->report_cv.notify_all();
  });
  engine->on_event([sp](const kokoro::StreamEvent& ev) { sp->sink.deliver_event(ev); });
  std::lock_guard<std::mutex> lock(s.stop_mutex);
  s.engine = std::move(engine);
  s.engine_mode = mode;
  return KOKORO_OK;
}

namespace {

// Frees the session after a call (or a call that could not open).
void release(kokoro_session& s) {
  s.sink.end_call();
  {
    std::lock_guard<std::mutex> lock(s.report_mutex);
    s.waiting_for = 0;
    s.report.reset();
  }
  s.busy.store(false);
}

}  // namespace

int open_call(kokoro_session& s, const kokoro_speak_options* options, kokoro_audio_callback on_audio,
              kokoro_event_callback on_event, void* user_data,
              const std::function<uint64_t(StreamEngine&, UtteranceSettings)>& start) {
  OwnedOptions call;
  int status = read_options(options, call);
  if (status != KOKORO_OK) return status;
  CallSettings c;
  if (!resolve(s.defaults, call, c, status)) return status;
  kokoro::SynthesisMode mode;
  if (!parse_mode(c.mode, mode, status)) return status;

  {
    // Under stop_mutex: a stop that sees the call busy always reaches it.
    std::lock_guard<std::mutex> lock(s.stop_mutex);
    if (s.busy.load())
      return fail(KOKORO_ERR_BUSY, s.stream ? "a text stream is open on this session (end it with kokoro_session_end_text)"
                                            : "another speak is running on this session");
    s.busy.store(true);
    s.stop_requested = false;
  }
  struct Release {
    kokoro_session* s;
    ~Release() {
      if (s) release(*s);
    }
  } on_failure{&s};

  kokoro::UtteranceSettings settings;
  const kokoro::Model& model = *s.model->model;
  try {
    settings.voice = model.voice(c.voice);
  } catch (const std::exception& ex) {
    return fail(KOKORO_ERR_VOICE, ex.what());
  }
  try {
    settings.frontend = model.frontend(c.language);
  } catch (const std::exception& ex) {
    return fail(KOKORO_ERR_LANGUAGE, ex.what());
  }
  settings.voice_options = kokoro::EngineVoice{c.speed, c.phonemes, c.seed, false};
  if (int rc = prepare_engine(s, mode); rc != KOKORO_OK) return rc;

  {
    // Under stop_mutex: a stop either comes first (nothing is said) or stops what was said.
    std::lock_guard<std::mutex> lock(s.stop_mutex);
    if (s.stop_requested) return fail(KOKORO_STOPPED, "stopped");
    std::lock_guard<std::mutex> rlock(s.report_mutex);
    s.report.reset();
    s.sink.begin_call(on_audio, on_event, user_data);  // before say(): its first event may come at once
    s.waiting_for = start(*s.engine, std::move(settings));
  }
  on_failure.s = nullptr;  // open: finish_call frees the session
  return KOKORO_OK;
}

int finish_call(kokoro_session& s) {
  std::unique_lock<std::mutex> lock(s.report_mutex);
  s.report_cv.wait(lock, [&] { return s.report.has_value(); });
  const kokoro::UtteranceReport r = *s.report;
  lock.unlock();
  int status = KOKORO_OK;
  if (!r.error.empty()) {
    status = fail(KOKORO_ERR_SYNTHESIS, r.error);
  } else if (r.interrupted || s.sink.call_stopped()) {
    t_last_error = "stopped";
    status = KOKORO_STOPPED;
  }
  release(s);
  return status;
}

int speak(kokoro_session& s, const char* text, const kokoro_speak_options* options, kokoro_audio_callback on_audio,
          kokoro_event_callback on_event, void* user_data) {
  if (!text) return fail(KOKORO_ERR_INVALID_ARGUMENT, "text is NULL");
  const std::string_view view(text);
  if (view.empty()) return fail(KOKORO_ERR_INVALID_ARGUMENT, "text is empty");
  if (!kokoro::utf8::is_valid(view)) return fail(KOKORO_ERR_INVALID_TEXT, "text is not valid UTF-8");
  const int rc = open_call(s, options, on_audio, on_event, user_data, [&](StreamEngine& engine, UtteranceSettings settings) {
    return engine.say(std::string(view), std::move(settings));
  });
  return rc == KOKORO_OK ? finish_call(s) : rc;
}

int stop(kokoro_session& s) {
  std::lock_guard<std::mutex> lock(s.stop_mutex);
  if (!s.busy.load()) return KOKORO_OK;
  s.stop_requested = true;
  s.sink.stop_call();  // no callback starts after this
  if (s.engine) s.engine->stop();
  return KOKORO_OK;
}

}  // namespace kokoro::capi
