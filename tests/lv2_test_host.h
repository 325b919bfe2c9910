// A small LV2 host on lilv (the reference host library) for kokoro.lv2's tests: finds the plugin on
// LV2_PATH, instantiates it with the features it needs (URID map/unmap, a worker, the log), feeds its control
// port MIDI and patch messages, runs it block by block and keeps what comes out (audio, notifications, log).
//
// Real-time blocks run paced at the sample rate and inside a RealtimeSection, so that the test binary's
// trap (rt_trap.h) counts every allocation, lock or system call the plugin's run() makes. The worker is a
// thread that polls its queue (a semaphore post from run() would itself be a system call, charged to the
// plugin); in freewheel the worker runs synchronously inside schedule_work, as Ardour does when it exports.
#pragma once
#include <lilv/lilv.h>
#include <lv2/atom/forge.h>
#include <lv2/log/log.h>
#include <lv2/urid/urid.h>
#include <lv2/worker/worker.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "ringbuffer/spsc_ring.h"

namespace kokoro::test {

// One atom:Object the plugin sent on its notify port.
struct Lv2Notification {
  uint64_t sample = 0;  // in the whole output (blocks run so far)
  std::string type;     // the object's type URI (urn:kokoro-rt:speaker#Word, patch:Set, ...)
  std::map<std::string, std::string> strings;  // property URI -> string, path or URID (as its URI)
  std::map<std::string, int64_t> numbers;      // property URI -> int or long
};

class Lv2TestHost {
 public:
  static constexpr const char* kPluginUri = "urn:kokoro-rt:speaker";
  static constexpr const char* kNs = "urn:kokoro-rt:speaker#";
  static constexpr uint32_t kAtomBufferBytes = 65536;  // the plugin's rsz:minimumSize
  enum class Mode { realtime, freewheel };

  // Throws std::runtime_error when the plugin is not on LV2_PATH or does not instantiate.
  explicit Lv2TestHost(double rate = 48000, uint32_t block = 256);
  ~Lv2TestHost();
  Lv2TestHost(const Lv2TestHost&) = delete;
  Lv2TestHost& operator=(const Lv2TestHost&) = delete;

  double rate() const { return rate_; }
  uint32_t block() const { return block_; }
  std::string binary_path() const;  // the plugin library lilv loaded

  // The scale points (value, label) of a control port, in the order of their values.
  std::vector<std::pair<float, std::string>> scale_points(const std::string& symbol) const;
  void set_control(const std::string& symbol, float value);
  float control(const std::string& symbol) const;

  // Events for the next block, at `frame` within it.
  void midi(uint32_t frame, std::vector<uint8_t> bytes);
  void note_on(uint32_t frame, uint8_t note = 60) { midi(frame, {0x90, note, 100}); }
  void all_notes_off(uint32_t frame) { midi(frame, {0xB0, 123, 0}); }
  // patch:Set of urn:kokoro-rt:speaker#<name> ("text": atom:String, "file": atom:Path).
  void set_property(uint32_t frame, const std::string& name, const std::string& value);
  void get_properties(uint32_t frame);

  // Runs one block. Real time: waits for the block's time (a steady clock, as a sound card would), runs the
  // plugin inside a RealtimeSection. Freewheel: sets the freewheel port, runs at once, worker synchronous.
  void run_block(Mode mode);
  void run_blocks(std::size_t count, Mode mode);
  // Runs blocks until `done` (checked after each block) or `max_seconds` of output; true if done.
  bool run_until(const std::function<bool()>& done, double max_seconds, Mode mode);
  // Runs until the plugin reports the end of one more utterance than so far (an UtteranceEnd notification).
  bool run_until_utterance_ends(double max_seconds, Mode mode);

  const std::vector<float>& audio() const { return audio_; }
  uint64_t samples() const { return audio_.size(); }
  const std::vector<Lv2Notification>& notifications() const { return notifications_; }
  std::vector<Lv2Notification> notifications_of(const std::string& type_suffix) const;
  std::vector<std::string> log() const;
  // Waits until the log has `count` lines (the worker and speaker threads write them), at most `seconds`.
  bool wait_for_log(std::size_t count, double seconds) const;

  // The instance's state (its properties and control port values) as lilv serialises it.
  std::string save_state();
  void restore_state(const std::string& state);

  LV2_URID map(const char* uri);
  const char* unmap(LV2_URID urid) const;

 private:
  static LV2_Worker_Status schedule_work(LV2_Worker_Schedule_Handle handle, uint32_t size, const void* data);
  static LV2_Worker_Status respond(LV2_Worker_Respond_Handle handle, uint32_t size, const void* data);
  static int log_printf(LV2_Log_Handle handle, LV2_URID type, const char* fmt, ...);
  static int log_vprintf(LV2_Log_Handle handle, LV2_URID type, const char* fmt, va_list ap);
  void worker_loop();
  void drain_worker();  // waits until the worker thread has handled every queued request
  void collect_notifications(uint64_t block_start);
  uint32_t port_index(const std::string& symbol) const;

  double rate_;
  uint32_t block_;

  // URID map shared by lilv, the plugin (at instantiation) and the test.
  mutable std::mutex urid_mutex_;
  std::map<std::string, LV2_URID> uris_;
  std::vector<std::string> uri_list_;
  LV2_URID_Map map_{this, [](LV2_URID_Map_Handle h, const char* uri) { return static_cast<Lv2TestHost*>(h)->map(uri); }};
  LV2_URID_Unmap unmap_{this, [](LV2_URID_Unmap_Handle h, LV2_URID u) {
                          return static_cast<const Lv2TestHost*>(h)->unmap(u);
                        }};

  LV2_Worker_Schedule schedule_{this, &Lv2TestHost::schedule_work};
  LV2_Log_Log log_{this, &Lv2TestHost::log_printf, &Lv2TestHost::log_vprintf};
  LV2_Feature map_feature_{LV2_URID__map, &map_};
  LV2_Feature unmap_feature_{LV2_URID__unmap, &unmap_};
  LV2_Feature schedule_feature_{LV2_WORKER__schedule, &schedule_};
  LV2_Feature log_feature_{LV2_LOG__log, &log_};
  const LV2_Feature* features_[5] = {&map_feature_, &unmap_feature_, &schedule_feature_, &log_feature_, nullptr};

  LilvWorld* world_ = nullptr;
  const LilvPlugin* plugin_ = nullptr;
  LilvInstance* instance_ = nullptr;
  const LV2_Worker_Interface* worker_iface_ = nullptr;

  // Ports.
  std::vector<float> controls_;
  std::vector<uint64_t> control_in_, notify_out_;  // 8-byte aligned atom buffers
  std::vector<float> out_;
  struct Pending {
    uint32_t frame;
    std::vector<uint8_t> atom;  // header and body
  };
  std::vector<Pending> pending_;
  LV2_Atom_Forge forge_;

  // Worker: requests from run() through a lock-free ring, polled by the worker thread.
  SpscRing<uint8_t> requests_{1 << 16};
  std::atomic<bool> sync_worker_{false};
  std::atomic<bool> worker_busy_{false};
  std::atomic<bool> quit_{false};
  std::thread worker_;

  mutable std::mutex log_mutex_;
  std::vector<std::string> log_lines_;

  std::vector<float> audio_;
  std::vector<Lv2Notification> notifications_;
  std::chrono::steady_clock::time_point next_block_{};
  bool paced_ = false;
  bool freewheeling_ = false;
};

}  // namespace kokoro::test
