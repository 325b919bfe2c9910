// A device for benchmarks that plays in real time without sound: it starts at its first sample of an
// utterance and consumes 24000 samples per second of wall time, never blocking the writer. Audio that arrives
// after the moment it is due would have run dry on a real device: the device counts an underrun and how long
// it would have played silence, and plays on from there (the lateness delays everything after it, as on a
// real device). The engine sees it as a real-time sink (plays_in_real_time), so its slice planner works
// against this device's queue exactly as against JACK or PortAudio.
#pragma once
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <chrono>
#include <mutex>
#include <optional>
#include <vector>

#include "realtime/audio_sink.h"

namespace kokoro::bench {

struct DryRun {
  int underruns = 0;     // times the device would have run dry within the utterance
  double dry_ms = 0;     // silence it would have played in total
  double max_dry_ms = 0; // longest single gap
};

class SimulatedDeviceSink final : public AudioSink {
 public:
  using Clock = std::chrono::steady_clock;
  using AudioSink::write;
  std::size_t write(const float*, std::size_t n) override {
    std::lock_guard<std::mutex> lock(m_);
    const auto now = Clock::now();
    Written w;
    w.first_sample = total_written_;
    w.samples = n;
    w.written = now;
    if (!playing_) {
      // An utterance's first sample plays now; with queue_utterances(true), after the audio before it if that
      // is still playing (a device's queue is one FIFO: lines said back to back follow each other).
      playing_ = true;
      start_ = queue_utterances_ ? std::max(now, played_until_) : now;
      written_ = 0;
      gap_s_ = 0;
      w.plays = start_;
      w.before_ends = played_until_;  // idle (or never played): the audio before ended then
    }
    const double due_s = gap_s_ + static_cast<double>(written_) / kEngineSampleRate;
    const double late_s = seconds(now) - due_s;
    if (written_ > 0) {
      w.before_ends = at(due_s);
      w.plays = w.before_ends;
    }
    if (written_ > 0 && late_s > kToleranceSeconds) {
      if (!paused_) {  // after mark_pause() the wait is for text, not for the engine
        if (std::getenv("KOKORO_FEED_DEBUG"))  // where it ran dry (bench/text_feed.cpp's debug switch)
          std::fprintf(stderr, "dry at output sample %llu (%llu into the utterance), %.1f ms late\n",
                       static_cast<unsigned long long>(total_written_), static_cast<unsigned long long>(written_),
                       late_s * 1e3);
        ++dry_.underruns;
        dry_.dry_ms += late_s * 1e3;
        dry_.max_dry_ms = std::max(dry_.max_dry_ms, late_s * 1e3);
      }
      gap_s_ += late_s;
      w.plays = now;
    }
    paused_ = false;
    written_ += n;
    total_written_ += n;
    if (keep_log_) log_.push_back(w);
    return n;
  }

  // When the device plays output sample `sample` (counted from the first sample ever written), and when it
  // would have played it had the audio before it come without a gap (the audio before it ended then, or the
  // device was idle since then). From a log kept after keep_play_log(true) (a benchmark's, not real time).
  struct PlayTime {
    Clock::time_point written, plays, without_gap;  // written: when the write holding it came
  };
  // false (the default, kokoro-bench's utterance runs): each utterance plays on an idle device from its first
  // write, so every one is measured alike whatever came before it. true (the text feed's lines): utterances
  // queue behind each other as on a real device.
  void queue_utterances(bool on) {
    std::lock_guard<std::mutex> lock(m_);
    queue_utterances_ = on;
  }
  void keep_play_log(bool on) {
    std::lock_guard<std::mutex> lock(m_);
    keep_log_ = on;
    log_.clear();
  }
  std::optional<PlayTime> play_time(uint64_t sample) const {
    std::lock_guard<std::mutex> lock(m_);
    auto it = std::upper_bound(log_.begin(), log_.end(), sample,
                               [](uint64_t s, const Written& w) { return s < w.first_sample; });
    if (it == log_.begin()) return std::nullopt;
    --it;
    if (sample >= it->first_sample + it->samples) return std::nullopt;
    const auto into = std::chrono::duration_cast<Clock::duration>(
        std::chrono::duration<double>(static_cast<double>(sample - it->first_sample) / kEngineSampleRate));
    return PlayTime{it->written, it->plays + into, std::max(it->before_ends, Clock::time_point()) + into};
  }
  void end_utterance() override {
    std::lock_guard<std::mutex> lock(m_);
    if (playing_) played_until_ = start_ + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(
                                      gap_s_ + static_cast<double>(written_) / kEngineSampleRate));
    playing_ = false;  // the device is idle until the next utterance's first sample
  }
  // A pause within the utterance (text that streams in): running out of audio before the next write is no
  // underrun, as on a device (realtime/playback_queue.h); the play clock goes on from that write.
  void mark_pause() override {
    std::lock_guard<std::mutex> lock(m_);
    paused_ = true;
  }
  void flush() override { end_utterance(); }
  void drain(double) override {}
  void interrupt() override {}
  SinkStats stats() const override {
    std::lock_guard<std::mutex> lock(m_);
    SinkStats s;
    s.output_rate = kEngineSampleRate;
    s.frames_written = total_written_;
    uint64_t played_now = written_;
    if (playing_) {
      const double played = (seconds(Clock::now()) - gap_s_) * kEngineSampleRate;
      played_now = static_cast<uint64_t>(std::clamp(played, 0.0, static_cast<double>(written_)));
    }
    s.frames_played = total_written_ - written_ + played_now;
    s.underruns = static_cast<uint64_t>(dry_.underruns);
    return s;
  }
  std::string describe() const override { return "simulated real-time device (no sound)"; }
  int input_rate() const override { return kEngineSampleRate; }
  bool plays_in_real_time() const override { return true; }

  // Seconds until the device has played everything written so far (0 when idle).
  double seconds_until_played() const { return std::max(0.0, play_end_offset()); }
  // The same, signed: negative when the device has played everything and been idle (or dry) that long.
  double play_end_offset() const {
    std::lock_guard<std::mutex> lock(m_);
    if (!playing_) return std::chrono::duration<double>(played_until_ - Clock::now()).count();
    return gap_s_ + static_cast<double>(written_) / kEngineSampleRate - seconds(Clock::now());
  }

  // What the device would have done since the last call (one utterance).
  DryRun take() {
    std::lock_guard<std::mutex> lock(m_);
    DryRun d = dry_;
    dry_ = {};
    return d;
  }

 private:
  static constexpr double kToleranceSeconds = 0.001;  // below one device period: not heard
  double seconds(Clock::time_point t) const { return std::chrono::duration<double>(t - start_).count(); }
  Clock::time_point at(double s) const {
    return start_ + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(s));
  }
  struct Written {
    uint64_t first_sample = 0, samples = 0;
    Clock::time_point written, plays, before_ends;  // when it came; when its first sample plays; when the audio before it ended
  };

  mutable std::mutex m_;
  bool playing_ = false;
  bool paused_ = false;  // mark_pause() since the last write
  bool queue_utterances_ = false;
  Clock::time_point start_, played_until_;
  uint64_t written_ = 0, total_written_ = 0;
  double gap_s_ = 0;
  DryRun dry_;
  bool keep_log_ = false;
  std::vector<Written> log_;
};

}  // namespace kokoro::bench
