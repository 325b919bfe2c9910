// Text that streams in through the C API (include/kokoro.h: kokoro_session_begin_text, _append_text,
// _end_text) over the engine's streamed utterance (engine/stream_engine.h, begin_text): begin opens a call on
// the session as kokoro_session_speak does, but returns at once; appends go to the engine as they come; end
// waits for the report as kokoro_session_speak does. Each piece's UTF-8 is checked as part of the whole text:
// a character may be split between pieces, its first bytes wait (stream_tail) for the rest.
#include <string>
#include <string_view>

#include "capi/session.h"
#include "frontend/utf8.h"

namespace kokoro::capi {

int begin_text(kokoro_session& s, const kokoro_speak_options* options, kokoro_audio_callback on_audio,
               kokoro_event_callback on_event, void* user_data, double pause_flush_seconds) {
  if (!(pause_flush_seconds >= 0) || pause_flush_seconds > 3600)
    return fail(KOKORO_ERR_INVALID_ARGUMENT, "pause_flush_seconds " + std::to_string(pause_flush_seconds) +
                                                 " is outside 0..3600 (0: the default, " +
                                                 std::to_string(StreamEngine::kDefaultPauseFlushSeconds) + " s)");
  if (pause_flush_seconds == 0) pause_flush_seconds = StreamEngine::kDefaultPauseFlushSeconds;
  return open_call(s, options, on_audio, on_event, user_data, [&](StreamEngine& engine, UtteranceSettings settings) {
    s.stream = engine.begin_text(std::move(settings), pause_flush_seconds);  // under the session's stop lock
    s.stream_tail.clear();
    return s.stream;
  });
}

int append_text(kokoro_session& s, const char* text, size_t length) {
  if (!text && length > 0) return fail(KOKORO_ERR_INVALID_ARGUMENT, "text is NULL");
  std::lock_guard<std::mutex> lock(s.stop_mutex);
  if (!s.stream) return fail(KOKORO_ERR_INVALID_ARGUMENT, "no text stream is open on this session (kokoro_session_begin_text)");
  if (s.stop_requested || s.sink.call_stopped()) return fail(KOKORO_STOPPED, "stopped");
  if (length == 0) return KOKORO_OK;
  const std::string_view piece(text, length);
  std::string whole = s.stream_tail;
  whole.append(piece);
  const size_t tail = utf8::incomplete_tail(whole);
  if (!utf8::is_valid(std::string_view(whole).substr(0, whole.size() - tail)))
    return fail(KOKORO_ERR_INVALID_TEXT, "text is not valid UTF-8 (the piece was not appended)");
  if (!s.engine->append_text(s.stream, piece)) {
    // The utterance is over before its end: stopped, or failed (kokoro_session_end_text says which).
    return fail(KOKORO_STOPPED, "the text stream has ended (stopped or failed); kokoro_session_end_text tells");
  }
  s.stream_tail = whole.substr(whole.size() - tail);
  return KOKORO_OK;
}

int end_text(kokoro_session& s) {
  size_t dangling = 0;
  {
    std::lock_guard<std::mutex> lock(s.stop_mutex);
    if (!s.stream) return fail(KOKORO_ERR_INVALID_ARGUMENT, "no text stream is open on this session (kokoro_session_begin_text)");
    s.engine->end_text(s.stream);  // false when it is over already (stopped, failed): the report is there or coming
    dangling = s.stream_tail.size();
    s.stream = 0;
    s.stream_tail.clear();
  }
  const int status = finish_call(s);
  if (status == KOKORO_OK && dangling > 0)
    return fail(KOKORO_ERR_INVALID_TEXT, "the text ended inside a UTF-8 character: its first " + std::to_string(dangling) +
                                             " byte(s) were not spoken (the rest was)");
  return status;
}

}  // namespace kokoro::capi
