#include "engine/stream_engine.h"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <cmath>

#include "core/error.h"
#include "core/heap.h"
#include "acoustic/stream_prosody.h"
#include "engine/word_timing.h"
#include "frontend/sentence_feed.h"
#include "frontend/utf8.h"
#include "vocoder/stream_decoder.h"

namespace kokoro {

StreamEngine::StreamEngine(std::shared_ptr<const Synthesizer> synth, std::shared_ptr<const Frontend> frontend,
                           VoicePack voice, AudioSink& sink, EngineVoice voice_options, SynthesisMode mode,
                           StreamOptions options)
    : synth_(std::move(synth)),
      frontend_(std::move(frontend)),
      vocab_(Vocab::from_config(synth_->model().config(), synth_->model().path())),
      voice_(std::make_shared<const VoicePack>(std::move(voice))),
      sink_(sink),
      voice_options_(voice_options),
      mode_(mode),
      options_(std::move(options)),
      work_(kWorkRingItems),
      audio_(static_cast<size_t>(std::max(options_.audio_ring_seconds, 0.05) * kSampleRate)),
      events_(4096) {
  if (sink_.input_rate() != kSampleRate)
    throw Error("streaming engine: the sink takes " + std::to_string(sink_.input_rate()) + " Hz, the engine makes " +
                std::to_string(kSampleRate));
  if (options_.first_chunk_frames < 1 || options_.max_chunk_frames < options_.first_chunk_frames)
    throw Error("streaming engine: chunk sizes must satisfy 1 <= first <= max");
  if (options_.text_piece_bytes < 64) throw Error("streaming engine: text pieces of at least 64 bytes");
  const PrerollOptions& pr = options_.preroll;
  if (!(pr.nominal_rtf >= 0 && pr.nominal_acoustic_rtf >= 0 && pr.margin_seconds >= 0 && pr.margin_share >= 0 && pr.nominal_frames_per_phoneme > 0 &&
        pr.segment_overhead_seconds >= 0 && pr.progress_trust_fraction > 0 && pr.progress_trust_fraction <= 1) ||
      !std::isfinite(pr.nominal_rtf + pr.nominal_acoustic_rtf + pr.margin_seconds + pr.margin_share + pr.nominal_frames_per_phoneme +
                     pr.segment_overhead_seconds))
    throw Error("streaming engine: pre-roll settings must be finite, >= 0, frames per phoneme > 0, trust fraction in (0, 1]");
  preroll_rtf_ = pr.nominal_rtf;
  acoustic_rtf_.store(pr.nominal_acoustic_rtf);
  if (mode_ == SynthesisMode::slice && !options_.predictor) {
    // Slices need the segment's statistics before it is vocoded; without a predictor for this model the
    // only right ones are the whole segment's (recommended_slice_options said why).
    spdlog::warn("slice mode without a statistics predictor for this model: speaking in exact mode");
    mode_ = SynthesisMode::exact;
  }
  if (mode_ == SynthesisMode::slice) {
    if (const std::string why = options_.predictor->mismatch(synth_->model()); !why.empty())
      throw Error("streaming engine: statistics predictor " + options_.predictor->path + " does not fit the model: " + why);
    stream_decoder_ = std::make_unique<StreamDecoder>(synth_->decoder());
    if (options_.early_predictor) {
      const StatsPredictor& e = *options_.early_predictor;
      std::string why = e.early() ? e.mismatch(synth_->model()) : "not an early predictor";
      if (options_.early_frames < 1 || options_.early_first_frames < 1 || options_.early_crossfade_frames < 1 || options_.early_start_min_frames < 1)
        why = "early frames, crossfade and minimum segment must be at least one frame";
      if (!(options_.early_frames_share >= 0 && options_.early_frames_share <= 0.5))
        why = "the early frames' share of a segment must be within 0 to 0.5";
      if (!why.empty()) throw Error("streaming engine: early predictor " + e.path + ": " + why);
      early_decoder_ = std::make_unique<StreamDecoder>(synth_->decoder());
      early_prosody_ = std::make_unique<StreamProsody>(synth_->acoustic().predictor());
    }
  }

  if (options_.scheduler) options_.scheduler->add_session(reinterpret_cast<uintptr_t>(this));

  acoustic_ = std::thread([this] { acoustic_loop(); });
  vocoder_ = std::thread([this] { vocoder_loop(); });
  output_ = std::thread([this] { output_loop(); });
}

StreamEngine::~StreamEngine() {
  // Quit first, so that the threads leave without flushing the sink or reporting: whoever owns the sink
  // may still drain() what was handed over.
  quit_.store(true);
  generation_.fetch_add(1);
  sink_.interrupt();
  {
    std::lock_guard<std::mutex> lock(mutex_);
    text_cv_.notify_all();
  }
  wake();
  acoustic_.join();
  vocoder_.join();
  output_.join();
  for (WorkItem item{}; work_.pop(item);) delete item.segment;  // segments nobody took
  if (options_.scheduler) options_.scheduler->remove_session(reinterpret_cast<uintptr_t>(this));
}

uint64_t StreamEngine::say(std::string text) { return say(std::move(text), UtteranceSettings{nullptr, nullptr, voice_options_}); }

uint64_t StreamEngine::say(std::string text, UtteranceSettings settings) {
  Utterance u;
  u.report.text = text;
  u.text = std::move(text);
  u.settings = std::move(settings);
  return enqueue(std::move(u));
}

uint64_t StreamEngine::enqueue(Utterance u) {
  if (!u.settings.voice) u.settings.voice = voice_;
  if (!u.settings.frontend) u.settings.frontend = frontend_;
  std::lock_guard<std::mutex> lock(mutex_);
  const uint64_t id = next_id_++;
  u.generation = generation_.load();
  u.queued = Clock::now();
  utterances_.emplace(id, std::move(u));
  text_queue_.push_back({id, generation_.load()});
  text_cv_.notify_all();
  if (options_.scheduler) options_.scheduler->set_speaking(reinterpret_cast<uintptr_t>(this), true);
  return id;
}

void StreamEngine::stop() {
  generation_.fetch_add(1);
  sink_.interrupt();  // a write() blocked on a full device buffer returns now; the output thread flushes
  {
    std::lock_guard<std::mutex> lock(mutex_);
    text_queue_.clear();
    text_cv_.notify_all();  // an acoustic worker waiting for streamed text
  }
  wake();
}

bool StreamEngine::wait_idle(double timeout_seconds) {
  std::unique_lock<std::mutex> lock(mutex_);
  return idle_cv_.wait_for(lock, std::chrono::duration<double>(timeout_seconds), [&] { return utterances_.empty(); });
}

void StreamEngine::on_report(std::function<void(const UtteranceReport&)> callback) {
  std::lock_guard<std::mutex> lock(mutex_);
  report_cb_ = std::move(callback);
}

void StreamEngine::on_event(std::function<void(const StreamEvent&)> callback) {
  std::lock_guard<std::mutex> lock(mutex_);
  event_cb_ = std::move(callback);
}

StreamEngineStats StreamEngine::stats() const {
  StreamEngineStats s;
  s.frames_produced = frames_produced_.load();
  s.text_bytes_segmented = text_bytes_.load();
  s.max_frames_queued = max_frames_queued_.load();
  s.acoustic_waiting = acoustic_waiting_.load();
  s.max_audio_queued = max_audio_queued_.load();
  s.samples_to_sink = samples_to_sink_.load();
  s.chunks = chunks_.load();
  s.flushes = flushes_.load();
  s.first_segment_holds = first_segment_holds_.load();
  s.slices = slices_.load();
  s.early_starts = early_starts_.load();
  s.preroll_holds = preroll_holds_.load();
  s.tokens_ahead = tokens_ahead_.load();
  s.naps = naps_.load();
  s.samples_vocoded = audio_.write_position();
  s.preroll_holding = hold_from_.load() != kNoHold;
  s.preroll_release_at_ns = release_at_ns_.load();
  return s;
}

void StreamEngine::nap(uint64_t epoch, std::chrono::nanoseconds at_most) {
  std::unique_lock<std::mutex> lock(wake_mutex_);
  nappers_.fetch_add(1);
  // (seq_cst, as wake()'s: either wake() sees this napper, or this look sees its new epoch.)
  wake_cv_.wait_for(lock, std::min<std::chrono::nanoseconds>(at_most, kNapLimit), [&] { return wake_epoch_.load() != epoch; });
  nappers_.fetch_sub(1);
  naps_.fetch_add(1, std::memory_order_relaxed);
}

void StreamEngine::wake() {
  wake_epoch_.fetch_add(1);
  if (nappers_.load() == 0) return;  // nobody to notify (the output thread calls this per block of audio)
  std::lock_guard<std::mutex> lock(wake_mutex_);
  wake_cv_.notify_all();
}

void StreamEngine::mark_first_segment(uint64_t utterance) {
  update_max(first_segment_done_, utterance);
  wake();
}

// Acoustic worker, after an utterance's first segment: waits until the vocoder has computed that segment's
// audio. False when the utterance went stale (or the engine quits) while waiting.
bool StreamEngine::wait_first_segment(uint64_t utterance, uint64_t generation) {
  if (first_segment_done_.load() < utterance) first_segment_holds_.fetch_add(1);
  for (;;) {
    const uint64_t epoch = wake_epoch();
    if (first_segment_done_.load() >= utterance) return true;
    if (quit_.load() || stale(generation)) return false;
    nap(epoch);
  }
}

void StreamEngine::add_synth_seconds(uint64_t utterance, double seconds) {
  std::lock_guard<std::mutex> lock(mutex_);
  if (auto it = utterances_.find(utterance); it != utterances_.end()) it->second.report.synth_seconds += seconds;
}

void StreamEngine::fail_utterance(uint64_t utterance, const std::string& error) {
  spdlog::debug("utterance {} failed: {}", utterance, error);
  std::lock_guard<std::mutex> lock(mutex_);
  if (auto it = utterances_.find(utterance); it != utterances_.end() && it->second.report.error.empty())
    it->second.report.error = error;
}

void StreamEngine::finish_utterance(uint64_t utterance, bool interrupted) {
  UtteranceReport report;
  std::function<void(const UtteranceReport&)> cb;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    auto it = utterances_.find(utterance);
    if (it == utterances_.end()) return;
    report = std::move(it->second.report);
    report.interrupted = report.interrupted || interrupted;
    utterances_.erase(it);
    cb = report_cb_;
    if (utterances_.empty() && options_.scheduler) options_.scheduler->set_speaking(reinterpret_cast<uintptr_t>(this), false);
  }
  if (cb) cb(report);
  std::lock_guard<std::mutex> lock(mutex_);
  idle_cv_.notify_all();
}

// Reports every utterance of an older generation as interrupted (output thread, after a barge-in).
void StreamEngine::report_stale() {
  std::vector<uint64_t> ids;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    const uint64_t g = generation_.load();
    for (const auto& [id, u] : utterances_)
      if (u.generation != g) ids.push_back(id);
  }
  for (uint64_t id : ids) finish_utterance(id, true);
}

// ---------------------------------------------------------------- acoustic worker

bool StreamEngine::push_work(const WorkItem& item) {
  const uint64_t frames = item.segment ? static_cast<uint64_t>(item.segment->frames()) : 0;
  auto in_flight = [&] { return frames_produced_.load() - frames_vocoded_.load(); };
  // Back-pressure: the vocoder is behind (frames in flight), or the ring is full of small items.
  for (;;) {
    const uint64_t epoch = wake_epoch();
    if (!(frames > 0 && in_flight() > 0 && in_flight() + frames > options_.frame_ring_frames) && work_.push(item)) break;
    if (quit_.load() || stale(item.generation)) {
      acoustic_waiting_.store(false);
      delete item.segment;
      return false;
    }
    acoustic_waiting_.store(true);
    nap(epoch);  // woken when the vocoder takes an item
  }
  acoustic_waiting_.store(false);
  frames_produced_.fetch_add(frames);
  update_max(max_frames_queued_, in_flight());
  wake();
  return true;
}

void StreamEngine::acoustic_loop() {
  for (;;) {
    TextItem item{};
    std::string text;
    UtteranceSettings settings;
    bool streamed = false;
    {
      std::unique_lock<std::mutex> lock(mutex_);
      text_cv_.wait(lock, [&] { return quit_.load() || !text_queue_.empty(); });
      if (quit_.load()) return;
      item = text_queue_.front();
      text_queue_.pop_front();
      auto it = utterances_.find(item.id);
      if (it == utterances_.end()) continue;
      streamed = it->second.streamed;
      if (!streamed) text = it->second.text;
      settings = it->second.settings;
    }
    if (stale(item.generation)) continue;  // the output thread reports it as interrupted
    WorkItem marker{};
    marker.kind = WorkItem::Kind::utterance_begin;
    marker.generation = item.generation;
    marker.utterance = item.id;
    if (!push_work(marker)) continue;
    try {
      TextProgress progress;
      if (streamed) speak_stream(item.id, item.generation, settings);
      else speak_text(item.id, item.generation, text, settings, progress);
    } catch (const std::exception& e) {
      fail_utterance(item.id, e.what());
    }
    marker.kind = WorkItem::Kind::utterance_end;
    push_work(marker);
  }
}

bool StreamEngine::push_silence(uint64_t id, uint64_t generation, double seconds) {
  const int64_t samples = std::llround(std::max(0.0, seconds) * kSampleRate);
  if (samples == 0) return true;
  WorkItem item{};
  item.kind = WorkItem::Kind::silence;
  item.generation = generation;
  item.utterance = id;
  item.silence_samples = samples;
  return push_work(item);
}

uint64_t StreamEngine::remember_mark(const std::string& name) {
  std::lock_guard<std::mutex> lock(mutex_);
  const uint64_t index = mark_base_ + mark_names_.size();
  mark_names_.push_back(name);
  while (mark_names_.size() > 4096) {  // bounded: a mark is delivered long before 4096 more are made
    mark_names_.pop_front();
    ++mark_base_;
  }
  return index;
}

// A mark inside a segment: an event among its words, `at_s` into the segment.
StreamEngine::EventItem StreamEngine::inner_mark(const std::string& name, double at_s) {
  EventItem e{};
  e.kind = EventItem::mark;
  e.position = e.end_position = static_cast<uint64_t>(std::llround(at_s * kSampleRate));  // relative
  e.text_begin = remember_mark(name);
  return e;
}

// Marks between segments: items of their own, delivered where the audio has got to.
bool StreamEngine::push_marks(uint64_t id, uint64_t generation, const std::vector<std::string>& names) {
  for (const std::string& name : names) {
    WorkItem item{};
    item.kind = WorkItem::Kind::mark;
    item.generation = generation;
    item.utterance = id;
    item.mark = remember_mark(name);
    if (!push_work(item)) return false;
  }
  return true;
}

const VoicePack& StreamEngine::voice_for(const std::string& name, const UtteranceSettings& settings) {
  if (name.empty()) return *settings.voice;
  auto it = ssml_voices_.find(name);
  if (it == ssml_voices_.end())
    it = ssml_voices_.emplace(name, VoicePack::resolve(name, settings.frontend->options().assets_dir)).first;
  return it->second;
}

void StreamEngine::speak_text(uint64_t id, uint64_t generation, const std::string& text,
                              const UtteranceSettings& settings, TextProgress& progress, size_t base,
                              bool more_follows) {
  const AcousticModel& acoustic = synth_->acoustic();
  const EngineVoice& voice_options = settings.voice_options;
  const Frontend& frontend = *settings.frontend;
  AlignedFeatures feats;
  bool& first_segment = progress.first_segment;
  double& silent_run = progress.silent_run;  // seconds of silence pushed for pause-only segments since the last speech
  for (size_t begin = 0; begin < text.size();) {
    // SSML goes to the frontend whole (a piece of it would not parse).
    const bool whole = voice_options.phoneme_input || frontend.reads_as_ssml(text);
    const size_t end = whole ? text.size() : cut_long_text(text, begin, options_.text_piece_bytes);
    const std::string piece = text.substr(begin, end - begin);
    std::vector<Segment> segments;
    const auto frontend_begin = Clock::now();
    if (voice_options.phoneme_input) {
      Segment s;
      s.phonemes = piece;
      s.text = piece;
      s.text_end = piece.size();
      segments.push_back(std::move(s));
    } else {
      // Slice mode: the utterance's first sentence is its own segment, so that its first audio waits for that
      // sentence's acoustic model and decoder half only (docs/streaming.md, "The first sentence alone").
      segments = frontend.segment(piece, first_segment && mode_ == SynthesisMode::slice && options_.first_sentence_alone);
    }
    record_stage(id, EngineStage::frontend, frontend_begin, Clock::now());
    text_bytes_.fetch_add(end - begin);
    // Phonemes per segment (scaled by the segment's speed), for the pre-roll's estimate of the segments
    // after each one (engine/preroll.h): their frames are known only once their acoustic model has run.
    std::vector<double> scaled_phonemes(segments.size());
    for (size_t i = 0; i < segments.size(); ++i)
      scaled_phonemes[i] = static_cast<double>(utf8::count_code_points(segments[i].phonemes)) /
                           std::max(1e-3, static_cast<double>(voice_options.speed) * segments[i].rate);
    for (size_t si = 0; si < segments.size(); ++si) {
      const Segment& seg = segments[si];
      if (stale(generation) || quit_.load()) return;
      std::vector<int64_t> ids = tokenize(seg.phonemes, vocab_);
      if (ids.empty()) {
        // Nothing to say (Frontend: text with nothing speakable is a pause-only segment; or symbols only):
        // silence, never the model, and its marks in order. Pauses in a row, also across text pieces, are one
        // pause as long as the longest.
        const double pause = seg.pause_before - silent_run;
        if (pause > 0 && !push_silence(id, generation, pause)) return;
        silent_run = std::max(silent_run, seg.pause_before);
        if (!push_marks(id, generation, seg.marks)) return;
        for (const InnerMark& m : seg.inner_marks)
          if (!push_marks(id, generation, {m.name})) return;
        if (!push_marks(id, generation, seg.marks_after)) return;
        if (seg.pause_after > 0 && !push_silence(id, generation, seg.pause_after)) return;
        continue;
      }
      silent_run = 0;
      const size_t n_phonemes = utf8::count_code_points(seg.phonemes);
      if (n_phonemes > static_cast<size_t>(kMaxPhonemes))
        throw Error("segment of " + std::to_string(n_phonemes) + " phonemes exceeds the model's 510");
      ids.insert(ids.begin(), 0);
      ids.push_back(0);
      if (seg.pause_before > 0 && !push_silence(id, generation, seg.pause_before)) return;
      if (!push_marks(id, generation, seg.marks)) return;
      const float* style = voice_for(seg.voice, settings).style_for(static_cast<int>(n_phonemes));
      ComputeScheduler::Turn turn;
      const uint64_t ahead = (frames_produced_.load() - frames_vocoded_.load()) * kSamplesPerFrame;
      if (!take_turn(turn, generation, deadline_ns(id, ahead))) return;
      const auto t0 = Clock::now();
      // A segment that will start early (slice mode, stream_engine_early.cpp) leaves its F0 and energy curves
      // to the vocoder worker: its first frames come before them, from the shared prosody features.
      Tensor shared;
      acoustic.forward_text(ids, style, voice_options.speed * static_cast<float>(seg.rate), feats, shared, nullptr,
                            &progress.text_prefix);
      if (!starts_early(feats.frames())) {
        acoustic.forward_curves(shared, style, feats);
        shared = Tensor();
      }
      record_stage(id, EngineStage::acoustic, t0, Clock::now());
      turn = ComputeScheduler::Turn();
      const double acoustic_s = ms_since(t0) / 1e3;
      add_synth_seconds(id, acoustic_s);
      report_work(acoustic_s, static_cast<double>(feats.frames() * kSamplesPerFrame) / kSampleRate);
      spdlog::debug("acoustic model: {} tokens, {:.1f} ms", ids.size(), acoustic_s * 1e3);
      if (stale(generation)) return;
      const int64_t F = feats.frames();
      record_segment_size(id, static_cast<int64_t>(ids.size()), F);
      acoustic_rtf_.store(updated_preroll_rtf(acoustic_rtf_.load(), acoustic_s * kSampleRate / (std::max<int64_t>(F, 1) * kSamplesPerFrame)));
      acoustic_frames_ += static_cast<double>(F);  // frames per (speed-scaled) phoneme, for the estimates
      acoustic_phonemes_ += scaled_phonemes[si];

      auto segment = std::make_unique<AlignedSegment>();
      AlignedSegment& a = *segment;
      a.style.assign(style, style + kStyleDim);
      a.text_begin = static_cast<int64_t>(base + begin + seg.text_begin);
      a.text_end = static_cast<int64_t>(base + begin + seg.text_end);
      // The estimated frames of the segments after this one in the piece, and whether it is the
      // utterance's last segment.
      bool more_speech = false;
      for (size_t j = si + 1; j < segments.size(); ++j) {
        if (scaled_phonemes[j] <= 0) continue;
        more_speech = true;
        a.following_frames.push_back(scaled_phonemes[j] * frames_per_phoneme());
      }
      a.last = !more_speech && end == text.size() && !more_follows;
      if (!voice_options.phoneme_input) {
        // A mark inside the segment comes where its word starts (at the segment's end if that word got no
        // timing), before the word's own event.
        size_t next_mark = 0;
        const std::vector<InnerMark>& marks = seg.inner_marks;
        for (const WordTiming& w : word_timings(seg, feats.durations)) {
          for (; next_mark < marks.size() && marks[next_mark].word_begin <= w.text_begin; ++next_mark)
            a.words.push_back(inner_mark(marks[next_mark].name, w.start_s));
          EventItem e{};
          e.kind = EventItem::word;
          e.text_begin = base + begin + w.text_begin;
          e.text_end = base + begin + w.text_end;
          e.position = static_cast<uint64_t>(std::llround(w.start_s * kSampleRate));  // relative to the segment
          e.end_position = static_cast<uint64_t>(std::llround(w.end_s * kSampleRate));
          a.words.push_back(e);
        }
        const double segment_s = static_cast<double>(F * kSamplesPerFrame) / kSampleRate;
        for (; next_mark < marks.size(); ++next_mark) a.words.push_back(inner_mark(marks[next_mark].name, segment_s));
      }
      a.asr = std::move(feats.asr);
      a.f0 = std::move(feats.f0);
      a.n = std::move(feats.n);
      a.shared = std::move(shared);
      if (a.frames() != F) throw Error("streaming engine: aligned features of " + std::to_string(a.frames()) +
                                        " frames, durations say " + std::to_string(F) + " (internal)");
      WorkItem item{};
      item.kind = WorkItem::Kind::segment;
      item.generation = generation;
      item.utterance = id;
      item.segment = segment.release();
      if (!push_work(item)) return;
      if (seg.pause_after > 0 && !push_silence(id, generation, seg.pause_after)) return;
      if (!push_marks(id, generation, seg.marks_after)) return;
      if (first_segment && options_.first_segment_first && !wait_first_segment(id, generation)) return;
      first_segment = false;
    }
    begin = end;
  }
}

}  // namespace kokoro
