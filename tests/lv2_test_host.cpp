#include "lv2_test_host.h"

#include <lv2/atom/util.h>
#include <lv2/midi/midi.h>
#include <lv2/patch/patch.h>
#include <lv2/state/state.h>

#include <algorithm>
#include <cmath>
#include <condition_variable>
#include <cstdarg>
#include <cstdio>
#include <cstring>
#include <stdexcept>

#include "realtime/rt_section.h"

namespace kokoro::test {
namespace {

constexpr const char* kFreewheelSymbol = "freewheel";

// Records in the worker's request ring: size, then the bytes (one write, so the reader finds them whole).
struct RequestHeader {
  uint32_t size;
};

}  // namespace

Lv2TestHost::Lv2TestHost(double rate, uint32_t block)
    : rate_(rate), block_(block), control_in_(kAtomBufferBytes / 8), notify_out_(kAtomBufferBytes / 8), out_(block) {
  lv2_atom_forge_init(&forge_, &map_);
  world_ = lilv_world_new();
  lilv_world_load_all(world_);  // LV2_PATH
  LilvNode* uri = lilv_new_uri(world_, kPluginUri);
  plugin_ = lilv_plugins_get_by_uri(lilv_world_get_all_plugins(world_), uri);
  lilv_node_free(uri);
  if (!plugin_) {
    lilv_world_free(world_);
    const char* path = std::getenv("LV2_PATH");
    throw std::runtime_error(std::string("lilv found no ") + kPluginUri + " on LV2_PATH=" + (path ? path : "(unset)"));
  }

  const uint32_t ports = lilv_plugin_get_num_ports(plugin_);
  controls_.assign(ports, 0.0f);
  std::vector<float> defaults(ports, 0.0f);
  lilv_plugin_get_port_ranges_float(plugin_, nullptr, nullptr, defaults.data());
  for (uint32_t i = 0; i < ports; ++i)
    if (!std::isnan(defaults[i])) controls_[i] = defaults[i];

  worker_ = std::thread([this] { worker_loop(); });
  instance_ = lilv_plugin_instantiate(plugin_, rate_, features_);
  if (!instance_) {
    quit_ = true;
    worker_.join();
    lilv_world_free(world_);
    throw std::runtime_error("lilv_plugin_instantiate failed (log: " + std::to_string(log().size()) + " lines)");
  }
  worker_iface_ = static_cast<const LV2_Worker_Interface*>(lilv_instance_get_extension_data(instance_, LV2_WORKER__interface));

  LilvNode* atom_port = lilv_new_uri(world_, LV2_ATOM__AtomPort);
  LilvNode* audio_port = lilv_new_uri(world_, LV2_CORE__AudioPort);
  LilvNode* output = lilv_new_uri(world_, LV2_CORE__OutputPort);
  for (uint32_t i = 0; i < ports; ++i) {
    const LilvPort* port = lilv_plugin_get_port_by_index(plugin_, i);
    void* buffer = &controls_[i];
    if (lilv_port_is_a(plugin_, port, atom_port))
      buffer = lilv_port_is_a(plugin_, port, output) ? notify_out_.data() : control_in_.data();
    else if (lilv_port_is_a(plugin_, port, audio_port))
      buffer = out_.data();
    lilv_instance_connect_port(instance_, i, buffer);
  }
  lilv_node_free(atom_port);
  lilv_node_free(audio_port);
  lilv_node_free(output);
  lilv_instance_activate(instance_);
}

Lv2TestHost::~Lv2TestHost() {
  lilv_instance_deactivate(instance_);
  quit_ = true;
  worker_.join();
  lilv_instance_free(instance_);
  lilv_world_free(world_);
}

std::string Lv2TestHost::binary_path() const {
  char* path = lilv_file_uri_parse(lilv_node_as_uri(lilv_plugin_get_library_uri(plugin_)), nullptr);
  std::string s = path ? path : "";
  lilv_free(path);
  return s;
}

LV2_URID Lv2TestHost::map(const char* uri) {
  std::lock_guard<std::mutex> lock(urid_mutex_);
  auto [it, added] = uris_.emplace(uri, static_cast<LV2_URID>(uri_list_.size() + 1));
  if (added) uri_list_.push_back(uri);
  return it->second;
}

const char* Lv2TestHost::unmap(LV2_URID urid) const {
  std::lock_guard<std::mutex> lock(urid_mutex_);
  return urid >= 1 && urid <= uri_list_.size() ? uri_list_[urid - 1].c_str() : nullptr;
}

uint32_t Lv2TestHost::port_index(const std::string& symbol) const {
  LilvNode* s = lilv_new_string(world_, symbol.c_str());
  const LilvPort* port = lilv_plugin_get_port_by_symbol(plugin_, s);
  lilv_node_free(s);
  if (!port) throw std::runtime_error("no port " + symbol);
  return lilv_port_get_index(plugin_, port);
}

std::vector<std::pair<float, std::string>> Lv2TestHost::scale_points(const std::string& symbol) const {
  std::vector<std::pair<float, std::string>> v;
  LilvScalePoints* points = lilv_port_get_scale_points(plugin_, lilv_plugin_get_port_by_index(plugin_, port_index(symbol)));
  LILV_FOREACH(scale_points, i, points) {
    const LilvScalePoint* p = lilv_scale_points_get(points, i);
    v.emplace_back(lilv_node_as_float(lilv_scale_point_get_value(p)), lilv_node_as_string(lilv_scale_point_get_label(p)));
  }
  lilv_scale_points_free(points);
  std::sort(v.begin(), v.end());
  return v;
}

void Lv2TestHost::set_control(const std::string& symbol, float value) { controls_[port_index(symbol)] = value; }
float Lv2TestHost::control(const std::string& symbol) const { return controls_[port_index(symbol)]; }

void Lv2TestHost::midi(uint32_t frame, std::vector<uint8_t> bytes) {
  Pending p{frame, std::vector<uint8_t>(sizeof(LV2_Atom) + bytes.size())};
  auto* atom = reinterpret_cast<LV2_Atom*>(p.atom.data());
  atom->size = static_cast<uint32_t>(bytes.size());
  atom->type = map(LV2_MIDI__MidiEvent);
  std::memcpy(p.atom.data() + sizeof(LV2_Atom), bytes.data(), bytes.size());
  pending_.push_back(std::move(p));
}

void Lv2TestHost::set_property(uint32_t frame, const std::string& name, const std::string& value) {
  std::vector<uint8_t> buf(value.size() + 256);
  lv2_atom_forge_set_buffer(&forge_, buf.data(), buf.size());
  LV2_Atom_Forge_Frame f;
  lv2_atom_forge_object(&forge_, &f, 0, map(LV2_PATCH__Set));
  lv2_atom_forge_key(&forge_, map(LV2_PATCH__property));
  lv2_atom_forge_urid(&forge_, map((std::string(kNs) + name).c_str()));
  lv2_atom_forge_key(&forge_, map(LV2_PATCH__value));
  const LV2_URID type = map(name == "file" ? LV2_ATOM__Path : LV2_ATOM__String);
  lv2_atom_forge_typed_string(&forge_, type, value.data(), static_cast<uint32_t>(value.size()));
  lv2_atom_forge_pop(&forge_, &f);
  const auto* atom = reinterpret_cast<const LV2_Atom*>(buf.data());
  buf.resize(sizeof(LV2_Atom) + atom->size);
  pending_.push_back({frame, std::move(buf)});
}

void Lv2TestHost::get_properties(uint32_t frame) {
  std::vector<uint8_t> buf(256);
  lv2_atom_forge_set_buffer(&forge_, buf.data(), buf.size());
  LV2_Atom_Forge_Frame f;
  lv2_atom_forge_object(&forge_, &f, 0, map(LV2_PATCH__Get));
  lv2_atom_forge_pop(&forge_, &f);
  buf.resize(sizeof(LV2_Atom) + reinterpret_cast<const LV2_Atom*>(buf.data())->size);
  pending_.push_back({frame, std::move(buf)});
}

void Lv2TestHost::run_block(Mode mode) {
  // Input sequence: the pending events of this block, in frame order.
  std::stable_sort(pending_.begin(), pending_.end(), [](const Pending& a, const Pending& b) { return a.frame < b.frame; });
  lv2_atom_forge_set_buffer(&forge_, reinterpret_cast<uint8_t*>(control_in_.data()), kAtomBufferBytes);
  LV2_Atom_Forge_Frame seq;
  lv2_atom_forge_sequence_head(&forge_, &seq, 0);
  for (const Pending& p : pending_) {
    lv2_atom_forge_frame_time(&forge_, std::min(p.frame, block_ - 1));
    if (!lv2_atom_forge_write(&forge_, p.atom.data(), static_cast<uint32_t>(p.atom.size())))
      throw std::runtime_error("the events of one block exceed the control port's buffer");
  }
  lv2_atom_forge_pop(&forge_, &seq);
  pending_.clear();
  auto* notify = reinterpret_cast<LV2_Atom_Sequence*>(notify_out_.data());
  notify->atom.size = kAtomBufferBytes - sizeof(LV2_Atom);
  notify->atom.type = map(LV2_ATOM__Chunk);

  const bool freewheel = mode == Mode::freewheel;
  controls_[port_index(kFreewheelSymbol)] = freewheel ? 1.0f : 0.0f;
  if (freewheel && !freewheeling_) drain_worker();  // work() must never run on two threads at once
  freewheeling_ = freewheel;
  sync_worker_ = freewheel;
  if (freewheel) {
    paced_ = false;
    lilv_instance_run(instance_, block_);
  } else {
    const auto period = std::chrono::duration_cast<std::chrono::steady_clock::duration>(
        std::chrono::duration<double>(block_ / rate_));
    const auto now = std::chrono::steady_clock::now();
    if (!paced_ || next_block_ < now - 20 * period) next_block_ = now;  // start, or resume after a stall
    std::this_thread::sleep_until(next_block_);
    next_block_ += period;
    paced_ = true;
    rt::RealtimeSection section;
    lilv_instance_run(instance_, block_);
  }
  const uint64_t start = audio_.size();
  audio_.insert(audio_.end(), out_.begin(), out_.end());
  collect_notifications(start);
}

void Lv2TestHost::run_blocks(std::size_t count, Mode mode) {
  for (std::size_t i = 0; i < count; ++i) run_block(mode);
}

bool Lv2TestHost::run_until(const std::function<bool()>& done, double max_seconds, Mode mode) {
  const uint64_t limit = audio_.size() + static_cast<uint64_t>(max_seconds * rate_);
  while (audio_.size() < limit) {
    run_block(mode);
    if (done()) return true;
  }
  return false;
}

bool Lv2TestHost::run_until_utterance_ends(double max_seconds, Mode mode) {
  const std::size_t count = notifications_of("#UtteranceEnd").size() + 1;
  return run_until([&] { return notifications_of("#UtteranceEnd").size() >= count; }, max_seconds, mode);
}

void Lv2TestHost::collect_notifications(uint64_t block_start) {
  const auto* seq = reinterpret_cast<const LV2_Atom_Sequence*>(notify_out_.data());
  if (seq->atom.type != map(LV2_ATOM__Sequence)) return;  // the plugin wrote nothing
  const LV2_URID object = map(LV2_ATOM__Object), blank = map(LV2_ATOM__Blank);
  const LV2_URID string = map(LV2_ATOM__String), path = map(LV2_ATOM__Path), urid = map(LV2_ATOM__URID);
  const LV2_URID int_type = map(LV2_ATOM__Int), long_type = map(LV2_ATOM__Long);
  LV2_ATOM_SEQUENCE_FOREACH(seq, ev) {
    if (ev->body.type != object && ev->body.type != blank) continue;
    const auto* obj = reinterpret_cast<const LV2_Atom_Object*>(&ev->body);
    Lv2Notification n;
    n.sample = block_start + static_cast<uint64_t>(ev->time.frames);
    n.type = unmap(obj->body.otype) ? unmap(obj->body.otype) : "";
    LV2_ATOM_OBJECT_FOREACH(obj, prop) {
      const std::string key = unmap(prop->key) ? unmap(prop->key) : "";
      const LV2_Atom& v = prop->value;
      const char* body = static_cast<const char*>(LV2_ATOM_BODY_CONST(&v));
      if (v.type == string || v.type == path)
        n.strings[key] = std::string(body, strnlen(body, v.size));
      else if (v.type == urid)
        n.strings[key] = unmap(reinterpret_cast<const LV2_Atom_URID*>(&v)->body);
      else if (v.type == int_type)
        n.numbers[key] = reinterpret_cast<const LV2_Atom_Int*>(&v)->body;
      else if (v.type == long_type)
        n.numbers[key] = reinterpret_cast<const LV2_Atom_Long*>(&v)->body;
    }
    notifications_.push_back(std::move(n));
  }
}

std::vector<Lv2Notification> Lv2TestHost::notifications_of(const std::string& type_suffix) const {
  std::vector<Lv2Notification> v;
  for (const auto& n : notifications_)
    if (n.type.size() >= type_suffix.size() && n.type.compare(n.type.size() - type_suffix.size(), type_suffix.size(), type_suffix) == 0)
      v.push_back(n);
  return v;
}

// ---- worker -----------------------------------------------------------------------------------------------

LV2_Worker_Status Lv2TestHost::schedule_work(LV2_Worker_Schedule_Handle handle, uint32_t size, const void* data) {
  auto* host = static_cast<Lv2TestHost*>(handle);
  if (host->sync_worker_) {
    return host->worker_iface_->work(lilv_instance_get_handle(host->instance_), &Lv2TestHost::respond, host, size, data);
  }
  // Real time: one lock-free write (jalv would also post a semaphore; this worker polls instead).
  uint8_t record[sizeof(RequestHeader) + 512];
  if (size > 512 || host->requests_.space() < sizeof(RequestHeader) + size) return LV2_WORKER_ERR_NO_SPACE;
  const RequestHeader h{size};
  std::memcpy(record, &h, sizeof h);
  std::memcpy(record + sizeof h, data, size);
  host->requests_.write(record, sizeof h + size);
  return LV2_WORKER_SUCCESS;
}

LV2_Worker_Status Lv2TestHost::respond(LV2_Worker_Respond_Handle, uint32_t, const void*) {
  return LV2_WORKER_ERR_UNKNOWN;  // kokoro.lv2 never answers through the worker: its replies use its own ring
}

void Lv2TestHost::worker_loop() {
  std::vector<uint8_t> data(512);
  while (!quit_) {
    worker_busy_ = true;
    RequestHeader h{};
    if (requests_.available() < sizeof h) {
      worker_busy_ = false;
      std::this_thread::sleep_for(std::chrono::microseconds(200));
      continue;
    }
    requests_.read(reinterpret_cast<uint8_t*>(&h), sizeof h);
    requests_.read(data.data(), h.size);
    worker_iface_->work(lilv_instance_get_handle(instance_), &Lv2TestHost::respond, this, h.size, data.data());
  }
}

void Lv2TestHost::drain_worker() {
  while (requests_.available() > 0 || worker_busy_) std::this_thread::sleep_for(std::chrono::microseconds(200));
}

// ---- log --------------------------------------------------------------------------------------------------

int Lv2TestHost::log_printf(LV2_Log_Handle handle, LV2_URID type, const char* fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  const int n = log_vprintf(handle, type, fmt, ap);
  va_end(ap);
  return n;
}

int Lv2TestHost::log_vprintf(LV2_Log_Handle handle, LV2_URID type, const char* fmt, va_list ap) {
  auto* host = static_cast<Lv2TestHost*>(handle);
  char text[4096];
  const int n = std::vsnprintf(text, sizeof text, fmt, ap);
  std::string line = std::string(host->unmap(type) ? host->unmap(type) : "?") + " " + text;
  while (!line.empty() && line.back() == '\n') line.pop_back();
  std::fprintf(stderr, "[plugin log] %s\n", line.c_str());
  std::lock_guard<std::mutex> lock(host->log_mutex_);
  host->log_lines_.push_back(std::move(line));
  return n;
}

std::vector<std::string> Lv2TestHost::log() const {
  std::lock_guard<std::mutex> lock(log_mutex_);
  return log_lines_;
}

bool Lv2TestHost::wait_for_log(std::size_t count, double seconds) const {
  const auto until = std::chrono::steady_clock::now() + std::chrono::duration<double>(seconds);
  while (log().size() < count) {
    if (std::chrono::steady_clock::now() > until) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  return true;
}

// ---- state ------------------------------------------------------------------------------------------------

std::string Lv2TestHost::save_state() {
  LilvState* state = lilv_state_new_from_instance(
      plugin_, instance_, &map_, nullptr, nullptr, nullptr, nullptr,
      [](const char* symbol, void* user, uint32_t* size, uint32_t* type) -> const void* {
        auto* host = static_cast<Lv2TestHost*>(user);
        const uint32_t i = host->port_index(symbol);
        *size = sizeof(float);
        *type = host->map(LV2_ATOM__Float);
        return &host->controls_[i];
      },
      this, LV2_STATE_IS_POD | LV2_STATE_IS_PORTABLE, features_);
  if (!state) throw std::runtime_error("lilv_state_new_from_instance failed");
  char* text = lilv_state_to_string(world_, &map_, &unmap_, state, "urn:kokoro-rt:test-state", nullptr);
  std::string s = text ? text : "";
  lilv_free(text);
  lilv_state_free(state);
  return s;
}

void Lv2TestHost::restore_state(const std::string& text) {
  drain_worker();  // restore() belongs to the instantiation class: never beside work()
  LilvState* state = lilv_state_new_from_string(world_, &map_, text.c_str());
  if (!state) throw std::runtime_error("lilv_state_new_from_string failed");
  lilv_state_restore(
      state, instance_,
      [](const char* symbol, void* user, const void* value, uint32_t size, uint32_t type) {
        auto* host = static_cast<Lv2TestHost*>(user);
        if (type == host->map(LV2_ATOM__Float) && size == sizeof(float))
          std::memcpy(&host->controls_[host->port_index(symbol)], value, sizeof(float));
      },
      this, 0, features_);
  lilv_state_free(state);
}

}  // namespace kokoro::test
