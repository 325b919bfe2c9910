// The stage times of each utterance's report (engine/stage_report.h): the workers record each piece of work
// as it ends, the output thread the hand-over of the first audio and every sink write. Work that ended
// before the utterance's first audio was handed to the sink counts as before the first audio; the
// comparison is of timestamps, so a piece recorded a moment after the first audio (another thread held the
// mutex) is still counted right.
#include <algorithm>

#include "engine/stream_engine.h"

namespace kokoro {

namespace {
double ms_between(std::chrono::steady_clock::time_point a, std::chrono::steady_clock::time_point b) {
  return std::chrono::duration<double, std::milli>(b - a).count();
}
}  // namespace

void StreamEngine::record_stage(uint64_t utterance, EngineStage stage, Clock::time_point begin, Clock::time_point end) {
  std::lock_guard<std::mutex> lock(mutex_);
  auto it = utterances_.find(utterance);
  if (it == utterances_.end()) return;
  Utterance& u = it->second;
  const bool before = !u.started_audio || end <= u.first_audio_at;
  u.report.stages.add(stage, ms_between(begin, end), before);
  if (stage == EngineStage::generator) u.report.stages.generator_items_ms.push_back(ms_between(begin, end));
  if (before) {
    u.last_work_end = u.any_work ? std::max(u.last_work_end, end) : end;
    u.any_work = true;
  }
}

// Output thread, mutex_ held, at the utterance's first samples: the output stage's part before them is their
// wait since the work that made them ended (the hand-over, and exact mode's pre-roll hold).
void StreamEngine::note_first_audio(Utterance& u) {
  u.first_audio_at = Clock::now();
  u.report.first_audio_ms = ms_between(u.queued, u.first_audio_at);
  const double handover = u.any_work ? std::max(0.0, ms_between(u.last_work_end, u.first_audio_at)) : 0.0;
  u.report.stages.add(EngineStage::output, handover, true);
}

void StreamEngine::record_output(uint64_t utterance, Clock::time_point write_begin) {
  const double ms = ms_between(write_begin, Clock::now());
  std::lock_guard<std::mutex> lock(mutex_);
  if (auto it = utterances_.find(utterance); it != utterances_.end()) it->second.report.stages.add(EngineStage::output, ms, false);
}

void StreamEngine::record_segment_size(uint64_t utterance, int64_t tokens, int64_t frames) {
  std::lock_guard<std::mutex> lock(mutex_);
  if (auto it = utterances_.find(utterance); it != utterances_.end()) it->second.report.segment_sizes.push_back({tokens, frames});
}

}  // namespace kokoro
