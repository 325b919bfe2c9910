// Text that streams in (engine/stream_engine.h, begin_text; docs/streaming.md, "Text that streams in"): the
// caller's side (begin_text, append_text, end_text: the text grows in the utterance's record under the
// engine's mutex) and the acoustic worker's (speak_stream: moves new text into a SentenceFeed and speaks each
// sentence it completes, through the same speak_text as say()).
//
// Why sentence by sentence, also when several sentences are already there: the audio must be a function of
// the text, not of when its pieces came. say() joins a line's sentences into segments of up to 510 phonemes
// as the reference does, but a streamed sentence cannot wait to learn whether the next one would still fit;
// and taking "the sentences complete so far" together would make the segments depend on the timing. So each
// sentence the feed cuts (frontend/sentence_feed.h, cuts that depend on the text alone) is segmented on its
// own, whether it came word by word or with the whole text at once. The pause flush is the one cut that
// depends on timing: it speaks an unfinished sentence when the text stops coming for a while.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdlib>

#include <spdlog/spdlog.h>

#include "engine/stream_engine.h"
#include "frontend/sentence_feed.h"

namespace kokoro {

namespace {

// How a streamed text is read: sentence by sentence, or whole at its end (SSML cannot be cut into sentences
// before it is parsed, and phoneme input has no sentences). Undecided while there is only white space.
enum class Reading { undecided, sentences, whole };

Reading reading_of(std::string_view text, const Frontend& frontend, bool phoneme_input) {
  if (phoneme_input || frontend.options().ssml == FrontendOptions::Ssml::on) return Reading::whole;
  if (text.substr(0, 3) == "\xEF\xBB\xBF") text.remove_prefix(3);  // a byte-order mark
  const size_t first = text.find_first_not_of(" \t\r\n\f\v");
  if (first == std::string_view::npos) return Reading::undecided;
  // Text starting with '<' may be SSML (frontend/ssml.h: <speak> after an XML declaration or comments):
  // segment() decides on the whole text.
  return text[first] == '<' && frontend.options().ssml != FrontendOptions::Ssml::off ? Reading::whole
                                                                                      : Reading::sentences;
}

}  // namespace

uint64_t StreamEngine::begin_text(double pause_flush_seconds) {
  return begin_text(UtteranceSettings{nullptr, nullptr, voice_options_}, pause_flush_seconds);
}

uint64_t StreamEngine::begin_text(UtteranceSettings settings, double pause_flush_seconds) {
  Utterance u;
  u.settings = std::move(settings);
  u.streamed = true;
  u.pause_flush_seconds = std::isfinite(pause_flush_seconds) && pause_flush_seconds > 0 ? pause_flush_seconds : 0;
  u.last_text_ns = text_now_ns();
  return enqueue(std::move(u));
}

bool StreamEngine::append_text(uint64_t utterance, std::string_view text) {
  std::lock_guard<std::mutex> lock(mutex_);
  auto it = utterances_.find(utterance);
  if (it == utterances_.end()) return false;
  Utterance& u = it->second;
  if (!u.streamed || u.text_ended || u.generation != generation_.load()) return false;
  if (text.empty()) return true;
  if (u.text.empty()) u.queued = Clock::now();  // its time to first audio counts from its first text
  u.text.append(text);
  u.report.text.append(text);
  u.last_text_ns = text_now_ns();
  text_cv_.notify_all();
  return true;
}

bool StreamEngine::end_text(uint64_t utterance) {
  std::lock_guard<std::mutex> lock(mutex_);
  auto it = utterances_.find(utterance);
  if (it == utterances_.end()) return false;
  Utterance& u = it->second;
  if (!u.streamed || u.text_ended || u.generation != generation_.load()) return false;
  u.text_ended = true;
  text_cv_.notify_all();
  return true;
}

void StreamEngine::speak_stream(uint64_t id, uint64_t generation, const UtteranceSettings& settings) {
  const Frontend& frontend = *settings.frontend;
  SentenceFeed feed(frontend, options_.text_piece_bytes);
  TextProgress progress;
  Reading reading = Reading::undecided;
  std::string whole;            // Reading::whole: the text, once it has ended
  size_t seen = 0, pulled = 0;  // bytes of the utterance's text looked at, and moved into the feed
  bool spoke = false;           // a sentence spoken since the last pause item
  for (;;) {
    bool ended = false, pause = false, waits = false;
    {
      // Wait for new text, its end, or the pause flush (the feed holds an unfinished sentence and no text
      // has come for the utterance's pause flush); a barge-in or the engine's end leaves.
      std::unique_lock<std::mutex> lock(mutex_);
      for (;;) {
        if (quit_.load() || stale(generation)) return;
        auto it = utterances_.find(id);
        if (it == utterances_.end()) return;
        const Utterance& u = it->second;
        if (reading == Reading::undecided && u.text.size() > seen) {
          seen = u.text.size();
          reading = reading_of(u.text, frontend, settings.voice_options.phoneme_input);
        }
        if (reading == Reading::sentences && u.text.size() > pulled) {
          feed.append(std::string_view(u.text).substr(pulled));
          pulled = u.text.size();
          break;
        }
        if (u.text_ended) {
          ended = true;
          if (reading == Reading::whole) whole = u.text;
          break;
        }
        if (spoke) {  // about to wait with audio out: tell the output first (outside the lock)
          waits = true;
          break;
        }
        const bool may_flush = reading == Reading::sentences && u.pause_flush_seconds > 0 && feed.pending_text();
        if (!may_flush) {
          text_cv_.wait(lock);
          continue;
        }
        const int64_t due = u.last_text_ns + static_cast<int64_t>(u.pause_flush_seconds * 1e9);
        const int64_t now = text_now_ns();
        if (now >= due) {
          pause = true;
          break;
        }
        // A test's clock moves without notifying: look at it again soon.
        text_cv_.wait_for(lock, options_.text_clock_ns ? std::chrono::nanoseconds(2'000'000)
                                                       : std::chrono::nanoseconds(due - now));
      }
    }
    if (waits) {
      // Everything spoken so far may play out before the next sentence's text comes: the device running
      // dry after it is a wait for text, not an underrun (AudioSink::mark_pause).
      WorkItem item{};
      item.kind = WorkItem::Kind::pause;
      item.generation = generation;
      item.utterance = id;
      if (!push_work(item)) return;
      spoke = false;
      continue;
    }
    if (reading == Reading::whole) {
      speak_text(id, generation, whole, settings, progress);  // ended (nothing else leaves the wait)
      return;
    }
    // A segment is the utterance's last as far as this worker knows when no text is waiting after it (exact
    // mode's pre-roll then releases the audio instead of waiting for segments that may never come).
    auto speak = [&](const SentenceFeed::Sentence& s) {
      if (!progress.text_prefix.valid.empty())
        spdlog::debug("text encoder: {} columns computed ahead", progress.text_prefix.valid.back());
      speak_text(id, generation, s.text, settings, progress, s.offset, feed.pending_text());
      progress.text_prefix.clear();  // its sentence is spoken
      progress.text_prefix_bytes = 0;
      spoke = true;
      return !stale(generation) && !quit_.load();
    };
    while (auto s = feed.next())
      if (!speak(*s)) return;
    if (!ended && !pause) extend_text_prefix(id, generation, feed.pending(), frontend, progress);
    if (ended) {
      if (auto s = feed.rest(true)) speak(*s);
      return;
    }
    if (pause)
      if (auto s = feed.rest(false); s && !speak(*s)) return;
  }
}

// While the rest of a sentence is awaited, the text encoder computes the columns its words so far determine
// (acoustic/text_encoder.h): ~4.5 of a 63-word sentence's ~10 ms then no longer wait for its last word. The
// words are phonemized as the sentence will be, without the last one (perhaps cut); where the frontend later
// reads them otherwise (a word's pronunciation may depend on the next), the text encoder reuses only the
// columns whose tokens came out the same. The audio is the same either way. KOKORO_TEXT_PREFIX=0 turns it
// off (to measure what it saves).
void StreamEngine::extend_text_prefix(uint64_t id, uint64_t generation, std::string_view pending,
                                      const Frontend& frontend, TextProgress& progress) {
  static const bool off = [] {
    const char* e = std::getenv("KOKORO_TEXT_PREFIX");
    return e && std::string(e) == "0";
  }();
  // Starts shorter than this have too few tokens for the text encoder's convolutions to be computed in pieces.
  constexpr size_t kMinBytes = 48;
  const size_t cut = pending.find_last_of(" \t\r\n");
  if (off || cut == std::string_view::npos) return;
  const std::string_view words = pending.substr(0, cut);
  if (words.size() < kMinBytes || words.size() <= progress.text_prefix_bytes || words.size() > options_.text_piece_bytes)
    return;
  progress.text_prefix_bytes = words.size();
  try {
    const std::vector<Segment> segments = frontend.segment(std::string(words), false);
    if (segments.empty()) return;
    std::vector<int64_t> ids = tokenize(segments.front().phonemes, vocab_);
    if (ids.empty()) return;
    ids.insert(ids.begin(), 0);
    ComputeScheduler::Turn turn;
    const uint64_t ahead = (frames_produced_.load() - frames_vocoded_.load()) * kSamplesPerFrame;
    if (!take_turn(turn, generation, deadline_ns(id, ahead))) return;
    const int64_t before = progress.text_prefix.valid.empty() ? 0 : progress.text_prefix.valid.back();
    synth_->acoustic().extend_text_prefix(ids, progress.text_prefix);
    const int64_t after = progress.text_prefix.valid.empty() ? 0 : progress.text_prefix.valid.back();
    if (after > before) tokens_ahead_.fetch_add(static_cast<uint64_t>(after - before));
  } catch (const std::exception& e) {
    // Only work ahead: the sentence is computed whole when it is complete.
    spdlog::debug("text encoder ahead of a streamed sentence: {}", e.what());
    progress.text_prefix.clear();
  }
}

}  // namespace kokoro
