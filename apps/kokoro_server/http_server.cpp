// The HTTP side of kokoro-server (Boost.Beast): OpenAI's POST /v1/audio/speech, Kokoro-FastAPI's
// /dev/captioned_speech, the voice and model lists, health and metrics. See docs/server.md.
#include <utility>  // before Asio (Boost 1.74 needs std::exchange declared)
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/redirect_error.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/asio/write.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <nlohmann/json.hpp>

#include "apps/kokoro_server/audio_encoder.h"
#include "apps/kokoro_server/base64.h"
#include "apps/kokoro_server/server.h"
#include "apps/kokoro_server/utterance.h"

namespace kokoro::server {

namespace net = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
using net::use_awaitable;
using tcp = net::ip::tcp;
using Clock = std::chrono::steady_clock;
using Request = http::request<http::string_body>;

namespace {

// Constant-time comparison: the key's bytes are not revealed by how long a wrong guess takes.
bool same_secret(std::string_view a, std::string_view b) {
  unsigned char diff = a.size() == b.size() ? 0 : 1;
  for (size_t i = 0; i < a.size(); ++i) diff |= static_cast<unsigned char>(a[i] ^ b[i % (b.empty() ? 1 : b.size())]);
  return diff == 0 && !b.empty();
}

ApiError engine_error(int status, const std::string& message) {
  switch (status) {
    case KOKORO_ERR_INVALID_ARGUMENT:
    case KOKORO_ERR_INVALID_TEXT:
    case KOKORO_ERR_VOICE:
    case KOKORO_ERR_LANGUAGE:
    case KOKORO_ERR_SYNTHESIS:  // the text could not be spoken (malformed SSML with ssml forced, ...)
      return ApiError{400, "the engine refused the input: " + message, "input", "synthesis_failed"};
    case KOKORO_ERR_BUSY: return ApiError{503, "session busy, retry", "", "busy"};
    default: return ApiError{500, "synthesis failed: " + message, "", "internal_error"};
  }
}

}  // namespace

// One HTTP connection: requests in order (keep-alive), each answered completely before the next is read.
class HttpConnection {
 public:
  HttpConnection(Server& server, tcp::socket socket) : server_(server), stream_(std::move(socket)) {}

  net::awaitable<void> run() {
    const auto& opt = server_.options();
    bool first = true;
    for (;;) {
      http::request_parser<http::string_body> parser;
      parser.header_limit(16 * 1024);
      // JSON escapes can make a character up to 12 bytes ("\ud83d\ude00" for two code points), plus the fields.
      parser.body_limit(opt.limits.max_input_chars * 12 + 64 * 1024);
      boost::system::error_code ec;
      // The whole header within the deadline, however slowly it trickles in (no slowloris).
      stream_.expires_after(first ? opt.header_timeout : opt.idle_timeout);
      co_await http::async_read_header(stream_, buffer_, parser, net::redirect_error(use_awaitable, ec));
      if (ec) {
        if (ec == http::error::header_limit) co_await send_error(11, ApiError{431, "request header too large"}, false);
        else if (ec == http::error::body_limit)  // a Content-Length over the limit is refused before the body
          co_await send_error(11, body_too_large(), false, 413);
        else if (ec != http::error::end_of_stream && ec != beast::error::timeout && ec != net::error::connection_reset &&
                 ec != net::error::eof && ec != net::error::operation_aborted)
          co_await send_error(11, ApiError{400, "malformed HTTP request: " + ec.message()}, false);
        break;
      }
      first = false;
      arrived_ = Clock::now();
      auto& header = parser.get();
      if (header[http::field::expect] == "100-continue") {  // curl sends it for bodies over 1 KB
        http::response<http::empty_body> cont{http::status::continue_, header.version()};
        stream_.expires_after(opt.write_timeout);
        co_await http::async_write(stream_, cont, net::redirect_error(use_awaitable, ec));
        if (ec) break;
      }
      stream_.expires_after(opt.body_timeout);
      co_await http::async_read(stream_, buffer_, parser, net::redirect_error(use_awaitable, ec));
      if (ec) {
        if (ec == http::error::body_limit) co_await send_error(header.version(), body_too_large(), false, 413);
        else if (ec != beast::error::timeout && ec != http::error::end_of_stream && ec != net::error::eof)
          co_await send_error(header.version(), ApiError{400, "malformed HTTP request: " + ec.message()}, false);
        break;
      }
      Request req = parser.release();
      const bool keep = co_await handle(req);
      if (!keep) break;
    }
    boost::system::error_code ignored;
    stream_.socket().shutdown(tcp::socket::shutdown_both, ignored);
  }

 private:
  ApiError body_too_large() const {
    return bad_request("request body too large (input is limited to " +
                           std::to_string(server_.options().limits.max_input_chars) + " characters)",
                       "input", "input_too_long");
  }

  // Returns whether the connection may carry another request.
  net::awaitable<bool> handle(Request& req) {
    const std::string target(req.target());
    const std::string path = target.substr(0, target.find('?'));
    const bool get = req.method() == http::verb::get, post = req.method() == http::verb::post;
    Metrics& metrics = server_.metrics();
    metrics.request("http", path == "/v1/audio/speech" || path == "/dev/captioned_speech" || path == "/health" ||
                                    path == "/metrics" || path == "/v1/models" || path == "/v1/audio/voices"
                                ? path
                                : "other");
    if (path == "/health" && get) {
      // (json built before the co_await: GCC 12 cannot keep a braced list of string literals across a suspension)
      const nlohmann::json body = {{"status", "healthy"}};
      co_return co_await send_json(req, body);
    }

    if (!server_.options().api_key.empty()) {
      const std::string_view auth = req[http::field::authorization];
      const std::string_view prefix = "Bearer ";
      if (auth.substr(0, prefix.size()) != prefix || !same_secret(auth.substr(prefix.size()), server_.options().api_key))
        co_return co_await send_error(req.version(),
                                      ApiError{401, auth.empty() ? "missing API key (Authorization: Bearer KEY)" : "incorrect API key",
                                               "", "invalid_api_key"},
                                      req.keep_alive());
    }

    if (path == "/v1/audio/speech" && post) co_return co_await speech(req, false);
    if (path == "/dev/captioned_speech" && post) co_return co_await speech(req, true);
    if (path == "/v1/audio/voices" && get) {
      const nlohmann::json body = {{"voices", server_.pool().voices()}};
      co_return co_await send_json(req, body);
    }
    if (path == "/v1/models" && get) {
      nlohmann::json data = nlohmann::json::array();
      for (const char* id : {"kokoro", "tts-1", "tts-1-hd"})
        data.push_back({{"id", id}, {"object", "model"}, {"created", 1735689600}, {"owned_by", "kokoro-rt"}});
      const nlohmann::json body = {{"object", "list"}, {"data", data}};
      co_return co_await send_json(req, body);
    }
    if (path == "/metrics" && get) {
      const kokoro_load load = server_.pool().load();
      http::response<http::string_body> res{http::status::ok, req.version()};
      res.set(http::field::content_type, "text/plain; version=0.0.4");
      res.body() = metrics.render(load.sessions, server_.pool().leased(), load.speaking, load.demand, load.capacity);
      co_return co_await send(std::move(res), req.keep_alive());
    }
    const bool known = path == "/health" || path == "/metrics" || path == "/v1/models" || path == "/v1/audio/voices" ||
                       path == "/v1/audio/speech" || path == "/dev/captioned_speech";
    if (known) co_return co_await send_error(req.version(), ApiError{405, "method not allowed for " + path}, req.keep_alive());
    co_return co_await send_error(req.version(), ApiError{404, "no such endpoint: " + path, "", "not_found"}, req.keep_alive());
  }

  net::awaitable<bool> speech(Request& req, bool captioned) {
    Metrics& metrics = server_.metrics();
    const auto& opt = server_.options();
    auto parsed = parse_speech_request(req.body(), server_.pool().voices(), opt.limits);
    if (auto* error = std::get_if<ApiError>(&parsed)) co_return co_await send_error(req.version(), *error, req.keep_alive());
    SpeechRequest sr = std::get<SpeechRequest>(std::move(parsed));
    if (req.version() < 11) sr.stream = false;  // HTTP/1.0 has no chunked transfer

    std::string why;
    auto lease = server_.pool().acquire(&why);
    if (!lease) {
      metrics.rejected();
      co_return co_await send_error(req.version(), ApiError{503, why, "", "overloaded"}, req.keep_alive());
    }
    auto stream = std::make_shared<SpeechStream>(opt.stream_capacity_samples);
    StreamWaiter waiter(co_await net::this_coro::executor, stream);
    lease->speak(SpeakJob{sr.input, sr.voice, sr.language, sr.speed, stream});

    SpeechStream::Batch batch;
    if (!co_await waiter.next(&batch, opt.stall_timeout))
      co_return co_await send_error(req.version(), ApiError{500, "the engine produced no audio in time"}, false);
    if (batch.done && batch.audio.empty() && batch.status != KOKORO_OK)
      co_return co_await send_error(req.version(), engine_error(batch.status, batch.error), req.keep_alive());

    if (!sr.stream) co_return co_await whole(req, sr, captioned, waiter, batch);
    co_return co_await streamed(req, sr, captioned, waiter, batch, *stream);
  }

  // stream: false. The whole utterance, then one response with its length (true WAV sizes).
  net::awaitable<bool> whole(Request& req, const SpeechRequest& sr, bool captioned, StreamWaiter& waiter,
                             SpeechStream::Batch& batch) {
    std::vector<float> audio;
    std::vector<WordTiming> words;
    for (;;) {
      audio.insert(audio.end(), batch.audio.begin(), batch.audio.end());
      words.insert(words.end(), batch.words.begin(), batch.words.end());
      if (batch.done) break;
      if (!co_await waiter.next(&batch, server_.options().stall_timeout))
        co_return co_await send_error(req.version(), ApiError{500, "the engine stopped producing audio"}, false);
    }
    if (batch.status != KOKORO_OK)
      co_return co_await send_error(req.version(), engine_error(batch.status, batch.error), req.keep_alive());
    std::string bytes;
    auto encoder = make_encoder(sr.format, audio.size());
    encoder->encode(audio.data(), audio.size(), &bytes);
    encoder->finish(&bytes);
    server_.metrics().audio_seconds(audio.size() / 24000.0);
    http::response<http::string_body> res{http::status::ok, req.version()};
    if (captioned) {
      res.set(http::field::content_type, "application/json");
      res.body() = caption_line(sr, bytes, words).dump();
    } else {
      res.set(http::field::content_type, content_type(sr.format));
      res.body() = std::move(bytes);
    }
    server_.metrics().ttfa(std::chrono::duration<double>(Clock::now() - arrived_).count());
    co_return co_await send(std::move(res), req.keep_alive());
  }

  // stream: true. Chunked transfer; each batch of audio is encoded and sent as soon as the engine has it.
  net::awaitable<bool> streamed(Request& req, const SpeechRequest& sr, bool captioned, StreamWaiter& waiter,
                                SpeechStream::Batch& batch, const SpeechStream& stream) {
    const auto& opt = server_.options();
    Metrics& metrics = server_.metrics();
    http::response<http::empty_body> res{http::status::ok, req.version()};
    res.set(http::field::content_type, captioned ? "application/x-ndjson" : content_type(sr.format));
    res.set(http::field::cache_control, "no-cache");
    res.keep_alive(req.keep_alive());
    res.chunked(true);
    http::response_serializer<http::empty_body> serializer{res};
    boost::system::error_code ec;
    stream_.expires_after(opt.write_timeout);
    co_await http::async_write_header(stream_, serializer, net::redirect_error(use_awaitable, ec));
    if (ec) co_return false;

    auto encoder = make_encoder(sr.format);
    PlaybackClock clock;
    bool first = true;
    std::string bytes;
    for (;;) {
      bytes.clear();
      if (!batch.audio.empty()) {
        if (clock.on_audio(batch.audio.size())) metrics.underrun();
        encoder->encode(batch.audio.data(), batch.audio.size(), &bytes);
      }
      if (batch.done && batch.status == KOKORO_OK) encoder->finish(&bytes);
      if (captioned && (!bytes.empty() || !batch.words.empty())) bytes = caption_line(sr, bytes, batch.words).dump() + "\n";
      if (!bytes.empty()) {
        stream_.expires_after(opt.write_timeout);
        co_await net::async_write(stream_, http::make_chunk(net::buffer(bytes)), net::redirect_error(use_awaitable, ec));
        if (ec) co_return false;  // client gone or not reading: the lease's end stops the engine
        if (first && !batch.audio.empty()) {
          metrics.ttfa(std::chrono::duration<double>(Clock::now() - arrived_).count());
          first = false;
        }
      }
      if (batch.done) break;
      if (!co_await waiter.next(&batch, opt.stall_timeout)) {
        metrics.error("http", 500);
        co_return false;  // ends without the last chunk: the client sees an incomplete response
      }
    }
    metrics.audio_seconds(clock.samples() / 24000.0);
    if (batch.status != KOKORO_OK) {
      metrics.error("http", 500);
      co_return false;  // no last chunk: the client sees an incomplete response, not a short one
    }
    co_await net::async_write(stream_, http::make_chunk_last(), net::redirect_error(use_awaitable, ec));
    if (ec) co_return false;
    if (clock.samples() > 0) metrics.rtf(stream.seconds_in_engine() / (clock.samples() / 24000.0));
    co_return req.keep_alive();
  }

  nlohmann::json caption_line(const SpeechRequest& sr, const std::string& bytes, const std::vector<WordTiming>& words) {
    nlohmann::json stamps = nlohmann::json::array();
    if (sr.return_timestamps)
      for (const auto& w : words) {
        const size_t b = std::min(w.text_begin, sr.input.size()), e = std::min(std::max(w.text_end, b), sr.input.size());
        stamps.push_back({{"word", sr.input.substr(b, e - b)},
                          {"start_time", w.start_sample / 24000.0},
                          {"end_time", w.end_sample / 24000.0}});
      }
    return nlohmann::json{{"audio", base64_encode(bytes)}, {"audio_format", format_name(sr.format)}, {"timestamps", stamps}};
  }

  net::awaitable<bool> send_json(const Request& req, const nlohmann::json& body) {
    http::response<http::string_body> res{http::status::ok, req.version()};
    res.set(http::field::content_type, "application/json");
    res.body() = body.dump();
    co_return co_await send(std::move(res), req.keep_alive());
  }

  net::awaitable<bool> send_error(unsigned version, const ApiError& error, bool keep_alive, int status_override = 0) {
    const int status = status_override ? status_override : error.status;
    server_.metrics().error("http", status);
    http::response<http::string_body> res{static_cast<http::status>(status), version};
    res.set(http::field::content_type, "application/json");
    if (status == 503) res.set(http::field::retry_after, "1");
    if (status == 401) res.set(http::field::www_authenticate, "Bearer");
    res.body() = error.json();
    co_return co_await send(std::move(res), keep_alive);
  }

  net::awaitable<bool> send(http::response<http::string_body> res, bool keep_alive) {
    res.keep_alive(keep_alive);
    res.prepare_payload();
    boost::system::error_code ec;
    stream_.expires_after(server_.options().write_timeout);
    co_await http::async_write(stream_, res, net::redirect_error(use_awaitable, ec));
    co_return !ec && keep_alive;
  }

  Server& server_;
  beast::tcp_stream stream_;
  beast::flat_buffer buffer_;
  Clock::time_point arrived_{};
};

net::awaitable<void> Server::http_connection(tcp::socket socket) {
  struct Count {
    std::shared_ptr<std::atomic<size_t>> n;
    ~Count() { --*n; }
  } count{http_connections_};
  boost::system::error_code ignored;
  socket.set_option(tcp::no_delay(true), ignored);  // first audio out without Nagle's wait
  HttpConnection connection(*this, std::move(socket));
  try {
    co_await connection.run();
  } catch (const std::exception& e) {
    std::fprintf(stderr, "kokoro-server: http connection: %s\n", e.what());
  }
}

}  // namespace kokoro::server
