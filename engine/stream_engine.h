// The streaming engine: text in, audio out through three threads joined by lock-free SPSC rings
// (ringbuffer/spsc_ring.h), each bounded so that no stage runs unboundedly ahead of the next.
//
//   say(text) ─► text queue ─► acoustic worker: frontend (pieces of text_piece_bytes) → per segment: tokens
//                              → AcousticModel → word timings; pushes [utterance, segment, words, frames...,
//                              segment end] items into the frame ring (blocks while it is full)
//              ─► frame ring ─► vocoder worker: collects a segment's aligned frames, then
//                              exact:  Decoder::forward over the segment; the start of an utterance's
//                                      playback waits for its pre-roll (engine/preroll.h)
//                              slice:  Decoder::features over the segment (exact), then the generator in
//                                      slices that carry their state (StreamDecoder, growing slice sizes,
//                                      the statistics predictor's statistics)
//                              and pushes audio into the audio ring and events (with their sample
//                              positions) into the event ring (blocks while full)
//              ─► audio ring ─► output thread: the only caller of the sink's producer API: write(),
//                              end_utterance(), flush(); delivers events and reports at their positions
//
// Barge-in: stop() (or a new say() with interrupt) bumps a generation counter, clears the text queue and
// interrupts the sink. The output thread, which never computes, sees it within 2 ms (or at once when it
// was blocked in write()), flushes the sink (silence from the device's next period on) and discards the
// stale audio; the workers drop stale items and abandon stale work at their next check (between chunks).
// Every item carries its generation, and each utterance's audio begins with a marker event holding the
// audio ring position where it starts, so stale and fresh audio are told apart exactly.
//
// Pre-roll (exact mode, real-time sinks): the vocoder worker decides when an utterance's playback may start
// (when the audio vocoded covers the estimated vocoding of the segments after it, re-decided at every
// progress point of a segment's vocoding, at the latest when its last segment is vocoded or the audio ring
// is full) and publishes it in two atomics, hold_from_ (the
// ring position where the held utterance starts) and release_at_ns_ (when it may start); the output thread
// hands nothing at or after hold_from_ to the sink before that time. A barge-in drops the held audio like
// any other stale audio.
//
// Underruns: when the vocoder falls behind, the device sink plays silence and counts an underrun
// (realtime/); nothing is dropped: the pipeline delivers every sample of every segment in order.
//
// Sessions: an engine is one session on a shared model (engine/model.h): the Synthesizer and frontends are
// immutable and shared, and StreamOptions::scheduler (shared by every session of a model) gives each compute
// item (a segment's acoustic model, a decoder half, a slice, a whole segment) its turn, earliest deadline
// first (engine/compute_scheduler.h). Voice, frontend (language), speed and seed come with each say().
//
// Text that streams in (begin_text, append_text, end_text; stream_engine_text_in.cpp): one utterance whose
// text arrives in pieces. The acoustic worker speaks each sentence as soon as it is known complete
// (frontend/sentence_feed.h), with the same sentences however the text was cut into pieces, so the audio is
// a function of the text; a pause in the input longer than the utterance's pause flush speaks what is there.
//
// Threads: say/begin_text/append_text/end_text/stop/wait_idle/on_report/on_event/stats from any thread.
// Callbacks run on the output thread.
#pragma once
#include <atomic>
#include <chrono>
#include <climits>
#include <condition_variable>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <thread>

#include "core/voice.h"
#include "engine/compute_scheduler.h"
#include "engine/stream_options.h"
#include "engine/synthesizer.h"
#include "engine/utterance_report.h"
#include "frontend/frontend.h"
#include "frontend/vocab.h"
#include "realtime/audio_sink.h"
#include "ringbuffer/spsc_ring.h"

namespace kokoro {

class StreamDecoder;
class StreamProsody;

struct EngineVoice {
  float speed = 1.0f;
  bool phoneme_input = false;  // say() receives phoneme strings instead of text
  uint64_t seed = 0;           // noise seed: the same seed gives the same audio
  bool reference_noise = false;  // the reference tool's deterministic noise (TestNoise) instead of the seed
};

// What one utterance is said with. A null voice or frontend means the engine's own (its constructor's).
struct UtteranceSettings {
  std::shared_ptr<const VoicePack> voice;
  std::shared_ptr<const Frontend> frontend;  // the language
  EngineVoice voice_options;
};

// Counters for tests and benchmarks (any thread; a consistent snapshot of each value, not of the set).
struct StreamEngineStats {
  uint64_t frames_produced = 0;      // aligned frames the acoustic worker pushed
  uint64_t text_bytes_segmented = 0; // text bytes handed to the frontend so far
  uint64_t max_frames_queued = 0;    // high-water mark of the frames in flight to the vocoder worker
  bool acoustic_waiting = false;     // the acoustic worker is blocked on back-pressure now (push_work)
  uint64_t max_audio_queued = 0;     // high-water mark of the audio ring (samples)
  uint64_t samples_to_sink = 0;      // samples handed to the sink
  uint64_t chunks = 0;               // vocoder pushes: slices (slice mode) or segments (exact mode)
  uint64_t flushes = 0;              // barge-ins applied by the output thread
  uint64_t first_segment_holds = 0;    // times the acoustic worker held later segments until the first one was vocoded
  uint64_t slices = 0;                 // generator slices (slice mode)
  uint64_t early_starts = 0;           // segments that started early (slice mode; StreamOptions::early_predictor)
  uint64_t preroll_holds = 0;          // exact mode: utterances whose vocoded audio waited for the pre-roll rule
  uint64_t tokens_ahead = 0;           // streamed text: text encoder columns computed before their sentence ended
  uint64_t naps = 0;                   // times a worker or the output thread slept waiting for another (nap)
  // For tests of the pre-roll: audio samples vocoded so far (the audio ring's write position), whether a
  // hold is set (also a barge-in's leftover, until the next utterance replaces it) and its release time
  // (the pre-roll clock's nanoseconds; INT64_MAX: not before a decision of the vocoder worker).
  uint64_t samples_vocoded = 0;
  bool preroll_holding = false;
  int64_t preroll_release_at_ns = 0;
};

class StreamEngine {
 public:
  StreamEngine(std::shared_ptr<const Synthesizer> synth, std::shared_ptr<const Frontend> frontend, VoicePack voice,
               AudioSink& sink, EngineVoice voice_options, SynthesisMode mode, StreamOptions options);
  ~StreamEngine();
  StreamEngine(const StreamEngine&) = delete;
  StreamEngine& operator=(const StreamEngine&) = delete;

  uint64_t say(std::string text);  // queues with the engine's settings; returns the utterance id at once
  uint64_t say(std::string text, UtteranceSettings settings);  // queues with these settings
  void stop();                     // barge-in: drop everything queued and the utterance being spoken

  // Text that streams in (docs/streaming.md, "Text that streams in"): begin_text opens an utterance whose
  // text comes with append_text, in pieces of any size (a character split between pieces waits for its last
  // byte). Each sentence is spoken as soon as the text after it shows it ended, never split to start
  // earlier; text with no new piece for `pause_flush_seconds` (<= 0: never) is spoken as it is. One
  // utterance (one report, one set of events, text offsets in the whole text) until end_text; stop() ends
  // it (the report says interrupted) and drops the text not spoken yet. Utterances said after it wait for
  // its end. Text read whole at the end: SSML (text starting with '<'), phoneme input.
  static constexpr double kDefaultPauseFlushSeconds = 1.0;
  uint64_t begin_text(double pause_flush_seconds = kDefaultPauseFlushSeconds);  // the engine's settings
  uint64_t begin_text(UtteranceSettings settings, double pause_flush_seconds = kDefaultPauseFlushSeconds);
  // False (the text is dropped) when `utterance` is no open text stream: ended, stopped, failed or unknown.
  bool append_text(uint64_t utterance, std::string_view text);
  bool end_text(uint64_t utterance);
  // Blocks until every utterance said so far is reported (its audio handed to the sink), or timeout.
  bool wait_idle(double timeout_seconds = 3600);
  void on_report(std::function<void(const UtteranceReport&)> callback);
  void on_event(std::function<void(const StreamEvent&)> callback);
  StreamEngineStats stats() const;
  SynthesisMode mode() const { return mode_; }

  // One item of the event ring: a StreamEvent at an absolute audio ring position, or an internal marker.
  struct EventItem {
    // pause: the audio before it may be followed by a wait for text (internal: AudioSink::mark_pause).
    enum Kind : uint32_t { utterance_start, segment_start, word, segment_end, utterance_end, failed, mark, pause };
    uint32_t kind;
    uint64_t generation, utterance;
    uint64_t position, end_position;  // samples, in audio ring positions
    uint64_t text_begin, text_end;
  };
  // What the acoustic worker hands the vocoder worker for one segment, whole: its aligned features (the
  // acoustic model's own tensors, moved, never copied frame by frame), its style row, its words and text,
  // and what exact mode's pre-roll needs to know of the segments after it.
  struct AlignedSegment {
    Tensor asr, f0, n;                     // [512, F], [2F], [2F]
    Tensor shared;                         // [512, F] while f0 and n are still to come (a segment that starts early)
    std::vector<float> style;              // kStyleDim
    int64_t text_begin = 0, text_end = 0;  // bytes in the utterance's text
    std::vector<EventItem> words;          // word events and marks inside it, positions relative to its start (samples)
    std::vector<double> following_frames;  // estimated frames of the segments after it in its text piece
    bool last = false;                     // the utterance's last segment (as far as the acoustic worker knows)
    int64_t frames() const { return asr.dim(1); }
  };
  // One item of the work ring from the acoustic to the vocoder worker (trivially copyable: the ring copies
  // it). A segment item owns its AlignedSegment: whoever takes it from the ring, or fails to push it, frees it.
  struct WorkItem {
    // pause: the acoustic worker waits for text that streams in, with everything before it handed over.
    enum class Kind : uint32_t { utterance_begin, segment, silence, mark, pause, utterance_end };
    Kind kind;
    uint64_t generation, utterance;
    AlignedSegment* segment;  // segment
    int64_t silence_samples;  // silence: an SSML <break> between segments
    uint64_t mark;            // mark: an SSML <mark>, its index in mark_names_
  };

 private:
  struct Utterance {
    std::string text;
    UtteranceSettings settings;  // voice and frontend filled in
    uint64_t generation = 0;
    std::chrono::steady_clock::time_point queued;
    UtteranceReport report;
    bool started_audio = false;
    bool preroll_held = false;                     // its audio waited for the pre-roll rule ...
    std::chrono::steady_clock::time_point held_since;  // ... since then
    // Its playback clock (set by the output thread at its first audio): ring position playback_pos plays at
    // playback_ns (steady_now_ns); the compute deadlines of its later work follow from it.
    int64_t playback_ns = 0;
    uint64_t playback_pos = 0;
    // Text that streams in (begin_text): `text` grows until text_ended.
    bool streamed = false, text_ended = false;
    double pause_flush_seconds = 0;
    int64_t last_text_ns = 0;  // text_now_ns() when its last piece came
    // Stage times (engine/stage_report.h): when its first audio was handed to the sink, and when the last
    // piece of work that finished before then ended (stream_engine_stages.cpp).
    std::chrono::steady_clock::time_point first_audio_at, last_work_end;
    bool any_work = false;
  };
  struct TextItem {
    uint64_t id, generation;
  };

  uint64_t enqueue(Utterance u);  // say() and begin_text(): settings filled in, queued for the acoustic worker
  void acoustic_loop();
  void vocoder_loop();
  void output_loop();
  // Acoustic worker, across the pieces of one utterance: whether its first segment is still to come, and
  // the silence pushed for pause-only segments since the last speech.
  struct TextProgress {
    bool first_segment = true;
    double silent_run = 0;
    // Text that streams in: the text encoder's columns of the sentence still arriving (extend_text_prefix),
    // and the bytes of its text they were computed from.
    TextEncoderPrefix text_prefix;
    size_t text_prefix_bytes = 0;
  };
  // `base`: the text's offset in the utterance's text (events carry offsets in the whole text);
  // `more_follows`: more of the utterance is known to come after this text.
  void speak_text(uint64_t id, uint64_t generation, const std::string& text, const UtteranceSettings& settings,
                  TextProgress& progress, size_t base = 0, bool more_follows = false);
  void speak_stream(uint64_t id, uint64_t generation, const UtteranceSettings& settings);  // stream_engine_text_in.cpp
  // While a streamed sentence's text is awaited: its text encoder columns from the words so far.
  void extend_text_prefix(uint64_t id, uint64_t generation, std::string_view pending, const Frontend& frontend,
                          TextProgress& progress);
  // The streamed text's clock (StreamOptions::text_clock_ns, else steady_now_ns).
  int64_t text_now_ns() const {
    return options_.text_clock_ns ? options_.text_clock_ns->load(std::memory_order_acquire) : steady_now_ns();
  }
  bool push_silence(uint64_t id, uint64_t generation, double seconds);  // acoustic worker: an SSML pause
  // Acoustic worker: an SSML <voice> (empty: the utterance's voice).
  const VoicePack& voice_for(const std::string& name, const UtteranceSettings& settings);
  std::map<std::string, VoicePack> ssml_voices_;                          // acoustic worker only
  bool push_marks(uint64_t id, uint64_t generation, const std::vector<std::string>& names);
  uint64_t remember_mark(const std::string& name);  // its index in mark_names_ (mutex_)
  EventItem inner_mark(const std::string& name, double at_s);  // acoustic worker: a mark inside a segment
  std::deque<std::string> mark_names_;  // SSML mark names by index (mutex_); the oldest are dropped
  uint64_t mark_base_ = 0;              // index of mark_names_.front()
  void synthesize_segment(uint64_t generation, uint64_t utterance);
  // Acoustic worker: blocks while the ring is full, or (segments) while the frames in flight to the vocoder
  // would pass StreamOptions::frame_ring_frames with this one (one segment always fits). False when the
  // utterance went stale or the engine quits; a segment not pushed is freed.
  bool push_work(const WorkItem& item);
  bool push_audio(const float* samples, size_t n, uint64_t generation);
  bool push_event(const EventItem& e, uint64_t generation);
  bool stale(uint64_t generation) const { return generation != generation_.load(std::memory_order_acquire); }
  // How the engine's threads wait for each other (the acoustic and vocoder workers for room in a ring or for
  // the first segment's audio, the vocoder for work, the output thread for audio, events or the pre-roll's
  // release). A thread reads wake_epoch() before it looks at what it waits for and naps with that value; every
  // change such a thread waits for is followed by wake(), which ends the naps begun before it, so none sleeps
  // through the change it looked for. A nap lasts at most `at_most` (the pre-roll's release, the vocoder's
  // idle release, a test's clock) and never more than kNapLimit, a safety net: these naps polled every 2 ms
  // before, and an idle engine woke its two threads 1000 times a second (during a streamed sentence's acoustic
  // model ~100 times, each taking a core from it: docs/benchmarks.md).
  static constexpr std::chrono::milliseconds kNapLimit{50};
  uint64_t wake_epoch() const { return wake_epoch_.load(); }
  void nap(uint64_t epoch, std::chrono::nanoseconds at_most = kNapLimit);
  void wake();
  void add_synth_seconds(uint64_t utterance, double seconds);
  // Stage times of an utterance's report (stream_engine_stages.cpp; any thread but the output thread's
  // first_audio, which needs mutex_ held).
  void record_stage(uint64_t utterance, EngineStage stage, std::chrono::steady_clock::time_point begin,
                    std::chrono::steady_clock::time_point end);
  void record_output(uint64_t utterance, std::chrono::steady_clock::time_point write_begin);
  void record_segment_size(uint64_t utterance, int64_t tokens, int64_t frames);
  static void note_first_audio(Utterance& u);
  void fail_utterance(uint64_t utterance, const std::string& error);
  void finish_utterance(uint64_t utterance, bool interrupted);
  void report_stale();
  void restore_released_pages();  // vocoder worker, at a pause in streamed text
  void return_idle_memory();  // vocoder worker, when an utterance is done and nothing followed it for a while
  // Whether this session may give the weights' pages back now: not while another session computes with them.
  bool may_release_pages() const;
  // Compute turns (engine/compute_scheduler.h). The deadline of an utterance's next work: when its audio
  // would run out without it (`ahead_samples`: audio made but not vocoded yet, for the acoustic worker), or
  // for an utterance not playing yet, when it was queued (but not before this session's previous audio
  // runs out). take_turn blocks until the scheduler grants a slot (at once without a scheduler); false when
  // the utterance went stale or the engine quits meanwhile.
  int64_t deadline_ns(uint64_t utterance, uint64_t ahead_samples) const;
  bool take_turn(ComputeScheduler::Turn& turn, uint64_t generation, int64_t deadline_ns);
  void report_work(double compute_seconds, double audio_seconds);
  int64_t previous_dry_ns_ = 0;  // (mutex_) when the last finished utterance's audio runs out
  using Clock = std::chrono::steady_clock;
  static constexpr int64_t kAsrDim = 512;  // the aligned text features' channels
  static void update_max(std::atomic<uint64_t>& m, uint64_t v) {
    uint64_t cur = m.load(std::memory_order_relaxed);
    while (v > cur && !m.compare_exchange_weak(cur, v, std::memory_order_relaxed)) {
    }
  }
  static double ms_since(Clock::time_point t) { return std::chrono::duration<double, std::milli>(Clock::now() - t).count(); }
  static constexpr std::chrono::milliseconds kIdleReleaseDelay{500};
  std::optional<std::chrono::steady_clock::time_point> idle_release_due_;  // vocoder worker only

  std::shared_ptr<const Synthesizer> synth_;
  std::shared_ptr<const Frontend> frontend_;
  Vocab vocab_;
  std::shared_ptr<const VoicePack> voice_;
  AudioSink& sink_;
  EngineVoice voice_options_;    // the defaults of say(text)
  EngineVoice vocoder_voice_;   // vocoder worker: the settings of the utterance it vocodes
  SynthesisMode mode_;
  StreamOptions options_;

  // Items, not frames: the frames in flight are bounded by StreamOptions::frame_ring_frames (push_work).
  static constexpr size_t kWorkRingItems = 256;
  SpscRing<WorkItem> work_;
  SpscRing<float> audio_;
  SpscRing<EventItem> events_;

  // Text queue and utterance records (not real-time: a mutex).
  mutable std::mutex mutex_;
  std::condition_variable idle_cv_, text_cv_;
  std::deque<TextItem> text_queue_;
  std::map<uint64_t, Utterance> utterances_;
  uint64_t next_id_ = 1;
  std::function<void(const UtteranceReport&)> report_cb_;
  std::function<void(const StreamEvent&)> event_cb_;

  std::atomic<uint64_t> generation_{0};
  std::atomic<bool> quit_{false};
  std::mutex wake_mutex_;
  std::condition_variable wake_cv_;
  std::atomic<uint64_t> wake_epoch_{0};
  std::atomic<int> nappers_{0};  // threads in nap(): wake() takes the mutex only for them
  std::atomic<uint64_t> naps_{0};

  // Vocoder worker: the segment being vocoded.
  AlignedSegment seg_;

  // The newest utterance whose first segment the vocoder has computed (or given up on): see first_segment_first.
  std::atomic<uint64_t> first_segment_done_{0};
  void mark_first_segment(uint64_t utterance);
  bool wait_first_segment(uint64_t utterance, uint64_t generation);
  std::atomic<bool> acoustic_waiting_{false};
  std::atomic<uint64_t> frames_vocoded_{0};  // frames the vocoder worker has taken from the ring (whole segments)
  std::atomic<uint64_t> frames_produced_{0}, text_bytes_{0}, max_frames_queued_{0}, max_audio_queued_{0},
      samples_to_sink_{0}, chunks_{0}, flushes_{0}, first_segment_holds_{0}, tokens_ahead_{0};

  std::unique_ptr<StreamDecoder> stream_decoder_;  // slice mode; used by the vocoder worker only
  // Exact mode (stream_engine_preroll.cpp) and slice mode (stream_engine_slices.cpp): false when the
  // utterance went stale or the engine quits before the segment's audio was all queued.
  bool synthesize_whole(uint64_t generation, uint64_t utterance, const Tensor& asr, const Tensor& f0, const Tensor& n,
                        NoiseSource& noise);
  bool synthesize_slices(uint64_t generation, uint64_t utterance, const Tensor& asr, const Tensor& f0, const Tensor& n,
                         NoiseSource& noise);
  double queued_audio_seconds() const;  // audio ahead of the device's play position (ring + device buffer)
  // Slice mode's early start (stream_engine_early.cpp; StreamOptions::early_predictor): the first
  // early_frames of a long segment's audio from the whole decoder in slices with the early predictor's
  // statistics, queued while the exact path (decoder half, then the generator from the segment's start) runs.
  struct EarlyStart {
    int64_t frames = 0;  // audio frames queued by the early run (0: the segment did not start early)
    Tensor tail;         // the early run's audio right after them, crossfaded into the exact path's
  };
  std::unique_ptr<StreamDecoder> early_decoder_;  // used by the vocoder worker only
  std::unique_ptr<StreamProsody> early_prosody_;  // the F0/energy branches' first frames; the vocoder worker's
  EarlyRestartEstimate early_restart_;  // the exact path's restart (F0/energy curves, decoder half, prediction)
  bool starts_early(int64_t frames) const;
  // asr and shared: the segment's aligned text features and shared prosody features (its F0 and energy curves
  // are computed after this, by the exact path).
  bool start_early(uint64_t generation, uint64_t utterance, const Tensor& asr, const Tensor& shared, NoiseSource& noise,
                   EarlyStart& early);
  // exact: the exact path's samples from the segment's start; out: what is left to queue of them, the early
  // tail crossfaded in. Throws kokoro::Error if the exact path's first push fell short of the tail's end.
  static void splice_early(const EarlyStart& early, const Tensor& exact, Tensor& out);
  std::atomic<uint64_t> slices_{0}, early_starts_{0};

  // Acoustic worker: frames per phoneme seen so far (at speed 1), for estimating later segments' lengths.
  double acoustic_frames_ = 0, acoustic_phonemes_ = 0;
  std::atomic<double> acoustic_rtf_{0};  // its speed (seconds per audio second), read by the pre-roll
  double frames_per_phoneme() const;

  // The pre-roll (engine/preroll.h; exact mode's rule, and slice mode's over its slices). Vocoder worker: the utterance being held and the vocoder's
  // speed estimate (seconds per audio second). Output thread: reads hold_from_ and release_at_ns_ only.
  static constexpr uint64_t kNoHold = ~uint64_t{0};
  struct Preroll {
    bool active = false;  // the current utterance's playback has not been released yet
    bool counted = false;
    uint64_t utterance = 0, start = 0;  // start: its first ring position
  } preroll_;
  double preroll_rtf_ = 0;  // following progress: per audio second beyond the segment overhead
  double slice_pace_ = 0;   // slice mode: generator seconds per audio second of the last segment's slices (0: none yet)
  std::atomic<uint64_t> hold_from_{kNoHold};
  std::atomic<int64_t> release_at_ns_{INT64_MAX};  // preroll_now_ns()'s clock
  std::atomic<uint64_t> preroll_holds_{0};
  // steady_clock (nanoseconds since its epoch), or the test's clock (StreamOptions::preroll_clock_ns): an
  // atomic load either way, so that the output thread may read it.
  int64_t preroll_now_ns() const {
    return options_.preroll_clock_ns ? options_.preroll_clock_ns->load(std::memory_order_acquire) : steady_now_ns();
  }
  struct VocodeProgress {
    double elapsed_seconds, fraction;  // of the segment being vocoded (the first of to_vocode_seconds)
    double recent_pace;                // the last piece's seconds over its fraction (0: none)
  };
  void preroll_begin(uint64_t utterance);
  // `progress`: the first segment is being vocoded and has got that far (null: it starts, or has been queued
  // when `starting` is false).
  void preroll_decide(const std::vector<double>& to_vocode_seconds, bool starting,
                      const VocodeProgress* progress = nullptr);
  void preroll_release();
  // Holds or releases the current utterance given the audio that must be queued before playback (`need`,
  // seconds); `may_time`: vocoding goes on now, so the hold may end at a time (now + what is missing).
  void preroll_apply(double need, bool may_time, const char* why);
  // Slice mode: the rule over the slices of this segment still to come (from frame `done` of `frames`, the next
  // slice `next_slice` frames long) and the segments after it, at `pace` generator seconds per audio second,
  // each later segment also taking `start_pace` (its decoder half) and the acoustic model's pace per second.
  // `restart_at` (a frame; -1: none): the early start's exact path, `restart_seconds` of work, comes before
  // the slice that starts there.
  void preroll_decide_slices(int64_t done, int64_t frames, int64_t next_slice, double pace, double start_pace, bool may_time,
                             int64_t restart_at = -1, double restart_seconds = 0);
  // Synthesizer::vocode's progress on the first of to_vocode_seconds, whose vocoding started at started_ns:
  // re-decides the hold from the pace so far (`last`: the previous point, updated).
  void preroll_progress(const std::vector<double>& to_vocode_seconds, int64_t started_ns, double fraction,
                        VocodeProgress& last);
  std::thread acoustic_, vocoder_, output_;
};

}  // namespace kokoro
