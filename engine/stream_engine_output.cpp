// The streaming engine's output thread (engine/stream_engine.h): hands the audio ring to the sink in blocks,
// delivers each event when the audio before it has been handed over, flushes the sink at a barge-in
// (without waiting for the workers) and drops the stale audio, and keeps exact mode's pre-roll hold
// (engine/stream_engine_preroll.cpp) by comparing two atomics with the clock.
#include <spdlog/spdlog.h>

#include <algorithm>
#include <chrono>
#include <deque>
#include <functional>
#include <vector>

#include "engine/stream_engine.h"

namespace kokoro {

namespace {
constexpr size_t kAudioBlock = 1024;  // samples per sink write
}  // namespace

void StreamEngine::output_loop() {
  uint64_t local_gen = generation_.load();
  bool discarding = false;
  uint64_t discarded = 0;  // ring samples that never reached the sink (stream time = position - discarded)
  uint64_t current = 0;    // utterance whose audio is being written
  std::deque<EventItem> pending;
  std::vector<float> block(kAudioBlock);
  auto seconds = [&](uint64_t position) { return static_cast<double>(position - discarded) / kSampleRate; };
  auto deliver = [&](const EventItem& e) {
    if (e.kind == EventItem::pause) {  // internal: no event for the caller
      try {
        sink_.mark_pause();
      } catch (const std::exception& ex) {
        fail_utterance(e.utterance, ex.what());
      }
      return;
    }
    StreamEvent ev;
    ev.utterance = e.utterance;
    ev.text_begin = e.text_begin;
    ev.text_end = e.text_end;
    ev.time_s = seconds(e.position);
    ev.end_s = seconds(e.end_position);
    switch (e.kind) {
      case EventItem::utterance_start: ev.kind = StreamEvent::Kind::utterance_start; current = e.utterance; break;
      case EventItem::segment_start: ev.kind = StreamEvent::Kind::segment_start; break;
      case EventItem::word: ev.kind = StreamEvent::Kind::word; break;
      case EventItem::segment_end: ev.kind = StreamEvent::Kind::segment_end; break;
      case EventItem::utterance_end: ev.kind = StreamEvent::Kind::utterance_end; break;
      case EventItem::mark: {
        ev.kind = StreamEvent::Kind::mark;
        ev.text_begin = ev.text_end = 0;
        std::lock_guard<std::mutex> lock(mutex_);
        if (e.text_begin >= mark_base_ && e.text_begin - mark_base_ < mark_names_.size())
          ev.name = mark_names_[e.text_begin - mark_base_];
        break;
      }
      default: return;
    }
    if (e.kind == EventItem::utterance_end) {
      try {
        sink_.end_utterance();
      } catch (const std::exception& ex) {
        fail_utterance(e.utterance, ex.what());
      }
    }
    std::function<void(const StreamEvent&)> cb;
    {
      std::lock_guard<std::mutex> lock(mutex_);
      cb = event_cb_;
    }
    if (cb) cb(ev);
    if (e.kind == EventItem::utterance_end) finish_utterance(e.utterance, false);
  };

  for (;;) {
    const uint64_t epoch = wake_epoch();  // before looking at the rings, the generation and the hold (nap)
    if (quit_.load()) return;
    const uint64_t g = generation_.load();
    if (g != local_gen) {
      // Barge-in: silence first (the device drops what it has queued from its next period on), then
      // bookkeeping. Stale audio in the ring is dropped once the next utterance's marker shows where it ends.
      local_gen = g;
      try {
        sink_.flush();
      } catch (const std::exception& ex) {
        spdlog::debug("flush failed: {}", ex.what());
      }
      flushes_.fetch_add(1);
      discarding = true;
      report_stale();
    }
    EventItem ev{};
    bool took_events = false;
    while (events_.pop(ev)) {
      pending.push_back(ev);
      took_events = true;
    }
    if (took_events) wake();  // room in the event ring: the vocoder may be waiting (push_event)
    while (!pending.empty() && pending.front().generation < local_gen) pending.pop_front();
    if (!pending.empty() && pending.front().generation > local_gen) continue;  // a barge-in we have not seen yet
    if (discarding) {
      if (pending.empty() || pending.front().kind != EventItem::utterance_start) {
        nap(epoch);
        continue;
      }
      discarded += audio_.discard_until(pending.front().position);
      discarding = false;
      wake();  // room in the audio ring (push_audio)
    }
    const uint64_t pos = audio_.read_position();
    while (!pending.empty() && pending.front().position <= pos) {
      deliver(pending.front());
      pending.pop_front();
    }
    size_t n = std::min(audio_.available(), block.size());
    if (!pending.empty()) n = std::min<uint64_t>(n, pending.front().position - pos);
    // Pre-roll (read after the ring, so that the hold stored before an utterance's audio is seen with it).
    // A hold behind the read position is a barge-in's leftover: the vocoder replaces it at its next utterance.
    if (uint64_t hold = hold_from_.load(std::memory_order_acquire); hold == pos) {
      const int64_t now = preroll_now_ns(), release = release_at_ns_.load(std::memory_order_acquire);
      if (now < release) {
        // Until the release, or a new decision (preroll_decide wakes); a test's clock moves without notifying.
        nap(epoch, options_.preroll_clock_ns ? std::chrono::nanoseconds(2'000'000) : std::chrono::nanoseconds(release - now));
        continue;
      }
      if (!hold_from_.compare_exchange_strong(hold, kNoHold)) continue;  // a new hold was set meanwhile
    } else if (hold > pos) {
      n = std::min<uint64_t>(n, hold - pos);
    }
    if (n == 0) {
      nap(epoch);
      continue;
    }
    n = audio_.read(block.data(), n);
    wake();  // room in the audio ring: the vocoder may be waiting (push_audio)
    {
      std::lock_guard<std::mutex> lock(mutex_);
      if (auto it = utterances_.find(current); it != utterances_.end()) {
        Utterance& u = it->second;
        if (!u.started_audio) {
          u.started_audio = true;
          u.playback_ns = steady_now_ns();
          u.playback_pos = audio_.read_position() - n;
          note_first_audio(u);  // first_audio_ms, and the stage times' hand-over
          if (u.preroll_held) u.report.preroll_ms = ms_since(u.held_since);
        }
        u.report.audio_seconds += static_cast<double>(n) / kSampleRate;
      }
    }
    size_t written = 0;
    const auto write_begin = Clock::now();
    try {
      written = sink_.write(block.data(), n);
    } catch (const std::exception& ex) {
      fail_utterance(current, ex.what());
    }
    record_output(current, write_begin);
    samples_to_sink_.fetch_add(written);
    discarded += n - written;  // cut short by a barge-in: the rest is stale
  }
}

}  // namespace kokoro
