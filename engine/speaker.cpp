#include "engine/speaker.h"

#include <spdlog/spdlog.h>

#include "core/error.h"

namespace kokoro {

namespace {

double ms_since(std::chrono::steady_clock::time_point t) {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t).count();
}

size_t code_points(const std::string& s) {
  size_t n = 0;
  for (unsigned char c : s) n += (c & 0xC0) != 0x80;
  return n;
}

}  // namespace

Speaker::Speaker(std::shared_ptr<const Synthesizer> synth, std::shared_ptr<const Frontend> frontend, VoicePack voice,
                 AudioSink& sink, SpeakerOptions options)
    : synth_(std::move(synth)),
      frontend_(std::move(frontend)),
      vocab_(Vocab::from_config(synth_->model().config(), synth_->model().path())),
      voice_(std::move(voice)),
      sink_(sink),
      options_(options),
      worker_([this] { run(); }) {}

Speaker::~Speaker() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    quit_ = true;
  }
  stop();
  cv_.notify_all();
  worker_.join();
}

void Speaker::say(std::string text) {
  std::lock_guard<std::mutex> lock(mutex_);
  queue_.push_back({std::move(text), std::chrono::steady_clock::now(), generation_.load()});
  cv_.notify_all();
}

void Speaker::stop() {
  generation_.fetch_add(1);
  sink_.interrupt();  // a write() blocked on a full device buffer returns now; the worker then flushes
  std::lock_guard<std::mutex> lock(mutex_);
  queue_.clear();
  cv_.notify_all();
}

void Speaker::on_report(std::function<void(const UtteranceReport&)> callback) {
  std::lock_guard<std::mutex> lock(mutex_);
  report_ = std::move(callback);
}

bool Speaker::wait_idle(double timeout_seconds) {
  std::unique_lock<std::mutex> lock(mutex_);
  const bool idle = cv_.wait_for(lock, std::chrono::duration<double>(timeout_seconds),
                                 [&] { return queue_.empty() && !busy_; });
  return idle;
}

void Speaker::run() {
  for (;;) {
    Item item;
    {
      std::unique_lock<std::mutex> lock(mutex_);
      cv_.wait(lock, [&] { return quit_ || !queue_.empty(); });
      if (quit_) return;
      item = std::move(queue_.front());
      queue_.pop_front();
      busy_ = true;
    }
    UtteranceReport report;
    report.text = item.text;
    if (item.generation == generation_.load()) {
      try {
        speak(item, report);
      } catch (const std::exception& e) {
        report.error = e.what();
        spdlog::debug("utterance failed: {}", e.what());
      }
    } else {
      report.interrupted = true;
    }
    if (report.interrupted) {
      try {
        sink_.flush();
      } catch (const std::exception& e) {
        if (report.error.empty()) report.error = e.what();
      }
    }
    std::function<void(const UtteranceReport&)> cb;
    {
      std::lock_guard<std::mutex> lock(mutex_);
      busy_ = !queue_.empty() ? busy_ : false;
      cb = report_;
    }
    if (cb) cb(report);
    {
      std::lock_guard<std::mutex> lock(mutex_);
      busy_ = false;
    }
    cv_.notify_all();
  }
}

void Speaker::speak(const Item& item, UtteranceReport& report) {
  std::vector<Segment> segments;
  if (options_.phoneme_input) {
    Segment s;
    s.phonemes = item.text;
    s.text = item.text;
    segments.push_back(std::move(s));
  } else {
    segments = frontend_->segment(item.text);
  }
  SeededNoise seeded(options_.seed);
  TestNoise reference;
  NoiseSource& noise = options_.reference_noise ? static_cast<NoiseSource&>(reference) : seeded;
  bool first = true;
  for (const Segment& seg : segments) {
    if (item.generation != generation_.load()) {
      report.interrupted = true;
      return;
    }
    const std::vector<int64_t> ids = tokenize(seg.phonemes, vocab_);
    if (ids.empty()) continue;
    const size_t n_phonemes = code_points(seg.phonemes);
    if (n_phonemes > static_cast<size_t>(kMaxPhonemes))
      throw Error("segment of " + std::to_string(n_phonemes) + " phonemes exceeds the model's 510");
    const auto t0 = std::chrono::steady_clock::now();
    const SynthesisResult r = synth_->synthesize(ids, voice_, options_.speed, static_cast<int64_t>(n_phonemes), &noise);
    report.synth_seconds += ms_since(t0) / 1e3;
    if (item.generation != generation_.load()) {
      report.interrupted = true;
      return;
    }
    if (first) report.first_audio_ms = ms_since(item.queued);
    first = false;
    ++report.segments;
    const size_t written = sink_.write(r.audio);
    report.audio_seconds += static_cast<double>(written) / kSampleRate;
    if (written < r.audio.size()) {
      report.interrupted = true;
      return;
    }
  }
  sink_.end_utterance();
}

}  // namespace kokoro
