// What note-ons speak: the text property, or the text of the file property when one is set, cut into cues
// (cue_text.h), and the cue the next note-on speaks. Its values are the plugin's saved state.
//
// Threads: changed by the worker (patch:Set, note-ons) and by restore(); read by save(), which the host
// may call at any time from another thread: one mutex (none of this is on the audio thread).
#pragma once
#include <cstdint>
#include <mutex>
#include <string>
#include <vector>

#include "lv2/cue_text.h"

namespace kokoro::lv2 {

class Script {
 public:
  // Texts and files larger than this are refused with a reason (the engine itself streams any length; the
  // limit keeps one property from holding gigabytes in a host session).
  static constexpr std::size_t kMaxTextBytes = 8u << 20;

  // Each returns "" on success, else the reason nothing changed (invalid UTF-8, too large, unreadable).
  std::string set_text(std::string text);
  // Reads the file now. An empty path clears it (the text property is spoken again). A file that cannot be
  // read keeps its path (the state may come from another machine) and makes note-ons report why.
  std::string set_file(const std::string& path);

  struct Line {
    std::string text;         // empty: nothing to speak, `why` says why
    std::string why;
    int32_t cue = -1;         // -1: the whole text
    int64_t text_offset = 0;  // where `text` starts in the whole text
  };
  // The next cue (and moves on, back to the first after the last), or the whole text when `whole`.
  Line next(bool whole);
  // The next note-on speaks cue `index` (modulo the number of cues).
  void select(int32_t index);

  std::string text() const;
  std::string file() const;

 private:
  const std::string& spoken() const { return file_.empty() ? text_ : file_text_; }
  void recut();

  mutable std::mutex mutex_;
  std::string text_, file_, file_text_, file_error_;
  std::vector<Cue> cues_;
  std::size_t cursor_ = 0;
};

// "" if `text` is valid UTF-8, else where it is not ("invalid UTF-8 at byte 12").
std::string utf8_problem(const std::string& text);

}  // namespace kokoro::lv2
