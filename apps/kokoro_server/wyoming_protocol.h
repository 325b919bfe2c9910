// Wyoming's framing (the OHF-Voice/wyoming protocol, as its `wyoming` Python package reads and writes it):
// each event is one JSON header line {"type", "data"?, "data_length"?, "payload_length"?, "version"?}, then
// data_length bytes of JSON merged into "data", then payload_length bytes of payload (audio). Pure and
// incremental (bytes in, events out), so that the fuzz target feeds it arbitrary bytes.
#pragma once

#include <cstddef>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>

namespace kokoro::server::wyoming {

struct Event {
  std::string type;
  nlohmann::json data = nlohmann::json::object();
  std::string payload;
};

struct FrameLimits {
  size_t max_header = 64 * 1024;        // one JSON line
  size_t max_data = 1024 * 1024;        // data_length
  size_t max_payload = 4 * 1024 * 1024;  // payload_length (a TTS server receives none; an ASR client's chunks are small)
};

class FrameReader {
 public:
  explicit FrameReader(FrameLimits limits = {}) : limits_(limits) {}

  enum class Status { need_more, event, error };
  // Appends bytes received.
  void feed(std::string_view bytes) { buffer_.append(bytes); }
  // The next whole event in what was fed: `event` (and *out filled), `need_more`, or `error` (*error says
  // why; the stream cannot be resynchronised, so the connection should end after an error event).
  Status next(Event* out, std::string* error);
  size_t buffered() const { return buffer_.size(); }

 private:
  FrameLimits limits_;
  std::string buffer_;
  size_t scanned_ = 0;  // bytes of buffer_ already searched for the header's newline
};

// One event in the wire format: header line, data bytes, payload.
std::string serialize(std::string_view type, const nlohmann::json& data = nlohmann::json::object(),
                      std::string_view payload = {});

// The protocol version written in each header (the wyoming package release whose events we follow).
inline constexpr const char* kProtocolVersion = "1.7.2";

}  // namespace kokoro::server::wyoming
