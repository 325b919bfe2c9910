#include "apps/common/word_timestamps.h"

#include <nlohmann/json.hpp>

#include <cmath>
#include <cstdio>
#include <fstream>

#include "core/error.h"

namespace kokoro::app {

TimestampFormat parse_timestamp_format(const std::string& name, const std::string& path) {
  if (name == "json") return TimestampFormat::json;
  if (name == "vtt") return TimestampFormat::vtt;
  if (!name.empty()) throw Error("unknown timestamp format '" + name + "' (json or vtt)");
  const bool vtt = path.size() >= 4 && path.compare(path.size() - 4, 4, ".vtt") == 0;
  return vtt ? TimestampFormat::vtt : TimestampFormat::json;
}

void WordTimestamps::said(uint64_t utterance, const std::string& text) {
  std::lock_guard<std::mutex> lock(mutex_);
  texts_[utterance] = text;
}

void WordTimestamps::on_event(const StreamEvent& event) {
  if (event.kind != StreamEvent::Kind::word) return;
  std::lock_guard<std::mutex> lock(mutex_);
  events_.push_back(event);
}

// Events are resolved to words here, not when they come: an utterance's first events may arrive before
// said() has recorded its text (say() returns the id only after queueing).
std::vector<TimedWord> WordTimestamps::words() const {
  std::lock_guard<std::mutex> lock(mutex_);
  std::vector<TimedWord> out;
  for (const auto& e : events_) {
    auto it = texts_.find(e.utterance);
    if (it == texts_.end()) continue;
    const std::string& text = it->second;
    TimedWord w;
    w.utterance = e.utterance;
    if (e.text_begin < e.text_end && e.text_end <= text.size()) w.text = text.substr(e.text_begin, e.text_end - e.text_begin);
    w.start_s = e.time_s;
    w.end_s = e.end_s;
    out.push_back(std::move(w));
  }
  return out;
}

namespace {

double round_ms(double s) { return std::round(s * 1000.0) / 1000.0; }

// WebVTT time: hh:mm:ss.ttt
std::string vtt_time(double s) {
  const long long ms = std::llround(std::max(0.0, s) * 1000.0);
  char buf[32];
  std::snprintf(buf, sizeof buf, "%02lld:%02lld:%02lld.%03lld", ms / 3600000, ms / 60000 % 60, ms / 1000 % 60, ms % 1000);
  return buf;
}

}  // namespace

std::string WordTimestamps::to_json(const std::vector<TimedWord>& words) {
  nlohmann::json out = nlohmann::json::array();
  for (const auto& w : words)
    out.push_back({{"utterance", w.utterance}, {"word", w.text}, {"start", round_ms(w.start_s)}, {"end", round_ms(w.end_s)}});
  // Invalid UTF-8 in the input (spoken around, see kokoro-say) becomes U+FFFD instead of an exception.
  return out.dump(1, ' ', false, nlohmann::json::error_handler_t::replace) + "\n";
}

std::string WordTimestamps::to_vtt(const std::vector<TimedWord>& words) {
  std::string out = "WEBVTT\n";
  for (const auto& w : words) {
    // A cue's text may not hold "-->" nor blank lines; words never do, but be safe.
    std::string text = w.text;
    for (auto& c : text)
      if (c == '\n' || c == '\r') c = ' ';
    out += "\n" + vtt_time(w.start_s) + " --> " + vtt_time(std::max(w.end_s, w.start_s)) + "\n" + text + "\n";
  }
  return out;
}

void WordTimestamps::write(const std::string& path, TimestampFormat format) const {
  const auto w = words();
  std::ofstream f(path, std::ios::binary | std::ios::trunc);
  if (!f) throw Error("cannot create timestamp file " + path);
  f << (format == TimestampFormat::vtt ? to_vtt(w) : to_json(w));
  f.close();
  if (!f) throw Error("cannot write timestamp file " + path);
}

}  // namespace kokoro::app
