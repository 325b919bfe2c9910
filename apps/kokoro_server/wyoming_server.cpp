// The Wyoming side of kokoro-server (what Home Assistant speaks to TTS servers): describe -> info; synthesize
// -> audio-start, audio-chunk..., audio-stop; streaming text in (synthesize-start, synthesize-chunk...,
// synthesize-stop) -> the same per sentence as soon as each sentence's text is complete, then
// synthesize-stopped; ping -> pong; failures -> error. The message order is wyoming-piper's, which Home
// Assistant's wyoming integration reads: it sends synthesize-start, the chunks, a `synthesize` with the
// whole text (for servers without streaming: ignored here while streaming), then synthesize-stop.
#include <utility>  // before Asio (Boost 1.74 needs std::exchange declared)
#include <boost/asio/redirect_error.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/asio/write.hpp>
#include <boost/beast/core/tcp_stream.hpp>
#include <optional>

#include "apps/kokoro_server/sentence_splitter.h"
#include "apps/kokoro_server/server.h"
#include "apps/kokoro_server/utterance.h"
#include "apps/kokoro_server/wyoming_protocol.h"

namespace kokoro::server {

namespace net = boost::asio;
namespace beast = boost::beast;
using net::use_awaitable;
using nlohmann::json;
using tcp = net::ip::tcp;

namespace {

// BCP 47 as Home Assistant writes languages ("en-US"), from the engine's codes.
std::string bcp47(const std::string& code) {
  const auto dash = code.find('-');
  if (dash == std::string::npos) return code;
  std::string region = code.substr(dash + 1);
  for (char& c : region) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  return code.substr(0, dash) + "-" + region;
}

// The language a voice speaks: its first letter, as the engine reads it.
std::string voice_language(const std::string& voice) {
  return voice.empty() ? "" : engine_language(std::string(1, voice[0]));
}

constexpr int kChunkSamples = 2048;  // ~85 ms per audio-chunk event
constexpr size_t kMaxPendingText = 16 * 1024;  // streamed text without a sentence end, spoken once this long

}  // namespace

json wyoming_info(const std::vector<std::string>& voices) {
  const json attribution = {{"name", "hexgrad (Kokoro-82M), kokoro-rt"}, {"url", "https://huggingface.co/hexgrad/Kokoro-82M"}};
  json list = json::array();
  for (const auto& v : voices) {
    const std::string lang = voice_language(v);
    list.push_back({{"name", v},
                    {"description", v + (lang.empty() ? "" : " (" + bcp47(lang) + ")")},
                    {"attribution", attribution},
                    {"installed", true},
                    {"version", nullptr},
                    {"languages", lang.empty() ? json::array() : json::array({bcp47(lang)})},
                    {"speakers", nullptr}});
  }
  json tts = {{"name", "kokoro"},
              {"description", "kokoro-rt: Kokoro-82M in real time"},
              {"attribution", attribution},
              {"installed", true},
              {"version", kokoro_version()},
              {"voices", list},
              {"supports_synthesize_streaming", true}};
  return json{{"asr", json::array()},    {"tts", json::array({tts})}, {"handle", json::array()}, {"intent", json::array()},
              {"wake", json::array()},   {"mic", json::array()},       {"snd", json::array()}};
}

class WyomingConnection {
 public:
  WyomingConnection(Server& server, tcp::socket socket) : server_(server), stream_(std::move(socket)) {}

  net::awaitable<void> run() {
    const auto& opt = server_.options();
    std::string buffer(16 * 1024, '\0');
    for (;;) {
      wyoming::Event event;
      std::string error;
      const auto status = reader_.next(&event, &error);
      if (status == wyoming::FrameReader::Status::error) {
        co_await send_error(error, "bad-event", 400);
        co_return;
      }
      if (status == wyoming::FrameReader::Status::event) {
        if (!co_await handle(event)) co_return;
        continue;
      }
      boost::system::error_code ec;
      stream_.expires_after(opt.idle_timeout);
      const size_t n = co_await stream_.async_read_some(net::buffer(buffer), net::redirect_error(use_awaitable, ec));
      if (ec) co_return;
      reader_.feed(std::string_view(buffer.data(), n));
    }
  }

 private:
  // false: end the connection.
  net::awaitable<bool> handle(const wyoming::Event& e) {
    server_.metrics().request("wyoming", e.type);
    if (e.type == "describe") co_return co_await send("info", wyoming_info(server_.pool().voices()));
    if (e.type == "ping") {
      json data = json::object();
      if (auto t = e.data.find("text"); t != e.data.end() && t->is_string()) data["text"] = *t;
      co_return co_await send("pong", data);
    }
    if (e.type == "synthesize") {
      if (streaming_) co_return true;  // Home Assistant's copy of the streamed text, for servers without streaming
      std::string voice, language, why;
      if (!voice_of(e.data, &voice, &language, &why)) co_return co_await send_error(why, "voice-not-found", 400);
      std::string text;
      if (!text_of(e.data, &text, &why)) co_return co_await send_error(why, "bad-text", 400);
      auto lease = server_.pool().acquire(&why);
      if (!lease) {
        server_.metrics().rejected();
        co_return co_await send_error(why, "overloaded", 503);
      }
      co_return co_await speak(*lease, text, voice, language);
    }
    if (e.type == "synthesize-start") {
      streaming_ = true;
      stream_failed_ = false;
      splitter_ = SentenceSplitter();
      std::string why;
      if (!voice_of(e.data, &stream_voice_, &stream_language_, &why)) {
        stream_failed_ = true;
        co_return co_await send_error(why, "voice-not-found", 400);
      }
      lease_ = server_.pool().acquire(&why);
      if (!lease_) {
        stream_failed_ = true;
        server_.metrics().rejected();
        co_return co_await send_error(why, "overloaded", 503);
      }
      co_return true;
    }
    if (e.type == "synthesize-chunk") {
      if (!streaming_ || stream_failed_) co_return true;
      auto t = e.data.find("text");
      if (t == e.data.end() || !t->is_string()) co_return true;
      std::vector<std::string> ready = splitter_.add(t->get<std::string>());
      if (splitter_.pending() > kMaxPendingText) ready.push_back(splitter_.finish());  // no end in sight: speak it
      for (const auto& sentence : ready)
        if (!sentence.empty() && !co_await speak(*lease_, sentence, stream_voice_, stream_language_)) co_return false;
      co_return true;
    }
    if (e.type == "synthesize-stop") {
      if (!streaming_) co_return true;
      const std::string rest = splitter_.finish();
      if (!stream_failed_ && !rest.empty() && !co_await speak(*lease_, rest, stream_voice_, stream_language_))
        co_return false;
      streaming_ = false;
      lease_.reset();
      co_return co_await send("synthesize-stopped");
    }
    co_return true;  // events for other services (asr, wake, ...) are not ours: ignored, as Wyoming servers do
  }

  bool voice_of(const json& data, std::string* voice, std::string* language, std::string* why) {
    const auto& voices = server_.pool().voices();
    std::string name, lang;
    if (auto v = data.find("voice"); v != data.end() && v->is_object()) {
      if (auto n = v->find("name"); n != v->end() && n->is_string()) name = n->get<std::string>();
      if (auto l = v->find("language"); l != v->end() && l->is_string()) lang = l->get<std::string>();
    }
    language->clear();
    if (!lang.empty()) {
      *language = engine_language(lang);
      if (language->empty()) {
        *why = "language '" + lang + "' is not supported";
        return false;
      }
    }
    if (name.empty()) {
      // No voice named: the default if it speaks the language asked for, else that language's first voice.
      name = server_.options().default_voice;
      if (!language->empty() && voice_language(name) != *language)
        for (const auto& v : voices)
          if (voice_language(v) == *language) {
            name = v;
            break;
          }
    }
    *voice = engine_voice_spec(name, voices, why);
    return !voice->empty();
  }

  bool text_of(const json& data, std::string* text, std::string* why) {
    auto t = data.find("text");
    if (t == data.end() || !t->is_string()) {
      *why = "synthesize needs a text";
      return false;
    }
    *text = t->get<std::string>();
    const long long chars = utf8_length(*text);
    if (chars < 0) *why = "text is not valid UTF-8";
    else if (text->find_first_not_of(" \t\r\n") == std::string::npos) *why = "text is empty";
    else if (static_cast<size_t>(chars) > server_.options().limits.max_input_chars)
      *why = "text is longer than " + std::to_string(server_.options().limits.max_input_chars) + " characters";
    else return true;
    return false;
  }

  // One utterance: audio-start, audio-chunks as the engine produces them, audio-stop. false: client gone.
  net::awaitable<bool> speak(EnginePool::Lease& lease, const std::string& text, const std::string& voice,
                             const std::string& language) {
    const auto& opt = server_.options();
    const auto arrived = std::chrono::steady_clock::now();
    auto stream = std::make_shared<SpeechStream>(opt.stream_capacity_samples);
    StreamWaiter waiter(co_await net::this_coro::executor, stream);
    lease.speak(SpeakJob{text, voice, language, 1.0f, stream});
    const json format = {{"rate", 24000}, {"width", 2}, {"channels", 1}};
    SpeechStream::Batch batch;
    PlaybackClock clock;
    bool started = false;
    std::string pcm;
    for (;;) {
      if (!co_await waiter.next(&batch, opt.stall_timeout)) co_return co_await send_error("the engine stopped producing audio", "stalled", 500);
      if (batch.done && batch.status != KOKORO_OK && clock.samples() == 0)
        co_return co_await send_error("the engine refused the text: " + batch.error, "synthesis-failed", 400);
      if (!started) {
        if (!co_await send("audio-start", format)) co_return false;
        started = true;
      }
      if (!batch.audio.empty() && clock.on_audio(batch.audio.size()) ) server_.metrics().underrun();
      for (size_t at = 0; at < batch.audio.size(); at += kChunkSamples) {
        const size_t n = std::min<size_t>(kChunkSamples, batch.audio.size() - at);
        pcm.resize(2 * n);
        for (size_t i = 0; i < n; ++i) {
          const float x = std::clamp(batch.audio[at + i], -1.0f, 1.0f);
          const auto v = static_cast<uint16_t>(static_cast<int16_t>(std::lrintf(x * 32767.0f)));
          pcm[2 * i] = static_cast<char>(v & 0xFF);
          pcm[2 * i + 1] = static_cast<char>(v >> 8);
        }
        if (!co_await send("audio-chunk", format, pcm)) co_return false;
        if (clock.samples() == batch.audio.size() && at == 0)
          server_.metrics().ttfa(std::chrono::duration<double>(std::chrono::steady_clock::now() - arrived).count());
      }
      if (batch.done) break;
    }
    server_.metrics().audio_seconds(clock.samples() / 24000.0);
    if (clock.samples() > 0) server_.metrics().rtf(stream->seconds_in_engine() / (clock.samples() / 24000.0));
    if (batch.status != KOKORO_OK) co_return co_await send_error("synthesis failed: " + batch.error, "synthesis-failed", 500);
    co_return co_await send("audio-stop", json::object());
  }

  net::awaitable<bool> send(std::string_view type, const json& data = json::object(), std::string_view payload = {}) {
    const std::string bytes = wyoming::serialize(type, data, payload);
    boost::system::error_code ec;
    stream_.expires_after(server_.options().write_timeout);
    co_await net::async_write(stream_, net::buffer(bytes), net::redirect_error(use_awaitable, ec));
    co_return !ec;
  }

  net::awaitable<bool> send_error(const std::string& text, const std::string& code, int status) {
    server_.metrics().error("wyoming", status);
    const json data = {{"text", text}, {"code", code}};  // not inside the co_await: GCC 12 coroutine bug
    co_return co_await send("error", data);
  }

  Server& server_;
  beast::tcp_stream stream_;
  wyoming::FrameReader reader_;
  bool streaming_ = false, stream_failed_ = false;
  SentenceSplitter splitter_;
  std::string stream_voice_, stream_language_;
  std::unique_ptr<EnginePool::Lease> lease_;
};

net::awaitable<void> Server::wyoming_connection(tcp::socket socket) {
  struct Count {
    std::shared_ptr<std::atomic<size_t>> n;
    ~Count() { --*n; }
  } count{wyoming_connections_};
  boost::system::error_code ignored;
  socket.set_option(tcp::no_delay(true), ignored);
  WyomingConnection connection(*this, std::move(socket));
  try {
    co_await connection.run();
  } catch (const std::exception& e) {
    std::fprintf(stderr, "kokoro-server: wyoming connection: %s\n", e.what());
  }
}

}  // namespace kokoro::server
