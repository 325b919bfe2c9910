// What the plugin's threads hand each other. All of it is plain data: it crosses the host's worker queue
// (copied by the host) or a lock-free ring (copied with memcpy).
//
//   run() (audio thread) --WorkRequest via work:schedule--> work() (the host's worker thread)
//   run() --text and paths via the payload ring--> work()
//   work() --SpeakRequest--> the speaker thread --kokoro_speak--> engine threads
//   engine threads --audio at the host's rate via the audio ring--> run()
//   speaker/engine threads --SpeechEvent via the event ring--> run() (positioned in the audio)
//   work()/speaker --finished atoms (messages, patch:Set replies) via the notice ring--> run() --> notify port
#pragma once
#include <cstddef>
#include <cstdint>

namespace kokoro::lv2 {

// Generations: every note-on (and every stop) asks for a new generation of output. run() plays only the
// generation it asked for last; audio and events of older ones are dropped wherever they are.
using Generation = uint32_t;

struct WorkRequest {
  enum Kind : uint32_t {
    speak,        // gen, speed, voice, continuous: speak the next cue (or the whole text)
    stop,         // gen: stop speaking (all notes off)
    set_text,     // payload: the text (UTF-8, not terminated)
    set_file,     // payload: a path
    get,          // answer with patch:Set of text and file on the notify port
    select_cue,   // cue: the next note-on speaks this cue (MIDI program change)
    refused,      // cue: set_text or set_file whose payload_bytes did not fit the payload ring
  };
  Kind kind = speak;
  Generation gen = 0;
  float speed = 1.0f;
  int32_t voice = 0;
  int32_t continuous = 0;
  int32_t cue = 0;
  uint64_t payload_start = 0;  // position of the payload in the payload ring (earlier bytes are stale)
  uint32_t payload_bytes = 0;
};

struct SpeechEvent {
  enum Kind : uint32_t { start, end, segment_start, segment_end, word, mark };
  Kind kind = start;
  Generation gen = 0;
  uint64_t position = 0;  // audio ring position (samples at the host's rate) where it happens
  int64_t text_begin = 0, text_end = 0;  // bytes in the whole text (segments, words)
  int32_t cue = -1;                      // start/end: the cue spoken, -1 for the whole text
  int32_t status = 0;                    // end: kokoro status (0 spoken, 1 stopped, < 0 error)
  char text[112] = {};                   // word: the word; mark: its name (cut at a UTF-8 boundary)
};

}  // namespace kokoro::lv2
