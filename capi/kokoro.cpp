// The C interface (include/kokoro.h) over the engine's model/session split (engine/model.h): a thin layer that
// checks arguments, keeps registries of open handles, and turns a session's sink writes and events into the
// caller's callbacks.
//
//   kokoro_model   -> kokoro::Model (weights, frontends, voices, the compute scheduler), shared by sessions
//   kokoro_session -> one StreamEngine (its threads, rings, a CallbackSink); voice, language, speed and seed
//                     go with each utterance, so only a change of mode rebuilds the engine
//   kokoro_engine  -> a session that owns its own model (the API before sessions existed)
//
// Why registries: C callers pass handles back after closing them by mistake; looking the pointer up in a set
// of live handles (never dereferencing it) turns that into KOKORO_ERR_INVALID_HANDLE instead of a
// use-after-free. Each call holds a shared_ptr to the object for its duration, so closing from another
// thread during a speak stops the speech and the object is freed when the speaking call lets go.
#include "kokoro.h"

#include <spdlog/sinks/stdout_sinks.h>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <memory>
#include <new>
#include <string>
#include <thread>

#include "capi/registry.h"
#include "capi/session.h"
#include "core/assets.h"
#include "core/error.h"
#include "core/model_file.h"
#include "core/parallel.h"
#include "core/precision.h"
#include "engine/model.h"
#include "frontend/utf8.h"

#ifndef KOKORO_VERSION_STRING
#define KOKORO_VERSION_STRING "0.0.0"
#endif

struct kokoro_engine {
  std::shared_ptr<kokoro_session> session;
};

namespace {

using kokoro::capi::CallSettings;
using kokoro::capi::fail;
using kokoro::capi::known_size;
using kokoro::capi::OwnedOptions;
using kokoro::capi::parse_mode;
using kokoro::capi::prepare_engine;
using kokoro::capi::read_options;
using kokoro::capi::Registry;
using kokoro::capi::resolve;
using kokoro::capi::speak;
using kokoro::capi::stop;

Registry<kokoro_model> g_models;
Registry<kokoro_session> g_sessions;
Registry<kokoro_engine> g_engines;

int invalid_handle(const void* handle, const char* what, const char* from) {
  return fail(KOKORO_ERR_INVALID_HANDLE, handle ? std::string(what) + " handle is not open (closed already, or not from " + from + ")"
                                                : std::string(what) + " handle is NULL");
}

// Runs a C entry point's body: no C++ exception leaves the library.
template <typename F>
int guarded(F&& body) {
  try {
    return body();
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

std::shared_ptr<kokoro_model> open_model(const kokoro_config* config) {
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
  auto m = std::make_shared<kokoro_model>();
  try {
    kokoro::ModelOptions mo;
    mo.assets_dir = kokoro::find_assets_dir(c.assets_dir ? c.assets_dir : "");
    if (c.precision) kokoro::set_precision(kokoro::parse_precision(c.precision, "kokoro_config.precision"));
    else if (const char* env = std::getenv("KOKORO_PRECISION"); env && *env)
      kokoro::set_precision(kokoro::parse_precision(env, "KOKORO_PRECISION"));
    else
      kokoro::set_precision(kokoro::recommended_precision());  // as kokoro-say: int8 or bf16-all where the CPU has them
    kokoro::set_num_threads(c.threads ? c.threads : 2);
    // Slots for the scheduler: the compute threads, but no more than the machine's cores.
    const int cores = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
    mo.compute_slots = std::min(kokoro::num_threads(), cores);
    mo.model_path = kokoro::default_model_path(c.model_path ? c.model_path : "");
    try {
      m->model = kokoro::Model::open(mo);
    } catch (const kokoro::Error& ex) {
      throw kokoro::Error(ex.what() + kokoro::missing_model_hint(mo.model_path));
    }
  } catch (const std::exception& ex) {
    fail(KOKORO_ERR_MODEL, ex.what());
    return nullptr;
  }
  for (const auto& n : m->model->voice_names()) m->voice_name_ptrs.push_back(n.c_str());
  return m;
}

std::shared_ptr<kokoro_session> new_session(const std::shared_ptr<kokoro_model>& model, const kokoro_speak_options* defaults) {
  auto s = std::make_shared<kokoro_session>();
  s->model = model;
  if (read_options(defaults, s->defaults) != KOKORO_OK) return nullptr;
  CallSettings c;
  int status = KOKORO_OK;
  if (!resolve(s->defaults, OwnedOptions{}, c, status)) return nullptr;
  kokoro::SynthesisMode mode;
  if (!parse_mode(c.mode, mode, status)) return nullptr;
  if (s->defaults.voice) {  // a voice asked for now fails now; the default voice is looked up when it speaks
    try {
      model->model->voice(c.voice);
    } catch (const std::exception& ex) {
      fail(KOKORO_ERR_VOICE, ex.what());
      return nullptr;
    }
  }
  // A callback's nonzero return stops like kokoro_session_stop (the session outlives the call that runs it).
  s->sink.set_stop_handler([](void* session) { stop(*static_cast<kokoro_session*>(session)); }, s.get());
  // Its engine (threads, rings) now: a session counts in the model's load from its start, and its first
  // call does not pay for the threads.
  if (prepare_engine(*s, mode) != KOKORO_OK) return nullptr;
  return s;
}

void persist_prepared_once(kokoro_model& m) {
  // Once, after the audio: the next process reads the weights prepared here instead of preparing them on its
  // first sentence (core/weight_cache.h). Failing to write is not an error.
  if (!m.prepared_persisted.exchange(true)) m.model->synthesizer()->model().persist_prepared_weights();
}

}  // namespace

extern "C" {

const char* kokoro_version(void) { return KOKORO_VERSION_STRING; }

const char* kokoro_last_error(void) { return kokoro::capi::last_error().c_str(); }

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

// ---- models and sessions

kokoro_model* kokoro_model_open(const kokoro_config* config) {
  std::shared_ptr<kokoro_model> m;
  guarded([&] {
    m = open_model(config);
    return KOKORO_OK;
  });
  if (!m) return nullptr;
  g_models.add(m);
  return m.get();
}

void kokoro_model_close(kokoro_model* model) {
  if (!g_models.take(model)) invalid_handle(model, "model", "kokoro_model_open");
  // Freed here, or with its last session.
}

int kokoro_model_list_voices(kokoro_model* model, const char* const** names, size_t* count) {
  auto m = g_models.find(model);
  if (!m) return invalid_handle(model, "model", "kokoro_model_open");
  if (!names || !count) return fail(KOKORO_ERR_INVALID_ARGUMENT, "names and count must not be NULL");
  *names = m->voice_name_ptrs.data();
  *count = m->voice_name_ptrs.size();
  return KOKORO_OK;
}

int kokoro_model_load(kokoro_model* model, kokoro_load* load) {
  auto m = g_models.find(model);
  if (!m) return invalid_handle(model, "model", "kokoro_model_open");
  if (!load) return fail(KOKORO_ERR_INVALID_ARGUMENT, "load must not be NULL");
  if (!known_size(load->size, sizeof(kokoro_load), "kokoro_load")) return KOKORO_ERR_STRUCT_SIZE;
  const kokoro::ComputeLoad l = m->model->scheduler()->load();
  load->size = sizeof(kokoro_load);
  load->sessions = l.sessions;
  load->speaking = l.speaking;
  load->demand = l.demand;
  load->capacity = l.capacity;
  load->admit = l.admit ? 1 : 0;
  return KOKORO_OK;
}

int kokoro_model_assets_dir(kokoro_model* model, const char** dir) {
  auto m = g_models.find(model);
  if (!m) return invalid_handle(model, "model", "kokoro_model_open");
  if (!dir) return fail(KOKORO_ERR_INVALID_ARGUMENT, "dir must not be NULL");
  *dir = m->model->assets_dir().c_str();
  return KOKORO_OK;
}

int kokoro_model_phonemize(kokoro_model* model, const char* text, const char* language, const char** phonemes) {
  auto m = g_models.find(model);
  if (!m) return invalid_handle(model, "model", "kokoro_model_open");
  if (!text || !phonemes) return fail(KOKORO_ERR_INVALID_ARGUMENT, "text and phonemes must not be NULL");
  if (!kokoro::utf8::is_valid(text)) return fail(KOKORO_ERR_INVALID_TEXT, "text is not valid UTF-8");
  if (language && !kokoro::utf8::is_valid(language)) return fail(KOKORO_ERR_INVALID_ARGUMENT, "language is not valid UTF-8");
  return guarded([&] {
    std::shared_ptr<const kokoro::Frontend> frontend;
    try {
      frontend = m->model->frontend(language ? language : "en-us");
    } catch (const std::exception& ex) {
      return fail(KOKORO_ERR_LANGUAGE, ex.what());
    }
    // Per thread, as kokoro_last_error: the caller reads it before its next call.
    thread_local std::string t_phonemes;
    std::string out;
    for (const kokoro::Segment& seg : frontend->segment(text)) {
      if (seg.phonemes.empty()) continue;
      if (!out.empty()) out += '\n';
      out += seg.phonemes;
    }
    t_phonemes = std::move(out);
    *phonemes = t_phonemes.c_str();
    return KOKORO_OK;
  });
}

kokoro_session* kokoro_session_new(kokoro_model* model, const kokoro_speak_options* defaults) {
  auto m = g_models.find(model);
  if (!m) {
    invalid_handle(model, "model", "kokoro_model_open");
    return nullptr;
  }
  std::shared_ptr<kokoro_session> s;
  guarded([&] {
    s = new_session(m, defaults);
    return KOKORO_OK;
  });
  if (!s) return nullptr;
  g_sessions.add(s);
  return s.get();
}

int kokoro_session_speak(kokoro_session* session, const char* text, const kokoro_speak_options* options,
                         kokoro_audio_callback on_audio, kokoro_event_callback on_event, void* user_data) {
  auto s = g_sessions.find(session);
  if (!s) return invalid_handle(session, "session", "kokoro_session_new");
  return guarded([&] {
    const int status = speak(*s, text, options, on_audio, on_event, user_data);
    if (status == KOKORO_OK) persist_prepared_once(*s->model);
    return status;
  });
}

int kokoro_session_begin_text(kokoro_session* session, const kokoro_speak_options* options,
                              kokoro_audio_callback on_audio, kokoro_event_callback on_event, void* user_data,
                              double pause_flush_seconds) {
  auto s = g_sessions.find(session);
  if (!s) return invalid_handle(session, "session", "kokoro_session_new");
  return guarded([&] { return kokoro::capi::begin_text(*s, options, on_audio, on_event, user_data, pause_flush_seconds); });
}

int kokoro_session_append_text(kokoro_session* session, const char* text, size_t length) {
  auto s = g_sessions.find(session);
  if (!s) return invalid_handle(session, "session", "kokoro_session_new");
  return guarded([&] { return kokoro::capi::append_text(*s, text, length); });
}

int kokoro_session_end_text(kokoro_session* session) {
  auto s = g_sessions.find(session);
  if (!s) return invalid_handle(session, "session", "kokoro_session_new");
  return guarded([&] {
    const int status = kokoro::capi::end_text(*s);
    if (status == KOKORO_OK) persist_prepared_once(*s->model);
    return status;
  });
}

int kokoro_session_stop(kokoro_session* session) {
  auto s = g_sessions.find(session);
  if (!s) return invalid_handle(session, "session", "kokoro_session_new");
  return guarded([&] { return stop(*s); });
}

void kokoro_session_close(kokoro_session* session) {
  auto s = g_sessions.take(session);
  if (!s) {
    invalid_handle(session, "session", "kokoro_session_new");
    return;
  }
  guarded([&] { return stop(*s); });
  // Freed here, or by a speak still returning on another thread.
}

// ---- the engine: a model with one session

kokoro_engine* kokoro_open(const kokoro_config* config) {
  std::shared_ptr<kokoro_engine> e;
  guarded([&] {
    std::shared_ptr<kokoro_model> m = open_model(config);
    if (!m) return KOKORO_ERR_MODEL;
    std::shared_ptr<kokoro_session> s = new_session(m, nullptr);
    if (!s) return KOKORO_ERR_MODEL;
    e = std::make_shared<kokoro_engine>();
    e->session = std::move(s);
    return KOKORO_OK;
  });
  if (!e) return nullptr;
  g_engines.add(e);
  return e.get();
}

void kokoro_close(kokoro_engine* engine) {
  auto e = g_engines.take(engine);
  if (!e) {
    invalid_handle(engine, "engine", "kokoro_open");
    return;
  }
  guarded([&] { return stop(*e->session); });
}

int kokoro_list_voices(kokoro_engine* engine, const char* const** names, size_t* count) {
  auto e = g_engines.find(engine);
  if (!e) return invalid_handle(engine, "engine", "kokoro_open");
  if (!names || !count) return fail(KOKORO_ERR_INVALID_ARGUMENT, "names and count must not be NULL");
  *names = e->session->model->voice_name_ptrs.data();
  *count = e->session->model->voice_name_ptrs.size();
  return KOKORO_OK;
}

int kokoro_speak(kokoro_engine* engine, const char* text, const kokoro_speak_options* options,
                 kokoro_audio_callback on_audio, kokoro_event_callback on_event, void* user_data) {
  auto e = g_engines.find(engine);
  if (!e) return invalid_handle(engine, "engine", "kokoro_open");
  return guarded([&] {
    const int status = speak(*e->session, text, options, on_audio, on_event, user_data);
    if (status == KOKORO_OK) persist_prepared_once(*e->session->model);
    return status;
  });
}

int kokoro_stop(kokoro_engine* engine) {
  auto e = g_engines.find(engine);
  if (!e) return invalid_handle(engine, "engine", "kokoro_open");
  return guarded([&] { return stop(*e->session); });
}

}  // extern "C"
