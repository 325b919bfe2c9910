// The C interface (include/kokoro.h) over the streaming engine: a thin layer that checks arguments, keeps a
// registry of open engines, caches what is slow to build (frontend per language, voice packs, the last
// StreamEngine) and turns the engine's sink writes and events into the caller's callbacks.
//
// Why a registry: C callers pass handles back after kokoro_close by mistake; looking the pointer up in a
// set of live engines (never dereferencing it) turns that into KOKORO_ERR_INVALID_HANDLE instead of a
// use-after-free. Each call holds a shared_ptr to the engine for its duration, so kokoro_close from another
// thread during kokoro_speak stops the speech and the engine is freed when the speaking call lets go.
#include "kokoro.h"

#include <spdlog/sinks/stdout_sinks.h>
#include <spdlog/spdlog.h>

#include <atomic>
#include <cmath>
#include <condition_variable>
#include <map>
#include <memory>
#include <mutex>
#include <new>
#include <optional>
#include <string>
#include <vector>

#include "capi/callback_sink.h"
#include "core/assets.h"
#include "core/error.h"
#include "core/model_file.h"
#include "core/parallel.h"
#include "core/precision.h"
#include "core/voice.h"
#include "engine/speaker.h"
#include "engine/stream_engine.h"
#include "engine/synthesizer.h"
#include "frontend/frontend.h"
#include "frontend/utf8.h"
#include "frontend/voice_language.h"

#ifndef KOKORO_VERSION_STRING
#define KOKORO_VERSION_STRING "0.0.0"
#endif

namespace {

using kokoro::capi::CallbackSink;

thread_local std::string t_last_error;

int fail(int status, const std::string& message) {
  t_last_error = message;
  return status;
}

// What an engine's voice, language and synthesis settings resolve to; a StreamEngine is built per key.
struct SessionKey {
  std::string voice, language, mode;
  float speed = 1.0f;
  uint64_t seed = 0;
  bool phonemes = false;
  bool operator==(const SessionKey&) const = default;
};

struct Session {
  SessionKey key;
  std::unique_ptr<kokoro::StreamEngine> engine;
};

}  // namespace

struct kokoro_engine {
  std::string assets_dir;
  std::shared_ptr<const kokoro::Synthesizer> synthesizer;
  std::vector<std::string> voice_names;
  std::vector<const char*> voice_name_ptrs;
  std::map<std::string, std::shared_ptr<const kokoro::Frontend>> frontends;
  std::map<std::string, kokoro::VoicePack> voices;

  CallbackSink sink;
  std::atomic<bool> busy{false};
  std::atomic<bool> prepared_persisted{false};  // the first kokoro_speak writes the prepared weights to the user's cache

  // Guards `session` against kokoro_stop while kokoro_speak replaces it, and orders stop against say.
  std::mutex stop_mutex;
  bool stop_requested = false;
  std::unique_ptr<Session> session;

  // The report of the utterance being spoken (set on the engine's output thread).
  std::mutex report_mutex;
  std::condition_variable report_cv;
  uint64_t waiting_for = 0;
  std::optional<kokoro::UtteranceReport> report;

  ~kokoro_engine() {
    // The StreamEngine's threads use `sink`; they must be gone before it is.
    session.reset();
  }
};

namespace {

std::mutex g_registry_mutex;
std::map<const kokoro_engine*, std::shared_ptr<kokoro_engine>> g_registry;

std::shared_ptr<kokoro_engine> lookup(const kokoro_engine* handle) {
  if (!handle) return nullptr;
  std::lock_guard<std::mutex> lock(g_registry_mutex);
  auto it = g_registry.find(handle);
  return it == g_registry.end() ? nullptr : it->second;
}

int invalid_handle(const kokoro_engine* handle) {
  return fail(KOKORO_ERR_INVALID_HANDLE, handle ? "engine handle is not open (closed already, or not from kokoro_open)"
                                                : "engine handle is NULL");
}

// A struct's size field: 0 (zero-initialised: this header's version) or exactly the size we know.
bool known_size(size_t size, size_t ours, const char* what) {
  if (size == 0 || size == ours) return true;
  fail(KOKORO_ERR_STRUCT_SIZE, std::string(what) + ".size is " + std::to_string(size) + ", this library knows " +
                                   std::to_string(ours) + " (set it to sizeof(" + what + ") or 0)");
  return false;
}

const kokoro::Frontend& frontend_for(kokoro_engine& e, const std::string& language) {
  auto it = e.frontends.find(language);
  if (it != e.frontends.end()) return *it->second;
  kokoro::FrontendOptions fo;
  fo.language = language;
  fo.assets_dir = e.assets_dir;
  fo.first_segment_max_words = 0;  // whole sentences, as the reference (slice mode starts early without a cut)
  auto fe = std::make_shared<const kokoro::Frontend>(fo);
  return *e.frontends.emplace(language, std::move(fe)).first->second;
}

const kokoro::VoicePack& voice_for(kokoro_engine& e, const std::string& spec) {
  auto it = e.voices.find(spec);
  if (it != e.voices.end()) return it->second;
  return e.voices.emplace(spec, kokoro::VoicePack::resolve(spec, e.assets_dir)).first->second;
}

// The StreamEngine for these settings: the cached one when they match, else a new one (the old one is
// destroyed first; its threads are idle between calls).
int prepare_session(kokoro_engine& e, const SessionKey& key) {
  if (e.session && e.session->key == key) return KOKORO_OK;
  kokoro::SpeakerOptions defaults;
  kokoro::SynthesisMode mode = defaults.mode;
  if (!key.mode.empty()) {
    try {
      mode = kokoro::parse_synthesis_mode(key.mode);
    } catch (const std::exception& ex) {
      return fail(KOKORO_ERR_INVALID_ARGUMENT, ex.what());
    }
  }
  const kokoro::VoicePack* voice = nullptr;
  try {
    voice = &voice_for(e, key.voice);
  } catch (const std::exception& ex) {
    return fail(KOKORO_ERR_VOICE, ex.what());
  }
  std::shared_ptr<const kokoro::Frontend> frontend;
  try {
    frontend_for(e, key.language);
    frontend = e.frontends.at(key.language);
  } catch (const std::exception& ex) {
    return fail(KOKORO_ERR_LANGUAGE, ex.what());
  }
  kokoro::StreamOptions stream;
  // Chunk schedule and statistics as docs/streaming.md recommends (as kokoro-say does).
  if (mode == kokoro::SynthesisMode::stream) stream = kokoro::recommended_stream_options(voice->name());
  if (mode == kokoro::SynthesisMode::slice) {
    try {
      stream = kokoro::recommended_slice_options(e.synthesizer->model());
    } catch (const std::exception& ex) {
      return fail(KOKORO_ERR_MODEL, ex.what());
    }
  }
  kokoro::EngineVoice ev{key.speed, key.phonemes, key.seed, false};
  std::unique_ptr<Session> old;
  {
    std::lock_guard<std::mutex> lock(e.stop_mutex);
    old = std::move(e.session);
  }
  old.reset();  // joins its threads: outside the lock, which a callback's stop request takes
  auto session = std::make_unique<Session>();
  session->key = key;
  session->engine = std::make_unique<kokoro::StreamEngine>(e.synthesizer, frontend, *voice, e.sink, ev, mode,
                                                           std::move(stream));
  kokoro_engine* ep = &e;
  session->engine->on_report([ep](const kokoro::UtteranceReport& r) {
    // One utterance is in flight per engine (each call waits for its report), so a report that comes
    // while a call waits is that call's.
    std::lock_guard<std::mutex> lock(ep->report_mutex);
    if (ep->waiting_for == 0) return;
    ep->report = r;
    ep->report_cv.notify_all();
  });
  session->engine->on_event([ep](const kokoro::StreamEvent& ev) { ep->sink.deliver_event(ev); });
  std::lock_guard<std::mutex> lock(e.stop_mutex);
  e.session = std::move(session);
  return KOKORO_OK;
}

int speak(kokoro_engine& e, const char* text, const kokoro_speak_options* options, kokoro_audio_callback on_audio,
          kokoro_event_callback on_event, void* user_data) {
  if (!text) return fail(KOKORO_ERR_INVALID_ARGUMENT, "text is NULL");
  const std::string_view view(text);
  if (view.empty()) return fail(KOKORO_ERR_INVALID_ARGUMENT, "text is empty");
  if (!kokoro::utf8::is_valid(view)) return fail(KOKORO_ERR_INVALID_TEXT, "text is not valid UTF-8");
  kokoro_speak_options o{};
  if (options) {
    if (!known_size(options->size, sizeof(kokoro_speak_options), "kokoro_speak_options")) return KOKORO_ERR_STRUCT_SIZE;
    o = *options;
  }
  SessionKey key;
  key.voice = o.voice ? o.voice : "af_heart";
  key.language = o.language ? o.language : kokoro::language_for_voice(key.voice);
  if (key.language.empty()) key.language = "en-us";
  key.mode = o.mode ? o.mode : "";
  key.speed = o.speed == 0.0f ? 1.0f : o.speed;
  key.seed = o.seed;
  key.phonemes = o.phonemes != 0;
  if (!std::isfinite(key.speed) || key.speed < 0.25f || key.speed > 4.0f)
    return fail(KOKORO_ERR_INVALID_ARGUMENT, "speed " + std::to_string(key.speed) + " is outside 0.25..4");
  if (key.voice.empty()) return fail(KOKORO_ERR_VOICE, "voice name is empty");
  if (!kokoro::utf8::is_valid(key.voice) || !kokoro::utf8::is_valid(key.language) || !kokoro::utf8::is_valid(key.mode))
    return fail(KOKORO_ERR_INVALID_ARGUMENT, "voice, language or mode is not valid UTF-8");

  {
    // Under stop_mutex: a kokoro_stop that sees the call busy always reaches it.
    std::lock_guard<std::mutex> lock(e.stop_mutex);
    if (e.busy.load()) return fail(KOKORO_ERR_BUSY, "another kokoro_speak is running on this engine");
    e.busy.store(true);
    e.stop_requested = false;
  }
  struct Release {
    kokoro_engine& e;
    ~Release() {
      e.sink.end_call();
      {
        std::lock_guard<std::mutex> lock(e.report_mutex);
        e.waiting_for = 0;
        e.report.reset();
      }
      e.busy.store(false);
    }
  } release{e};
  if (int rc = prepare_session(e, key); rc != KOKORO_OK) return rc;

  {
    // Under stop_mutex: a kokoro_stop either comes first (nothing is said) or stops what was said.
    std::lock_guard<std::mutex> lock(e.stop_mutex);
    if (e.stop_requested) return fail(KOKORO_STOPPED, "stopped");
    std::lock_guard<std::mutex> rlock(e.report_mutex);
    e.report.reset();
    e.sink.begin_call(on_audio, on_event, user_data);  // before say(): its first event may come at once
    e.waiting_for = e.session->engine->say(std::string(view));
  }
  std::unique_lock<std::mutex> lock(e.report_mutex);
  e.report_cv.wait(lock, [&] { return e.report.has_value(); });
  const kokoro::UtteranceReport r = *e.report;
  lock.unlock();
  if (!r.error.empty()) return fail(KOKORO_ERR_SYNTHESIS, r.error);
  if (r.interrupted || e.sink.call_stopped()) {
    t_last_error = "stopped";
    return KOKORO_STOPPED;
  }
  return KOKORO_OK;
}

int stop(kokoro_engine& e) {
  std::lock_guard<std::mutex> lock(e.stop_mutex);
  if (!e.busy.load()) return KOKORO_OK;
  e.stop_requested = true;
  e.sink.stop_call();  // no callback starts after this
  if (e.session) e.session->engine->stop();
  return KOKORO_OK;
}

}  // namespace

extern "C" {

const char* kokoro_version(void) { return KOKORO_VERSION_STRING; }

const char* kokoro_last_error(void) { return t_last_error.c_str(); }

const char* kokoro_status_string(int status) {
  switch (status) {
    case KOKORO_OK: return "ok";
    case KOKORO_STOPPED: return "stopped";
    case KOKORO_ERR_INVALID_ARGUMENT: return "invalid argument";
    case KOKORO_ERR_INVALID_HANDLE: return "invalid engine handle";
    case KOKORO_ERR_STRUCT_SIZE: return "unknown struct size";
    case KOKORO_ERR_INVALID_TEXT: return "text is not valid UTF-8";
    case KOKORO_ERR_VOICE: return "voice not found";
    case KOKORO_ERR_LANGUAGE: return "language not supported";
    case KOKORO_ERR_BUSY: return "engine busy";
    case KOKORO_ERR_SYNTHESIS: return "synthesis failed";
    case KOKORO_ERR_MODEL: return "model or assets not usable";
    case KOKORO_ERR_INTERNAL: return "internal error";
    default: return "unknown status";
  }
}

kokoro_engine* kokoro_open(const kokoro_config* config) {
  try {
    kokoro_config c{};
    if (config) {
      if (!known_size(config->size, sizeof(kokoro_config), "kokoro_config")) return nullptr;
      c = *config;
    }
    if (c.threads < 0 || c.threads > 64) {
      fail(KOKORO_ERR_INVALID_ARGUMENT, "threads " + std::to_string(c.threads) + " is outside 1..64 (0: default)");
      return nullptr;
    }
    // The engine logs through spdlog's default logger, which writes to stdout: a C host's stdout may be its
    // data channel (sd_kokoro's protocol, a pipe of audio), so the library's messages go to stderr.
    static std::once_flag logger_once;
    std::call_once(logger_once, [] {
      auto logger = std::make_shared<spdlog::logger>("kokoro", std::make_shared<spdlog::sinks::stderr_sink_mt>());
      logger->set_pattern("kokoro: %l: %v");
      spdlog::set_default_logger(std::move(logger));
    });
    spdlog::set_level(c.verbose ? spdlog::level::debug : spdlog::level::warn);
    auto e = std::make_shared<kokoro_engine>();
    try {
      e->assets_dir = kokoro::find_assets_dir(c.assets_dir ? c.assets_dir : "");
      if (c.precision) kokoro::set_precision(kokoro::parse_precision(c.precision, "kokoro_config.precision"));
      else if (const char* env = std::getenv("KOKORO_PRECISION"); env && *env)
        kokoro::set_precision(kokoro::parse_precision(env, "KOKORO_PRECISION"));
      else
        kokoro::set_precision(kokoro::recommended_precision());  // as kokoro-say: bf16-all where the CPU has it
      kokoro::set_num_threads(c.threads ? c.threads : 2);
      const std::string model = kokoro::default_model_path(c.model_path ? c.model_path : "");
      try {
        e->synthesizer = std::make_shared<const kokoro::Synthesizer>(kokoro::ModelFile::open(model));
      } catch (const kokoro::Error& ex) {
        throw kokoro::Error(ex.what() + kokoro::missing_model_hint(model));
      }
      e->voice_names = kokoro::VoicePack::list(e->assets_dir);
      // The default language's frontend now, so that a broken assets directory fails here, not mid-speech.
      frontend_for(*e, "en-us");
    } catch (const std::exception& ex) {
      fail(KOKORO_ERR_MODEL, ex.what());
      return nullptr;
    }
    for (const auto& n : e->voice_names) e->voice_name_ptrs.push_back(n.c_str());
    // A callback's nonzero return stops like kokoro_stop (the engine outlives the call that runs it).
    e->sink.set_stop_handler([](void* engine) { stop(*static_cast<kokoro_engine*>(engine)); }, e.get());
    std::lock_guard<std::mutex> lock(g_registry_mutex);
    g_registry.emplace(e.get(), e);
    return e.get();
  } catch (const std::bad_alloc&) {
    fail(KOKORO_ERR_INTERNAL, "out of memory");
  } catch (const std::exception& ex) {
    fail(KOKORO_ERR_INTERNAL, ex.what());
  } catch (...) {
    fail(KOKORO_ERR_INTERNAL, "unknown error");
  }
  return nullptr;
}

void kokoro_close(kokoro_engine* engine) {
  std::shared_ptr<kokoro_engine> e;
  {
    std::lock_guard<std::mutex> lock(g_registry_mutex);
    auto it = g_registry.find(engine);
    if (it == g_registry.end()) {
      invalid_handle(engine);
      return;
    }
    e = std::move(it->second);
    g_registry.erase(it);
  }
  try {
    stop(*e);
  } catch (...) {
  }
  // The engine is freed here, or by a kokoro_speak still returning on another thread.
}

int kokoro_list_voices(kokoro_engine* engine, const char* const** names, size_t* count) {
  auto e = lookup(engine);
  if (!e) return invalid_handle(engine);
  if (!names || !count) return fail(KOKORO_ERR_INVALID_ARGUMENT, "names and count must not be NULL");
  *names = e->voice_name_ptrs.data();
  *count = e->voice_name_ptrs.size();
  return KOKORO_OK;
}

int kokoro_speak(kokoro_engine* engine, const char* text, const kokoro_speak_options* options,
                 kokoro_audio_callback on_audio, kokoro_event_callback on_event, void* user_data) {
  auto e = lookup(engine);
  if (!e) return invalid_handle(engine);
  try {
    const int status = speak(*e, text, options, on_audio, on_event, user_data);
    // Once, after the audio: the next process reads the weights prepared here instead of preparing them on
    // its first sentence (core/weight_cache.h). Failing to write is not an error.
    if (status == KOKORO_OK && !e->prepared_persisted.exchange(true)) e->synthesizer->model().persist_prepared_weights();
    return status;
  } catch (const std::bad_alloc&) {
    return fail(KOKORO_ERR_INTERNAL, "out of memory");
  } catch (const kokoro::Error& ex) {
    return fail(KOKORO_ERR_SYNTHESIS, ex.what());
  } catch (const std::exception& ex) {
    return fail(KOKORO_ERR_INTERNAL, ex.what());
  } catch (...) {
    return fail(KOKORO_ERR_INTERNAL, "unknown error");
  }
}

int kokoro_stop(kokoro_engine* engine) {
  auto e = lookup(engine);
  if (!e) return invalid_handle(engine);
  try {
    return stop(*e);
  } catch (const std::exception& ex) {
    return fail(KOKORO_ERR_INTERNAL, ex.what());
  } catch (...) {
    return fail(KOKORO_ERR_INTERNAL, "unknown error");
  }
}

}  // extern "C"
