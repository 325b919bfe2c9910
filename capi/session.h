// The C API's model and session objects (include/kokoro.h; capi/kokoro.cpp holds the entry points) and what
// a call does with a session: options read and resolved against the session's defaults, the session's engine
// for the call's mode, and one call at a time: kokoro_session_speak (open_call, then finish_call) or a text
// stream (kokoro_session_begin_text opens the call, kokoro_session_end_text finishes it: capi/text_stream.cpp).
#pragma once
#include <atomic>
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "capi/callback_sink.h"
#include "engine/model.h"
#include "engine/stream_engine.h"
#include "kokoro.h"

namespace kokoro::capi {

// Sets the calling thread's last error (kokoro_last_error) and returns `status`.
int fail(int status, const std::string& message);
std::string& last_error();  // the calling thread's

// kokoro_speak_options with its strings owned (a session's defaults outlive the caller's struct).
struct OwnedOptions {
  std::optional<std::string> voice, language, mode;
  float speed = 0;
  uint64_t seed = 0;
  bool seed_set = false;
  int phonemes = 0;
};

// What one call resolves to: the session's defaults under the call's nonzero fields.
struct CallSettings {
  std::string voice, language, mode;
  float speed = 1.0f;
  uint64_t seed = 0;
  bool phonemes = false;
};

// A struct's size field: 0 (zero-initialised: this header's version) or exactly the size we know (else the
// error is set).
bool known_size(size_t size, size_t ours, const char* what);
// Copies and checks a caller's options (NULL: none set). KOKORO_OK, or the error (set).
int read_options(const kokoro_speak_options* options, OwnedOptions& out);
// The call's settings: its own fields, else the session's defaults, else the library's. False with the error set.
bool resolve(const OwnedOptions& defaults, const OwnedOptions& call, CallSettings& out, int& status);
bool parse_mode(const std::string& name, SynthesisMode& mode, int& status);

}  // namespace kokoro::capi

struct kokoro_model {
  std::shared_ptr<const kokoro::Model> model;
  std::vector<const char*> voice_name_ptrs;
  std::atomic<bool> prepared_persisted{false};  // the first successful speak writes the prepared weights
};

struct kokoro_session {
  std::shared_ptr<kokoro_model> model;  // keeps the model (and its voice name strings) alive
  kokoro::capi::OwnedOptions defaults;

  kokoro::capi::CallbackSink sink;
  std::atomic<bool> busy{false};

  // Guards `engine` against kokoro_session_stop while a speak replaces it, and orders stop against say; and
  // the text stream's fields below.
  std::mutex stop_mutex;
  bool stop_requested = false;
  std::unique_ptr<kokoro::StreamEngine> engine;
  kokoro::SynthesisMode engine_mode = kokoro::SynthesisMode::slice;

  // The report of the utterance being spoken (set on the engine's output thread).
  std::mutex report_mutex;
  std::condition_variable report_cv;
  uint64_t waiting_for = 0;
  std::optional<kokoro::UtteranceReport> report;

  // The open text stream (kokoro_session_begin_text): its utterance (0: none), and the first bytes of a
  // character whose last bytes have not been appended yet (to check the UTF-8 of each piece as a whole).
  uint64_t stream = 0;
  std::string stream_tail;

  ~kokoro_session() {
    // The engine's threads use `sink`; they must be gone before it is.
    engine.reset();
  }
};

namespace kokoro::capi {

// The session's engine for this mode: the existing one when the mode matches, else a new one.
int prepare_engine(kokoro_session& s, SynthesisMode mode);
// Opens a call: options checked and resolved, the session taken (KOKORO_ERR_BUSY if a call is open), voice,
// language and engine ready, the sink's callbacks set, and `start` run (under the session's stop lock) to
// queue the utterance; its result is the utterance finish_call waits for. KOKORO_OK, or the error (set; the
// session is free again).
int open_call(kokoro_session& s, const kokoro_speak_options* options, kokoro_audio_callback on_audio,
              kokoro_event_callback on_event, void* user_data,
              const std::function<uint64_t(StreamEngine&, UtteranceSettings)>& start);
// Waits for the call's utterance to be reported, frees the session and returns the call's status.
int finish_call(kokoro_session& s);
int speak(kokoro_session& s, const char* text, const kokoro_speak_options* options, kokoro_audio_callback on_audio,
          kokoro_event_callback on_event, void* user_data);
int stop(kokoro_session& s);

// Text that streams in (capi/text_stream.cpp).
int begin_text(kokoro_session& s, const kokoro_speak_options* options, kokoro_audio_callback on_audio,
               kokoro_event_callback on_event, void* user_data, double pause_flush_seconds);
int append_text(kokoro_session& s, const char* text, size_t length);
int end_text(kokoro_session& s);

}  // namespace kokoro::capi
