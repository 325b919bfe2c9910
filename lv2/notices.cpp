#include "lv2/notices.h"

#include <cstdio>
#include <cstring>

namespace kokoro::lv2 {
namespace {
// The producers forge at this offset of build_, 8-byte aligned, with the record's size just before.
constexpr std::size_t kAtomOffset = 8;
}  // namespace

Notices::Notices(const Urids& urids, LV2_URID_Map* map, const LV2_Log_Log* log)
    : urids_(urids), log_(log), build_(kMaxAtomBytes + 16), held_(kMaxAtomBytes + 8) {
  lv2_atom_forge_init(&forge_, map);
}

void Notices::error(const char* format, ...) {
  va_list args;
  va_start(args, format);
  message(urids_.log_Error, format, args);
  va_end(args);
}

void Notices::warning(const char* format, ...) {
  va_list args;
  va_start(args, format);
  message(urids_.log_Warning, format, args);
  va_end(args);
}

void Notices::note(const char* format, ...) {
  va_list args;
  va_start(args, format);
  message(urids_.log_Note, format, args);
  va_end(args);
}

void Notices::message(LV2_URID level, const char* format, va_list args) {
  char text[2048];
  va_list copy;
  va_copy(copy, args);
  std::vsnprintf(text, sizeof text, format, copy);
  va_end(copy);
  if (log_)
    log_->printf(log_->handle, level, "kokoro.lv2: %s\n", text);
  else
    std::fprintf(stderr, "kokoro.lv2: %s\n", text);

  std::lock_guard<std::mutex> lock(producer_mutex_);
  lv2_atom_forge_set_buffer(&forge_, build_.data() + kAtomOffset, build_.size() - kAtomOffset);
  LV2_Atom_Forge_Frame frame;
  lv2_atom_forge_object(&forge_, &frame, 0, urids_.Message);
  lv2_atom_forge_key(&forge_, urids_.level);
  lv2_atom_forge_urid(&forge_, level);
  lv2_atom_forge_key(&forge_, urids_.rdfs_comment);
  lv2_atom_forge_string(&forge_, text, static_cast<uint32_t>(std::strlen(text)));
  lv2_atom_forge_pop(&forge_, &frame);
  queue_forged();
}

void Notices::reply_property(LV2_URID property, LV2_URID type, std::string_view value) {
  const std::size_t room = kMaxAtomBytes - 128;  // the patch:Set around the value
  if (value.size() >= room) {
    warning("the %s is %zu bytes, too long for the notify port (%zu at most): not sent to the GUI",
            property == urids_.text ? "text" : "file path", value.size(), room - 1);
    return;
  }
  std::lock_guard<std::mutex> lock(producer_mutex_);
  lv2_atom_forge_set_buffer(&forge_, build_.data() + kAtomOffset, build_.size() - kAtomOffset);
  LV2_Atom_Forge_Frame frame;
  lv2_atom_forge_object(&forge_, &frame, 0, urids_.patch_Set);
  lv2_atom_forge_key(&forge_, urids_.patch_property);
  lv2_atom_forge_urid(&forge_, property);
  lv2_atom_forge_key(&forge_, urids_.patch_value);
  lv2_atom_forge_typed_string(&forge_, type, value.data(), static_cast<uint32_t>(value.size()));
  lv2_atom_forge_pop(&forge_, &frame);
  queue_forged();
}

void Notices::queue_forged() {
  const auto* atom = reinterpret_cast<const LV2_Atom*>(build_.data() + kAtomOffset);
  const uint32_t size = static_cast<uint32_t>(sizeof(LV2_Atom) + atom->size);
  if (size > kMaxAtomBytes) return;  // cannot happen: messages are bounded above, replies checked
  // One record, size then atom, in one write: run() finds all of a record's bytes once it sees its size.
  uint8_t* record = build_.data() + kAtomOffset - sizeof size;
  std::memcpy(record, &size, sizeof size);
  if (ring_.space() < sizeof size + size) return;  // run() has not run for a long time: the log has it
  ring_.write(record, sizeof size + size);
}

void Notices::deliver(LV2_Atom_Forge& forge, int64_t frame) {
  for (;;) {
    if (held_size_ == 0) {
      uint32_t size = 0;
      if (ring_.available() < sizeof size) return;
      ring_.read(reinterpret_cast<uint8_t*>(&size), sizeof size);
      ring_.read(held_.data(), size);
      held_size_ = size;
    }
    if (forge.offset + sizeof(LV2_Atom_Event) + lv2_atom_pad_size(held_size_) > forge.size) return;
    lv2_atom_forge_frame_time(&forge, frame);
    lv2_atom_forge_write(&forge, held_.data(), held_size_);
    held_size_ = 0;
  }
}

}  // namespace kokoro::lv2
