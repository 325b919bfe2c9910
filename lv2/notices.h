// Messages for the user, from the threads that may log (instantiate, the worker, the speaker): each goes to
// the host's log (LV2 log extension; stderr when the host offers none) and, as a finished atom, through a
// lock-free ring to run(), which copies it into the notify port. patch:Set replies (the text and file a GUI
// asks for with patch:Get) travel the same way.
//
// Threads: the producer calls (error, warning, note, reply_property) take a mutex among themselves (they
// all run outside the audio thread); deliver() is run()'s alone and never blocks or allocates.
#pragma once
#include <lv2/atom/forge.h>
#include <lv2/log/log.h>

#include <cstdarg>
#include <cstdint>
#include <mutex>
#include <string_view>
#include <vector>

#include "lv2/uris.h"
#include "ringbuffer/spsc_ring.h"

namespace kokoro::lv2 {

class Notices {
 public:
  // The largest atom a notice may be: what the notify port holds (rsz:minimumSize in kokoro.ttl.in) less
  // room for the speech events of the same block.
  static constexpr std::size_t kMaxAtomBytes = 48 * 1024;

  Notices(const Urids& urids, LV2_URID_Map* map, const LV2_Log_Log* log);

  void error(const char* format, ...) __attribute__((format(printf, 2, 3)));
  void warning(const char* format, ...) __attribute__((format(printf, 2, 3)));
  void note(const char* format, ...) __attribute__((format(printf, 2, 3)));
  // patch:Set of `property` (kokoro:text with an atom:String, kokoro:file with an atom:Path).
  void reply_property(LV2_URID property, LV2_URID type, std::string_view value);

  // run(): appends the queued atoms to the notify sequence at `frame`; what does not fit waits for the next
  // block.
  void deliver(LV2_Atom_Forge& forge, int64_t frame);

 private:
  void message(LV2_URID level, const char* format, va_list args);
  void queue_forged();  // the producer forge's atom into the ring (mutex held)

  const Urids& urids_;
  const LV2_Log_Log* log_;

  std::mutex producer_mutex_;
  LV2_Atom_Forge forge_;  // producers' forge, into build_
  std::vector<uint8_t> build_;

  // Records: uint32_t size, then the atom (header included).
  SpscRing<uint8_t> ring_{256 * 1024};
  // run()'s copy of the record it could not place yet.
  std::vector<uint8_t> held_;
  uint32_t held_size_ = 0;
};

}  // namespace kokoro::lv2
