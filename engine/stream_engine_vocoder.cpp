// The streaming engine's vocoder worker (engine/stream_engine.h): takes each item of the work ring (an
// utterance's markers, a whole AlignedSegment, an SSML pause or mark), vocodes segments in the session's mode
// (stream_engine_slices.cpp, stream_engine_preroll.cpp, stream_engine_chunks.cpp) and pushes audio and events
// for the output thread; gives the weights' pages back when idle.
#include <spdlog/spdlog.h>

#include <algorithm>
#include <cmath>

#include "core/error.h"
#include "core/heap.h"
#include "engine/stream_engine.h"

namespace kokoro {


bool StreamEngine::push_audio(const float* samples, size_t n, uint64_t generation) {
  size_t done = 0;
  while (done < n) {
    const uint64_t epoch = wake_epoch();
    if (quit_.load() || stale(generation)) return false;
    const size_t w = audio_.write(samples + done, n - done);
    done += w;
    if (w) {
      update_max(max_audio_queued_, audio_.capacity() - audio_.space());
      wake();
    } else {
      if (preroll_.active) preroll_release();  // the ring is full of held audio: as much pre-roll as there can be
      nap(epoch);  // back-pressure: the sink is behind (playing in real time); the output thread wakes us
    }
  }
  return true;
}

bool StreamEngine::push_event(const EventItem& e, uint64_t generation) {
  for (;;) {
    const uint64_t epoch = wake_epoch();
    if (events_.push(e)) break;
    if (quit_.load() || stale(generation)) return false;
    nap(epoch);  // the output thread wakes us when it takes events
  }
  wake();
  return true;
}

void StreamEngine::vocoder_loop() {
  WorkItem item{};
  for (;;) {
    const uint64_t epoch = wake_epoch();
    if (!work_.pop(item)) {
      if (quit_.load()) return;
      const auto now = Clock::now();
      if (idle_release_due_ && now >= *idle_release_due_) {
        idle_release_due_.reset();
        return_idle_memory();
      }
      nap(epoch, idle_release_due_ ? std::chrono::nanoseconds(*idle_release_due_ - now) : kNapLimit);
      continue;
    }
    idle_release_due_.reset();  // work again (set anew at the end of an utterance)
    std::unique_ptr<AlignedSegment> segment(item.segment);  // freed here whatever happens to it
    if (segment) frames_vocoded_.fetch_add(static_cast<uint64_t>(segment->frames()));
    wake();  // room in the ring, fewer frames in flight: an acoustic worker may be waiting (push_work)
    if (stale(item.generation)) continue;
    EventItem e{};
    e.generation = item.generation;
    e.utterance = item.utterance;
    bool streamed = false;
    switch (item.kind) {
      case WorkItem::Kind::utterance_begin:
        // The marker the output thread uses to tell this utterance's audio from stale audio.
        e.kind = EventItem::utterance_start;
        e.position = e.end_position = audio_.write_position();
        {
          std::lock_guard<std::mutex> lock(mutex_);
          if (auto it = utterances_.find(item.utterance); it != utterances_.end()) {
            vocoder_voice_ = it->second.settings.voice_options;
            streamed = it->second.streamed;
          }
        }
        preroll_begin(item.utterance);  // before the marker: the output thread must see the hold with it
        push_event(e, item.generation);
        // Text that streams in comes word by word: the pages an idle engine released come back while the
        // first sentence is still arriving (as at a pause below).
        if (streamed) restore_released_pages();
        break;
      case WorkItem::Kind::segment:
        seg_ = std::move(*segment);
        // A segment that starts once all the audio before it has been handed out (text that streams in: the
        // next sentence arrives after the last one played) starts anew, so its audio waits for the pre-roll
        // rule as an utterance's first does; without it the first slices of each such sentence ran dry on a
        // machine whose slices cannot keep up (docs/streaming.md, "Text that streams in").
        if (audio_.read_position() == audio_.write_position()) preroll_begin(item.utterance);
        try {
          synthesize_segment(item.generation, item.utterance);
        } catch (const std::exception& ex) {
          fail_utterance(item.utterance, ex.what());
        }
        seg_ = AlignedSegment{};
        mark_first_segment(item.utterance);  // also when it failed or went stale: never leave the acoustic worker waiting
        break;
      case WorkItem::Kind::mark:
        e.kind = EventItem::mark;
        e.position = e.end_position = audio_.write_position();
        e.text_begin = item.mark;
        push_event(e, item.generation);
        break;
      case WorkItem::Kind::pause:
        // Text that streams in: the acoustic worker waits for the next sentence's text. The device may run
        // out of audio after this (a wait for text, not an underrun), and the pre-roll has nothing more to
        // wait for (the next sentence that starts with the ring empty arms it anew).
        if (preroll_.active) preroll_release();
        e.kind = EventItem::pause;
        e.position = e.end_position = audio_.write_position();
        push_event(e, item.generation);
        // While the text is awaited: the pages the last release dropped (after a segment's first slice and
        // its generator) come back now rather than one fault at a time in the next sentence's acoustic model
        // and early start (core/page_residency.h). Its generator is done: the memory peak is not here.
        restore_released_pages();
        break;
      case WorkItem::Kind::silence: {
        const std::vector<float> zeros(std::min<int64_t>(item.silence_samples, kSampleRate), 0.0f);
        for (int64_t left = item.silence_samples; left > 0;) {
          const int64_t n = std::min<int64_t>(left, static_cast<int64_t>(zeros.size()));
          if (!push_audio(zeros.data(), static_cast<size_t>(n), item.generation)) break;
          left -= n;
        }
        break;
      }
      case WorkItem::Kind::utterance_end:
        if (preroll_.active) preroll_release();  // all of it is vocoded
        {
          // The next utterance of this session waits behind this one's audio, not before it.
          const int64_t dry = deadline_ns(item.utterance, 0);
          std::lock_guard<std::mutex> lock(mutex_);
          previous_dry_ns_ = std::max(previous_dry_ns_, dry);
        }
        e.kind = EventItem::utterance_end;
        e.position = e.end_position = audio_.write_position();
        push_event(e, item.generation);
        // Not at once: a next utterance that follows within the delay would fault everything in again.
        idle_release_due_ = Clock::now() + kIdleReleaseDelay;
        break;
    }
  }
}

// Not while other sessions speak (as no release is made then): their generators are where the memory peaks.
void StreamEngine::restore_released_pages() {
  if (!may_release_pages()) return;
  const auto t0 = Clock::now();
  const size_t bytes = synth_->model().restore_released_pages();
  if (bytes) spdlog::debug("pages mapped back while text is awaited: {:.1f} MB in {:.1f} ms", bytes / 1e6, ms_since(t0));
}

// The vocoder has had nothing to do for kIdleReleaseDelay after an utterance: an idle engine needs neither the
// freed activations the heap keeps (core/heap.h) nor the weights' file pages (ModelFile::release_resident_pages).
// The next utterance faults in what it uses.
void StreamEngine::return_idle_memory() {
  if (!may_release_pages()) return;
  synth_->model().release_resident_pages();
  return_free_heap_pages();
}



void StreamEngine::synthesize_segment(uint64_t generation, uint64_t utterance) {
  const int64_t F = seg_.frames();
  const bool curves_to_come = seg_.shared.rank() == 2 && seg_.shared.dim(1) == F && seg_.f0.numel() == 0;
  if (F < 1 || seg_.asr.dim(0) != kAsrDim || (!curves_to_come && (seg_.f0.numel() != 2 * F || seg_.n.numel() != 2 * F)) ||
      (curves_to_come && (mode_ != SynthesisMode::slice || !starts_early(F))))
    throw Error("streaming engine: a segment of " + std::to_string(F) + " frames with inconsistent features (internal)");
  const Tensor& asr = seg_.asr;
  const Tensor& f0 = seg_.f0;
  const Tensor& n = seg_.n;
  const uint64_t start = audio_.write_position();
  const uint64_t samples = static_cast<uint64_t>(F) * kSamplesPerFrame;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (auto it = utterances_.find(utterance); it != utterances_.end()) ++it->second.report.segments;
  }

  // Events first (their positions are ahead of the audio), then the audio.
  EventItem e{};
  e.generation = generation;
  e.utterance = utterance;
  e.kind = EventItem::segment_start;
  e.position = start;
  e.end_position = start + samples;
  e.text_begin = static_cast<uint64_t>(seg_.text_begin);
  e.text_end = static_cast<uint64_t>(seg_.text_end);
  if (!push_event(e, generation)) return;
  for (EventItem w : seg_.words) {
    w.generation = generation;
    w.utterance = utterance;
    w.position = std::min(start + w.position, start + samples);
    w.end_position = std::min(start + w.end_position, start + samples);
    if (!push_event(w, generation)) return;
  }

  SeededNoise seeded(vocoder_voice_.seed);
  TestNoise reference;
  NoiseSource& noise = vocoder_voice_.reference_noise ? static_cast<NoiseSource&>(reference) : seeded;
  if (mode_ == SynthesisMode::slice) {
    if (!synthesize_slices(generation, utterance, asr, f0, n, noise)) return;
  } else {
    if (!synthesize_whole(generation, utterance, asr, f0, n, noise)) return;
  }
  e.kind = EventItem::segment_end;
  e.position = e.end_position = start + samples;
  push_event(e, generation);
}

}  // namespace kokoro
