#include "apps/kokoro_server/wyoming_protocol.h"

namespace kokoro::server::wyoming {

using nlohmann::json;

namespace {

// A non-negative integer length field, or -1 when absent/null; -2 when malformed.
long long length_field(const json& header, const char* key) {
  auto it = header.find(key);
  if (it == header.end() || it->is_null()) return -1;
  if (it->is_number_unsigned()) return static_cast<long long>(std::min<uint64_t>(it->get<uint64_t>(), 1ull << 62));
  if (it->is_number_integer()) return it->get<long long>() < 0 ? -2 : it->get<long long>();
  return -2;
}

}  // namespace

FrameReader::Status FrameReader::next(Event* out, std::string* error) {
  const size_t newline = buffer_.find('\n', scanned_);
  if (newline == std::string::npos) {
    scanned_ = buffer_.size();
    if (buffer_.size() > limits_.max_header) {
      *error = "event header longer than " + std::to_string(limits_.max_header) + " bytes";
      return Status::error;
    }
    return Status::need_more;
  }
  if (newline > limits_.max_header) {
    *error = "event header longer than " + std::to_string(limits_.max_header) + " bytes";
    return Status::error;
  }
  json header;
  try {
    header = json::parse(std::string_view(buffer_).substr(0, newline));
  } catch (const json::exception& e) {
    *error = std::string("event header is not JSON: ") + e.what();
    return Status::error;
  }
  if (!header.is_object()) {
    *error = "event header is not a JSON object";
    return Status::error;
  }
  auto type = header.find("type");
  if (type == header.end() || !type->is_string() || type->get_ref<const std::string&>().empty()) {
    *error = "event header has no type";
    return Status::error;
  }
  auto data = header.find("data");
  if (data != header.end() && !data->is_null() && !data->is_object()) {
    *error = "event data is not a JSON object";
    return Status::error;
  }
  const long long data_length = length_field(header, "data_length");
  const long long payload_length = length_field(header, "payload_length");
  if (data_length == -2 || payload_length == -2) {
    *error = "data_length and payload_length must be non-negative integers";
    return Status::error;
  }
  if (data_length > static_cast<long long>(limits_.max_data) || payload_length > static_cast<long long>(limits_.max_payload)) {
    *error = "event data or payload larger than this server accepts";
    return Status::error;
  }
  const size_t dlen = data_length > 0 ? static_cast<size_t>(data_length) : 0;
  const size_t plen = payload_length > 0 ? static_cast<size_t>(payload_length) : 0;
  const size_t total = newline + 1 + dlen + plen;
  if (buffer_.size() < total) {
    scanned_ = newline;  // the header is known complete; wait for its data and payload
    return Status::need_more;
  }

  Event ev;
  ev.type = type->get<std::string>();
  if (data != header.end() && data->is_object()) ev.data = std::move(*data);
  if (dlen > 0) {
    json extra;
    try {
      extra = json::parse(std::string_view(buffer_).substr(newline + 1, dlen));
    } catch (const json::exception& e) {
      *error = std::string("event data is not JSON: ") + e.what();
      return Status::error;
    }
    if (!extra.is_object()) {
      *error = "event data is not a JSON object";
      return Status::error;
    }
    ev.data.update(extra);  // as the wyoming package merges it
  }
  ev.payload = buffer_.substr(newline + 1 + dlen, plen);
  buffer_.erase(0, total);
  scanned_ = 0;
  *out = std::move(ev);
  return Status::event;
}

std::string serialize(std::string_view type, const json& data, std::string_view payload) {
  json header = {{"type", type}, {"version", kProtocolVersion}};
  std::string data_bytes;
  if (!data.empty()) {
    data_bytes = data.dump(-1, ' ', false, json::error_handler_t::replace);
    header["data_length"] = data_bytes.size();
  }
  if (!payload.empty()) header["payload_length"] = payload.size();
  std::string out = header.dump(-1, ' ', false, json::error_handler_t::replace);
  out += '\n';
  out += data_bytes;
  out.append(payload);
  return out;
}

}  // namespace kokoro::server::wyoming
