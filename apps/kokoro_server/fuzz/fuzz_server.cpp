// libFuzzer target for kokoro-server's input layer: what a client's bytes meet before the engine. The first
// byte picks the path, the rest is the input:
//   0-63    an HTTP request through Boost.Beast's parser (the server's limits), its body through
//           parse_speech_request: either a request whose fields hold what the server promises (voice made of
//           known names only, speed 0.25..4, input valid UTF-8 within the limit) or a 4xx ApiError whose JSON parses
//   64-127  the body alone through parse_speech_request (the same checks)
//   128-191 Wyoming framing: the bytes fed to FrameReader in pieces whose sizes come from the input; every
//           event it returns is serialized and read back equal; an error ends the stream
//   192-255 streamed text through SentenceSplitter in pieces: no text lost or invented (the sentences and the
//           rest hold the same non-blank bytes in order)
// Anything else traps.
#include <utility>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/http.hpp>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "apps/kokoro_server/sentence_splitter.h"
#include "apps/kokoro_server/speech_request.h"
#include "apps/kokoro_server/wyoming_protocol.h"

namespace {

using namespace kokoro::server;

void check(bool ok) {
  if (!ok) __builtin_trap();
}

const std::vector<std::string> kVoices = {"af_alloy", "af_bella", "af_heart", "af_nova", "af_sky", "am_echo",
                                          "am_onyx",  "bf_emma",  "bm_fable", "jf_alpha", "zf_xiaobei"};

bool known(const std::string& name) {
  for (const auto& v : kVoices)
    if (v == name) return true;
  return false;
}

void body(std::string_view bytes) {
  SpeechLimits limits;
  limits.max_input_chars = 300;
  auto r = parse_speech_request(bytes, kVoices, limits);
  if (auto* e = std::get_if<ApiError>(&r)) {
    check(e->status >= 400 && e->status < 500 && !e->message.empty());
    const auto j = nlohmann::json::parse(e->json());  // throws (-> crash) if the error JSON were malformed
    check(j["error"]["message"].is_string());
    return;
  }
  const SpeechRequest& s = std::get<SpeechRequest>(r);
  check(s.speed >= 0.25f && s.speed <= 4.0f);
  const long long n = utf8_length(s.input);
  check(n > 0 && static_cast<size_t>(n) <= limits.max_input_chars);
  // The voice spec reaches the engine: only names of the model's voices, with numeric weights.
  size_t start = 0;
  while (start <= s.voice.size()) {
    size_t end = s.voice.find(',', start);
    if (end == std::string::npos) end = s.voice.size();
    std::string item = s.voice.substr(start, end - start);
    item = item.substr(0, item.find(':'));
    check(known(item));
    start = end + 1;
  }
  check(s.language.empty() || !engine_language(s.language).empty());
}

void http_request(std::string_view bytes) {
  namespace http = boost::beast::http;
  http::request_parser<http::string_body> parser;
  parser.header_limit(16 * 1024);
  parser.body_limit(300 * 12 + 64 * 1024);
  parser.eager(true);
  boost::beast::error_code ec;
  size_t used = 0;
  while (used < bytes.size() && !parser.is_done()) {
    const size_t n = parser.put(boost::asio::buffer(bytes.data() + used, bytes.size() - used), ec);
    if (ec == http::error::need_more) break;
    if (ec) return;
    if (n == 0) break;
    used += n;
  }
  if (!parser.is_done()) return;
  body(parser.get().body());
}

void wyoming_frames(std::string_view bytes) {
  wyoming::FrameLimits limits;
  limits.max_header = 4096;
  limits.max_data = 4096;
  limits.max_payload = 4096;
  wyoming::FrameReader reader(limits);
  size_t at = 0;
  size_t step = 1;
  while (at < bytes.size()) {
    const size_t n = std::min(step, bytes.size() - at);
    reader.feed(bytes.substr(at, n));
    step = (static_cast<unsigned char>(bytes[at]) % 61) + 1;  // piece sizes from the input itself
    at += n;
    for (;;) {
      wyoming::Event e;
      std::string error;
      const auto st = reader.next(&e, &error);
      if (st == wyoming::FrameReader::Status::error) {
        check(!error.empty());
        return;
      }
      if (st == wyoming::FrameReader::Status::need_more) break;
      check(!e.type.empty() && e.data.is_object() && e.payload.size() <= limits.max_payload);
      // Our writer's bytes, read back, are the same event.
      wyoming::FrameReader again;
      again.feed(wyoming::serialize(e.type, e.data, e.payload));
      wyoming::Event back;
      std::string error2;
      check(again.next(&back, &error2) == wyoming::FrameReader::Status::event);
      check(back.type == e.type && back.payload == e.payload);
      check(back.data.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace) ==
            e.data.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace));
    }
  }
}

std::string non_blank(std::string_view s) {
  std::string out;
  for (char c : s)
    if (!(c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v')) out += c;
  return out;
}

void sentences(std::string_view bytes) {
  SentenceSplitter splitter;
  std::string all_out;
  size_t at = 0;
  while (at < bytes.size()) {
    const size_t n = std::min<size_t>((static_cast<unsigned char>(bytes[at]) % 17) + 1, bytes.size() - at);
    for (const auto& s : splitter.add(bytes.substr(at, n))) {
      check(!s.empty());
      all_out += s;
    }
    at += n;
  }
  all_out += splitter.finish();
  check(non_blank(all_out) == non_blank(bytes));
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  const std::string_view rest(reinterpret_cast<const char*>(data) + 1, size - 1);
  const uint8_t path = data[0];
  try {
    if (path < 64) http_request(rest);
    else if (path < 128) body(rest);
    else if (path < 192) wyoming_frames(rest);
    else sentences(rest);
  } catch (const std::exception&) {
    __builtin_trap();  // the input layer reports errors as values; an exception escaping it is a bug
  }
  return 0;
}
