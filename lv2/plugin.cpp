// kokoro.lv2: the engine as an LV2 instrument (urn:kokoro-rt:speaker). The LV2 entry points and the glue
// between the plugin's threads (messages.h has the map):
//   instantiate()  loads the model (about a second; not real-time) and starts the speaker thread
//   run()          audio thread: MIDI and patch messages in, samples and notifications out (playback.h)
//   work()         the host's worker thread: text, files, cues, requests to the speaker (script.h)
//   save/restore   the text and file properties (LV2 state)
#include <lv2/atom/forge.h>
#include <lv2/atom/util.h>
#include <lv2/core/lv2.h>
#include <lv2/log/log.h>
#include <lv2/state/state.h>
#include <lv2/worker/worker.h>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>

#include "lv2/engine_link.h"
#include "lv2/messages.h"
#include "lv2/notices.h"
#include "lv2/playback.h"
#include "lv2/script.h"
#include "lv2/speaker.h"
#include "lv2/uris.h"
#include "lv2/voices.h"  // generated from voices.txt: kVoices

namespace kokoro::lv2 {
namespace {

// Texts and paths on their way from run() to the worker (patch:Set). A larger text is refused with a
// reason; the file property takes any text up to Script::kMaxTextBytes.
constexpr std::size_t kPayloadRingBytes = 2u << 20;
constexpr float kMinGainDb = -60.0f, kMaxGainDb = 12.0f;
constexpr double kGainSmoothingSeconds = 0.01;

template <typename T>
const T* find_feature(const LV2_Feature* const* features, const char* uri) {
  for (int i = 0; features && features[i]; ++i)
    if (std::strcmp(features[i]->URI, uri) == 0) return static_cast<const T*>(features[i]->data);
  return nullptr;
}

class Plugin final : public SpeechEventSink {
 public:
  Plugin(double rate, LV2_URID_Map* map, const LV2_Worker_Schedule* schedule, const LV2_Log_Log* log)
      : schedule_(schedule), notices_(urids_init(map), map, log) {
    lv2_atom_forge_init(&forge_, map);
    gain_coefficient_ = static_cast<float>(1.0 - std::exp(-1.0 / (kGainSmoothingSeconds * rate)));
    std::string error;
    engine_ = EngineLink::open(error);
    if (!engine_) {
      std::replace(error.begin(), error.end(), '\n', ' ');
      notices_.error("no model, so no speech (the plugin plays silence; load it again once the model is "
                     "installed): %s", error.c_str());
    }
    speaker_ = std::make_unique<Speaker>(engine_.get(), rate, wanted_, notices_);
    playback_ = std::make_unique<Playback>(speaker_->audio(), speaker_->events(), wanted_);
  }

  void connect(uint32_t port, void* data) {
    switch (port) {
      case kPortControl: control_ = static_cast<const LV2_Atom_Sequence*>(data); break;
      case kPortNotify: notify_ = static_cast<LV2_Atom_Sequence*>(data); break;
      case kPortOut: out_ = static_cast<float*>(data); break;
      case kPortSpeed: speed_ = static_cast<const float*>(data); break;
      case kPortGain: gain_db_ = static_cast<const float*>(data); break;
      case kPortVoice: voice_ = static_cast<const float*>(data); break;
      case kPortContinuous: continuous_ = static_cast<const float*>(data); break;
      case kPortFreewheel: freewheel_ = static_cast<const float*>(data); break;
      case kPortLatency: latency_ = static_cast<float*>(data); break;
      default: break;
    }
  }

  // activate/deactivate: whatever was playing stops (not real-time: the speaker is told directly).
  void reset() {
    SpeakRequest stop;
    stop.gen = playback_->barge_in(0, *this, 0);
    playback_->abandon();
    speaker_->submit(std::move(stop));
  }

  void run(uint32_t n) {
    if (latency_) *latency_ = 0.0f;
    notify_ok_ = false;
    if (notify_) {
      lv2_atom_forge_set_buffer(&forge_, reinterpret_cast<uint8_t*>(notify_), notify_->atom.size);
      notify_ok_ = lv2_atom_forge_sequence_head(&forge_, &notify_frame_, 0) != 0;
      if (notify_ok_) notices_.deliver(forge_, 0);
    }
    const bool freewheel = freewheel_ && *freewheel_ > 0.5f;
    uint32_t done = 0;
    if (control_) {
      LV2_ATOM_SEQUENCE_FOREACH(control_, ev) {
        const uint32_t at = static_cast<uint32_t>(std::clamp<int64_t>(ev->time.frames, done, n));
        playback_->render(out_ + done, at - done, freewheel, *this, done);
        done = at;
        handle(ev, at, n);
      }
    }
    playback_->render(out_ + done, n - done, freewheel, *this, done);
    apply_gain(n);
    if (notify_ok_) lv2_atom_forge_pop(&forge_, &notify_frame_);
    notify_ok_ = false;  // the host's buffer is not ours between runs (activate/deactivate must not write it)
  }

  void work(const WorkRequest& r);
  LV2_State_Status save(LV2_State_Store_Function store, LV2_State_Handle handle, const LV2_Feature* const* features);
  LV2_State_Status restore(LV2_State_Retrieve_Function retrieve, LV2_State_Handle handle,
                           const LV2_Feature* const* features);

  void speech_event(const SpeechEvent& e, int64_t frame, uint64_t underrun_frames) override;

 private:
  const Urids& urids_init(LV2_URID_Map* map) {
    urids_.map_all(map);
    return urids_;
  }
  void handle(const LV2_Atom_Event* ev, uint32_t frame, uint32_t n);
  void handle_midi(const uint8_t* m, uint32_t size, uint32_t frame, uint32_t n);
  void handle_patch(const LV2_Atom_Object* obj);
  void send_payload(WorkRequest::Kind kind, const char* data, std::size_t size);
  bool schedule(const WorkRequest& r) {
    if (schedule_->schedule_work(schedule_->handle, sizeof r, &r) == LV2_WORKER_SUCCESS) return true;
    refused_.fetch_add(1, std::memory_order_relaxed);
    return false;
  }
  void apply_gain(uint32_t n) {
    const float db = std::clamp(gain_db_ ? *gain_db_ : 0.0f, kMinGainDb, kMaxGainDb);
    const float target = std::pow(10.0f, db / 20.0f);
    for (uint32_t i = 0; i < n; ++i) {
      gain_ += (target - gain_) * gain_coefficient_;
      out_[i] *= gain_;
    }
  }
  std::string read_payload(const WorkRequest& r) {
    std::string s(r.payload_bytes, '\0');
    payload_.discard_until(r.payload_start);  // a payload whose request was lost is skipped
    payload_.read(s.data(), s.size());
    return s;
  }

  const LV2_Worker_Schedule* schedule_;
  Urids urids_{};
  Notices notices_;                      // before the engine and the speaker, which report through it
  std::unique_ptr<EngineLink> engine_;
  std::atomic<Generation> wanted_{0};
  std::unique_ptr<Speaker> speaker_;     // after the engine: its thread ends before the engine closes
  std::unique_ptr<Playback> playback_;
  Script script_;
  SpscRing<char> payload_{kPayloadRingBytes};
  std::atomic<uint32_t> refused_{0};     // requests run() could not hand to the worker

  // Ports.
  const LV2_Atom_Sequence* control_ = nullptr;
  LV2_Atom_Sequence* notify_ = nullptr;
  float* out_ = nullptr;
  const float *speed_ = nullptr, *gain_db_ = nullptr, *voice_ = nullptr, *continuous_ = nullptr,
              *freewheel_ = nullptr;
  float* latency_ = nullptr;

  // run()'s own.
  LV2_Atom_Forge forge_;
  LV2_Atom_Forge_Frame notify_frame_;
  bool notify_ok_ = false;
  float gain_ = 1.0f, gain_coefficient_ = 0.0f;
};

void Plugin::handle(const LV2_Atom_Event* ev, uint32_t frame, uint32_t n) {
  if (ev->body.type == urids_.midi_MidiEvent) {
    handle_midi(static_cast<const uint8_t*>(LV2_ATOM_BODY_CONST(&ev->body)), ev->body.size, frame, n);
  } else if (ev->body.type == urids_.atom_Object || ev->body.type == urids_.atom_Blank) {
    handle_patch(reinterpret_cast<const LV2_Atom_Object*>(&ev->body));
  }
}

void Plugin::handle_midi(const uint8_t* m, uint32_t size, uint32_t frame, uint32_t n) {
  if (size < 2) return;
  const uint8_t kind = m[0] & 0xF0;
  const bool note_on = kind == 0x90 && size >= 3 && m[2] > 0;  // velocity 0 is a note-off, ignored
  const bool all_off = kind == 0xB0 && size >= 3 && (m[1] == 123 || m[1] == 120);  // all notes / sound off
  if (note_on || all_off) {
    WorkRequest r;
    r.kind = note_on ? WorkRequest::speak : WorkRequest::stop;
    r.gen = playback_->barge_in(n - frame, *this, frame);
    r.speed = std::clamp(speed_ ? *speed_ : 1.0f, 0.5f, 2.0f);
    r.voice = std::clamp(static_cast<int32_t>(std::lround(voice_ ? *voice_ : 0.0f)), 0,
                         static_cast<int32_t>(kVoiceCount) - 1);
    r.continuous = continuous_ && *continuous_ > 0.5f;
    if (!schedule(r)) playback_->abandon();
  } else if (kind == 0xC0) {  // program change: which cue the next note-on speaks
    WorkRequest r;
    r.kind = WorkRequest::select_cue;
    r.cue = m[1];
    schedule(r);
  }
}

void Plugin::handle_patch(const LV2_Atom_Object* obj) {
  if (obj->body.otype == urids_.patch_Get) {
    WorkRequest r;
    r.kind = WorkRequest::get;
    schedule(r);
    return;
  }
  if (obj->body.otype != urids_.patch_Set) return;
  const LV2_Atom* property = nullptr;
  const LV2_Atom* value = nullptr;
  lv2_atom_object_get(obj, urids_.patch_property, &property, urids_.patch_value, &value, 0);
  if (!property || property->type != urids_.atom_URID || !value) return;
  const LV2_URID key = reinterpret_cast<const LV2_Atom_URID*>(property)->body;
  const bool is_string = value->type == urids_.atom_String || value->type == urids_.atom_Path;
  if ((key != urids_.text && key != urids_.file) || !is_string) return;
  const char* body = static_cast<const char*>(LV2_ATOM_BODY_CONST(value));
  send_payload(key == urids_.text ? WorkRequest::set_text : WorkRequest::set_file, body,
               strnlen(body, value->size));
}

void Plugin::send_payload(WorkRequest::Kind kind, const char* data, std::size_t size) {
  WorkRequest r;
  if (size > payload_.space()) {
    r.kind = WorkRequest::refused;
    r.cue = kind;
    r.payload_bytes = static_cast<uint32_t>(std::min<std::size_t>(size, UINT32_MAX));
    schedule(r);
    return;
  }
  r.kind = kind;
  r.payload_start = payload_.write_position();
  r.payload_bytes = static_cast<uint32_t>(size);
  payload_.write(data, size);
  schedule(r);
}

void Plugin::speech_event(const SpeechEvent& e, int64_t frame, uint64_t underrun_frames) {
  // Each notification is below 300 bytes; one that does not fit is left out rather than cut.
  if (!notify_ok_ || forge_.size - forge_.offset < 320) return;
  LV2_URID type = 0;
  switch (e.kind) {
    case SpeechEvent::start: type = urids_.UtteranceStart; break;
    case SpeechEvent::end: type = urids_.UtteranceEnd; break;
    case SpeechEvent::segment_start: type = urids_.SegmentStart; break;
    case SpeechEvent::segment_end: type = urids_.SegmentEnd; break;
    case SpeechEvent::word: type = urids_.Word; break;
    case SpeechEvent::mark: type = urids_.Mark; break;
  }
  lv2_atom_forge_frame_time(&forge_, frame);
  LV2_Atom_Forge_Frame object;
  lv2_atom_forge_object(&forge_, &object, 0, type);
  if (e.kind == SpeechEvent::start || e.kind == SpeechEvent::end) {
    lv2_atom_forge_key(&forge_, urids_.cue);
    lv2_atom_forge_int(&forge_, e.cue);
  }
  if (e.kind == SpeechEvent::end) {
    const char* status = e.status == 0 ? "spoken" : e.status == 1 ? "stopped" : "error";
    lv2_atom_forge_key(&forge_, urids_.status);
    lv2_atom_forge_string(&forge_, status, static_cast<uint32_t>(std::strlen(status)));
    lv2_atom_forge_key(&forge_, urids_.underruns);
    lv2_atom_forge_long(&forge_, static_cast<int64_t>(underrun_frames));
  }
  if (e.kind == SpeechEvent::segment_start || e.kind == SpeechEvent::segment_end || e.kind == SpeechEvent::word) {
    lv2_atom_forge_key(&forge_, urids_.text_begin);
    lv2_atom_forge_long(&forge_, e.text_begin);
    lv2_atom_forge_key(&forge_, urids_.text_end);
    lv2_atom_forge_long(&forge_, e.text_end);
  }
  if (e.kind == SpeechEvent::word || e.kind == SpeechEvent::mark) {
    lv2_atom_forge_key(&forge_, urids_.rdfs_label);
    lv2_atom_forge_string(&forge_, e.text, static_cast<uint32_t>(strnlen(e.text, sizeof e.text)));
  }
  lv2_atom_forge_pop(&forge_, &object);
}

void Plugin::work(const WorkRequest& r) {
  if (const uint32_t k = refused_.exchange(0))
    notices_.warning("%u message(s) from the audio thread were lost: the host's worker queue was full", k);
  switch (r.kind) {
    case WorkRequest::speak: {
      Script::Line line = script_.next(r.continuous != 0);
      SpeakRequest s;
      s.gen = r.gen;
      s.text = std::move(line.text);
      s.voice = kVoices[r.voice];
      s.speed = r.speed;
      s.cue = line.cue;
      s.text_offset = line.text_offset;
      if (s.text.empty()) {
        s.status_if_empty = KOKORO_ERR_INVALID_ARGUMENT;
        notices_.warning("note-on: nothing spoken: %s", line.why.c_str());
      }
      speaker_->submit(std::move(s));
      break;
    }
    case WorkRequest::stop: {
      SpeakRequest s;
      s.gen = r.gen;
      speaker_->submit(std::move(s));
      break;
    }
    case WorkRequest::set_text: {
      if (const std::string why = script_.set_text(read_payload(r)); !why.empty())
        notices_.error("text not changed: %s", why.c_str());
      else if (const std::string file = script_.file(); !file.empty())
        notices_.warning("the text is set, but note-ons speak the file %s: set the file to \"\" to speak the text",
                         file.c_str());
      break;
    }
    case WorkRequest::set_file:
      if (const std::string why = script_.set_file(read_payload(r)); !why.empty())
        notices_.error("%s", why.c_str());
      break;
    case WorkRequest::get:
      notices_.reply_property(urids_.text, urids_.atom_String, script_.text());
      notices_.reply_property(urids_.file, urids_.atom_Path, script_.file());
      break;
    case WorkRequest::select_cue: script_.select(r.cue); break;
    case WorkRequest::refused:
      notices_.error("a %s of %u bytes was refused: more than the %zu bytes a message to the plugin may carry%s",
                     r.cue == WorkRequest::set_text ? "text" : "file path", r.payload_bytes, kPayloadRingBytes,
                     r.cue == WorkRequest::set_text ? " (use the file property for long texts)" : "");
      break;
  }
}

LV2_State_Status Plugin::save(LV2_State_Store_Function store, LV2_State_Handle handle,
                              const LV2_Feature* const* features) {
  const std::string text = script_.text();
  store(handle, urids_.text, text.c_str(), text.size() + 1, urids_.atom_String,
        LV2_STATE_IS_POD | LV2_STATE_IS_PORTABLE);
  const std::string file = script_.file();
  if (file.empty()) return LV2_STATE_SUCCESS;
  const auto* map_path = find_feature<LV2_State_Map_Path>(features, LV2_STATE__mapPath);
  const auto* free_path = find_feature<LV2_State_Free_Path>(features, LV2_STATE__freePath);
  char* abstract = map_path ? map_path->abstract_path(map_path->handle, file.c_str()) : nullptr;
  const char* stored = abstract ? abstract : file.c_str();
  store(handle, urids_.file, stored, std::strlen(stored) + 1, urids_.atom_Path, LV2_STATE_IS_POD | LV2_STATE_IS_PORTABLE);
  if (abstract) free_path ? free_path->free_path(free_path->handle, abstract) : std::free(abstract);
  return LV2_STATE_SUCCESS;
}

LV2_State_Status Plugin::restore(LV2_State_Retrieve_Function retrieve, LV2_State_Handle handle,
                                 const LV2_Feature* const* features) {
  // A value that is missing or of another type falls back to its default (an empty text, no file).
  const auto get = [&](LV2_URID key, LV2_URID want) -> std::string {
    size_t size = 0;
    uint32_t type = 0, flags = 0;
    const void* data = retrieve(handle, key, &size, &type, &flags);
    if (!data || type != want) return "";
    return std::string(static_cast<const char*>(data), strnlen(static_cast<const char*>(data), size));
  };
  if (const std::string why = script_.set_text(get(urids_.text, urids_.atom_String)); !why.empty())
    notices_.error("saved text not restored: %s", why.c_str());
  std::string file = get(urids_.file, urids_.atom_Path);
  if (!file.empty()) {
    const auto* map_path = find_feature<LV2_State_Map_Path>(features, LV2_STATE__mapPath);
    const auto* free_path = find_feature<LV2_State_Free_Path>(features, LV2_STATE__freePath);
    if (char* absolute = map_path ? map_path->absolute_path(map_path->handle, file.c_str()) : nullptr) {
      file = absolute;
      free_path ? free_path->free_path(free_path->handle, absolute) : std::free(absolute);
    }
  }
  if (const std::string why = script_.set_file(file); !why.empty()) notices_.error("saved file: %s", why.c_str());
  return LV2_STATE_SUCCESS;
}

// ---- LV2 entry points -----------------------------------------------------------------------------------

LV2_Handle instantiate(const LV2_Descriptor*, double rate, const char*, const LV2_Feature* const* features) {
  auto* map = const_cast<LV2_URID_Map*>(find_feature<LV2_URID_Map>(features, LV2_URID__map));
  const auto* schedule = find_feature<LV2_Worker_Schedule>(features, LV2_WORKER__schedule);
  const auto* log = find_feature<LV2_Log_Log>(features, LV2_LOG__log);
  if (!map || !schedule) {
    const char* missing = !map ? LV2_URID__map : LV2_WORKER__schedule;
    if (log && map)
      log->printf(log->handle, map->map(map->handle, LV2_LOG__Error), "kokoro.lv2: the host lacks %s\n", missing);
    else
      std::fprintf(stderr, "kokoro.lv2: the host lacks %s\n", missing);
    return nullptr;
  }
  try {
    return new Plugin(rate, map, schedule, log);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "kokoro.lv2: cannot instantiate: %s\n", e.what());
    return nullptr;
  }
}

Plugin* self(LV2_Handle h) { return static_cast<Plugin*>(h); }

void connect_port(LV2_Handle h, uint32_t port, void* data) { self(h)->connect(port, data); }
void activate(LV2_Handle h) { self(h)->reset(); }
void run(LV2_Handle h, uint32_t n) { self(h)->run(n); }
void deactivate(LV2_Handle h) { self(h)->reset(); }
void cleanup(LV2_Handle h) { delete self(h); }

LV2_Worker_Status work(LV2_Handle h, LV2_Worker_Respond_Function, LV2_Worker_Respond_Handle, uint32_t size,
                       const void* data) {
  if (size != sizeof(WorkRequest)) return LV2_WORKER_ERR_UNKNOWN;
  WorkRequest r;
  std::memcpy(&r, data, sizeof r);
  try {
    self(h)->work(r);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "kokoro.lv2: worker: %s\n", e.what());
    return LV2_WORKER_ERR_UNKNOWN;
  }
  return LV2_WORKER_SUCCESS;
}

LV2_Worker_Status work_response(LV2_Handle, uint32_t, const void*) { return LV2_WORKER_SUCCESS; }

LV2_State_Status save(LV2_Handle h, LV2_State_Store_Function store, LV2_State_Handle handle, uint32_t,
                      const LV2_Feature* const* features) {
  try {
    return self(h)->save(store, handle, features);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "kokoro.lv2: save: %s\n", e.what());
    return LV2_STATE_ERR_UNKNOWN;
  }
}

LV2_State_Status restore(LV2_Handle h, LV2_State_Retrieve_Function retrieve, LV2_State_Handle handle, uint32_t,
                         const LV2_Feature* const* features) {
  try {
    return self(h)->restore(retrieve, handle, features);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "kokoro.lv2: restore: %s\n", e.what());
    return LV2_STATE_ERR_UNKNOWN;
  }
}

const void* extension_data(const char* uri) {
  static const LV2_Worker_Interface worker = {work, work_response, nullptr};
  static const LV2_State_Interface state = {save, restore};
  if (std::strcmp(uri, LV2_WORKER__interface) == 0) return &worker;
  if (std::strcmp(uri, LV2_STATE__interface) == 0) return &state;
  return nullptr;
}

const LV2_Descriptor kDescriptor = {KOKORO_LV2_URI, instantiate, connect_port, activate, run,
                                    deactivate,     cleanup,     extension_data};

}  // namespace
}  // namespace kokoro::lv2

extern "C" LV2_SYMBOL_EXPORT const LV2_Descriptor* lv2_descriptor(uint32_t index) {
  return index == 0 ? &kokoro::lv2::kDescriptor : nullptr;
}
