// kokoro-server as clients see it (label server): the real binary on loopback ports, spoken to over HTTP
// (Boost.Beast's client, and curl) and Wyoming. Every error the issue lists, each followed by a good request
// on the same server; streamed audio decoded back (libsndfile, libfaad2) to the whole utterance; API key;
// 503 with Retry-After when no session is free; a client that disconnects mid-stream frees its session;
// slowloris, malformed and oversize requests; captioned speech; metrics. Needs the model (fails without).
#include <gtest/gtest.h>

#include <utility>  // before Asio (Boost 1.74 needs std::exchange declared)
#include <boost/asio/connect.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/read.hpp>
#include <boost/asio/write.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <nlohmann/json.hpp>

#include "apps/kokoro_server/wyoming_protocol.h"
#include "tests/app_test_support.h"
#include "tests/server_test_support.h"

namespace net = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
using tcp = net::ip::tcp;
using nlohmann::json;
using Clock = std::chrono::steady_clock;
using namespace kokoro::test;

namespace {

const char* kSentence = "The quick brown fox jumps over the lazy dog.";

// A kokoro-server child on free loopback ports; the ports come from its "listening on" line.
class ServerProcess {
 public:
  explicit ServerProcess(std::vector<std::string> extra) {
    std::vector<std::string> args = {KOKORO_SERVER_BIN, "--host", "127.0.0.1", "--http-port", "0", "--wyoming-port", "0"};
    args.insert(args.end(), extra.begin(), extra.end());
    child_ = std::make_unique<ChildProcess>(args);
    wait_until(180, [&] { return !child_->running() || child_->err().find("listening on") != std::string::npos; });
    if (child_->err().find("listening on") == std::string::npos) {
      ADD_FAILURE() << "kokoro-server did not start:\n" << child_->describe();
      return;
    }
    const std::string err = child_->err();
    std::smatch m;
    if (std::regex_search(err, m, std::regex("http://127\\.0\\.0\\.1:(\\d+)"))) http_port = std::stoi(m[1]);
    if (std::regex_search(err, m, std::regex("wyoming tcp://127\\.0\\.0\\.1:(\\d+)"))) wyoming_port = std::stoi(m[1]);
  }
  bool running() { return child_ && child_->running(); }
  std::string log() { return child_->err(); }
  uint16_t http_port = 0, wyoming_port = 0;

 private:
  std::unique_ptr<ChildProcess> child_;
};

struct Response {
  int status = 0;
  http::fields headers;
  std::string body;
  double first_body_seconds = -1;  // request sent -> first body bytes (chunked: first chunk)
  bool complete = false;           // the response ended as HTTP says (last chunk / full length)
  json json_body() const { return json::parse(body); }
};

// One HTTP/1.1 connection (kept alive between requests).
class Connection {
 public:
  explicit Connection(uint16_t port) : socket_(io_) { socket_.connect({net::ip::address_v4::loopback(), port}); }
  Response request(http::verb verb, const std::string& target, const std::string& body = "",
                   const std::vector<std::pair<std::string, std::string>>& headers = {}) {
    http::request<http::string_body> req{verb, target, 11};
    req.set(http::field::host, "127.0.0.1");
    if (!body.empty()) req.set(http::field::content_type, "application/json");
    for (const auto& [k, v] : headers) req.set(k, v);
    req.body() = body;
    req.prepare_payload();
    const auto sent = Clock::now();
    http::write(socket_, req);
    return read(sent);
  }
  Response read(Clock::time_point sent = Clock::now()) {
    Response r;
    http::response_parser<http::string_body> parser;
    parser.body_limit(std::numeric_limits<std::uint64_t>::max());
    beast::error_code ec;
    http::read_header(socket_, buffer_, parser, ec);
    if (ec) return r;
    while (!parser.is_done()) {
      http::read_some(socket_, buffer_, parser, ec);
      if (ec) break;
      if (r.first_body_seconds < 0 && !parser.get().body().empty())
        r.first_body_seconds = std::chrono::duration<double>(Clock::now() - sent).count();
    }
    r.complete = parser.is_done();
    auto msg = parser.release();
    r.status = static_cast<int>(msg.result_int());
    r.headers = msg.base();
    r.body = std::move(msg.body());
    return r;
  }
  tcp::socket& socket() { return socket_; }

 private:
  net::io_context io_;
  tcp::socket socket_;
  beast::flat_buffer buffer_;
};

std::string speech_body(const std::string& input, const std::string& format, bool stream = true,
                        const std::string& extra = "") {
  json j = {{"model", "kokoro"}, {"input", input}, {"voice", "af_heart"}, {"response_format", format}, {"stream", stream}};
  std::string s = j.dump();
  if (!extra.empty()) s = s.substr(0, s.size() - 1) + "," + extra + "}";
  return s;
}

Response post(uint16_t port, const std::string& target, const std::string& body,
              const std::vector<std::pair<std::string, std::string>>& headers = {}) {
  Connection c(port);
  return c.request(http::verb::post, target, body, headers);
}

Response get(uint16_t port, const std::string& target) {
  Connection c(port);
  return c.request(http::verb::get, target);
}

// Raw bytes to the port, and what comes back until the server closes or `seconds` pass.
std::string raw_exchange(uint16_t port, const std::string& bytes, double seconds) {
  net::io_context io;
  tcp::socket s(io);
  s.connect({net::ip::address_v4::loopback(), port});
  net::write(s, net::buffer(bytes));
  timeval tv{static_cast<long>(seconds), 0};
  setsockopt(s.native_handle(), SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
  std::string out;
  char buf[4096];
  for (;;) {
    const ssize_t n = ::recv(s.native_handle(), buf, sizeof buf, 0);
    if (n <= 0) break;
    out.append(buf, n);
  }
  return out;
}

// A Wyoming client connection: write events, read them back with our frame reader.
class WyomingClient {
 public:
  explicit WyomingClient(uint16_t port) : socket_(io_) {
    socket_.connect({net::ip::address_v4::loopback(), port});
    timeval tv{60, 0};
    setsockopt(socket_.native_handle(), SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
  }
  void send(const std::string& type, const json& data = json::object()) {
    net::write(socket_, net::buffer(kokoro::server::wyoming::serialize(type, data)));
  }
  void send_raw(const std::string& bytes) { net::write(socket_, net::buffer(bytes)); }
  // The next event; type "" when the connection closed.
  kokoro::server::wyoming::Event next() {
    kokoro::server::wyoming::Event e;
    std::string error;
    char buf[8192];
    for (;;) {
      const auto st = reader_.next(&e, &error);
      if (st == kokoro::server::wyoming::FrameReader::Status::event) return e;
      if (st == kokoro::server::wyoming::FrameReader::Status::error) {
        ADD_FAILURE() << "bad frame from the server: " << error;
        return {};
      }
      const ssize_t n = ::recv(socket_.native_handle(), buf, sizeof buf, 0);
      if (n <= 0) return {};
      reader_.feed(std::string_view(buf, n));
    }
  }
  // Events up to and including one of type `last`; audio-chunk payloads appended to *pcm.
  std::vector<std::string> until(const std::string& last, std::string* pcm = nullptr) {
    std::vector<std::string> types;
    for (;;) {
      auto e = next();
      if (e.type.empty()) {
        types.push_back("<closed>");
        return types;
      }
      if (e.type != "audio-chunk" || types.empty() || types.back() != "audio-chunk") types.push_back(e.type);
      if (e.type == "audio-chunk") {
        EXPECT_EQ(e.data["rate"], 24000);
        EXPECT_EQ(e.data["width"], 2);
        EXPECT_EQ(e.data["channels"], 1);
        if (pcm) *pcm += e.payload;
      }
      if (e.type == last || e.type == "error") return types;
    }
  }

 private:
  net::io_context io_;
  tcp::socket socket_;
  kokoro::server::wyoming::FrameReader reader_;
};

// The server every test shares: 2 sessions, short timeouts, a small input limit.
class Server : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    server_ = new ServerProcess({"--max-sessions", "2", "--header-timeout", "2", "--idle-timeout", "5",
                                 "--max-input-chars", "2000"});
  }
  static void TearDownTestSuite() {
    delete server_;
    server_ = nullptr;
  }
  void SetUp() override { ASSERT_TRUE(server_->running() && server_->http_port) << server_->log(); }
  void TearDown() override { EXPECT_TRUE(server_->running()) << "the server died:\n" << server_->log(); }
  static uint16_t port() { return server_->http_port; }
  static uint16_t wyoming_port() { return server_->wyoming_port; }

  // The check that follows each error: the same server still speaks.
  static void expect_good_request(Connection* c = nullptr) {
    Response r = c ? c->request(http::verb::post, "/v1/audio/speech", speech_body("Still here.", "pcm"))
                   : post(port(), "/v1/audio/speech", speech_body("Still here.", "pcm"));
    EXPECT_EQ(r.status, 200) << r.body;
    EXPECT_TRUE(r.complete);
    EXPECT_GT(r.body.size(), 24000u) << "less than half a second of audio";
  }
  static ServerProcess* server_;
};
ServerProcess* Server::server_ = nullptr;

void expect_openai_error(const Response& r, int status, const std::string& param) {
  EXPECT_EQ(r.status, status) << r.body;
  ASSERT_NE(r.headers[http::field::content_type].find("application/json"), std::string::npos);
  const json j = r.json_body();
  ASSERT_TRUE(j.contains("error")) << r.body;
  EXPECT_TRUE(j["error"]["message"].is_string());
  EXPECT_TRUE(j["error"].contains("type"));
  if (!param.empty()) {
    EXPECT_EQ(j["error"]["param"], param) << r.body;
  }
}

}  // namespace

TEST_F(Server, EveryBadRequestIsA400AndTheServerKeepsServing) {
  struct Case {
    std::string body, param;
  };
  const std::vector<Case> cases = {
      {"{not json", ""},
      {"[1,2]", ""},
      {R"j({"voice": "af_heart"})j", "input"},
      {R"j({"input": "", "voice": "af_heart"})j", "input"},
      {R"j({"input": "   ", "voice": "af_heart"})j", "input"},
      {"{\"input\": \"caf\xe9\"}", "input"},
      {"{\"input\": \"" + std::string(2001, 'a') + "\"}", "input"},  // over --max-input-chars
      {R"j({"input": "Hi.", "voice": "xx_nobody"})j", "voice"},
      {R"j({"input": "Hi.", "voice": "../../../etc/passwd"})j", "voice"},
      {R"j({"input": "Hi.", "voice": "/work/shared/assets/voices/af_heart.bin"})j", "voice"},
      {R"j({"input": "Hi.", "response_format": "ogg"})j", "response_format"},
      {R"j({"input": "Hi.", "lang_code": "klingon"})j", "lang_code"},
      {R"j({"input": "Hi.", "speed": 0})j", "speed"},
      {R"j({"input": "Hi.", "speed": 10})j", "speed"},
      {R"j({"input": "Hi.", "model": "gpt-4o-mini-tts"})j", "model"},
  };
  Connection keep(port());  // errors and the good request after each on one kept-alive connection
  for (const auto& c : cases) {
    SCOPED_TRACE(c.body.substr(0, 80));
    expect_openai_error(keep.request(http::verb::post, "/v1/audio/speech", c.body), 400, c.param);
    expect_good_request(&keep);
  }
}

TEST_F(Server, StreamedPcmAndWavAreTheWholeUtteranceAsNotStreamed) {
  const Response whole = post(port(), "/v1/audio/speech", speech_body(kSentence, "pcm", false));
  ASSERT_EQ(whole.status, 200);
  EXPECT_EQ(whole.headers[http::field::content_length], std::to_string(whole.body.size()));
  const Response streamed = post(port(), "/v1/audio/speech", speech_body(kSentence, "pcm", true));
  ASSERT_EQ(streamed.status, 200);
  EXPECT_EQ(streamed.headers[http::field::transfer_encoding], "chunked");
  EXPECT_EQ(streamed.headers[http::field::content_type], "audio/pcm");
  EXPECT_TRUE(streamed.complete);
  // Same seed, same text: the same samples, streamed or not (nothing lost at the end, nothing added).
  EXPECT_GT(whole.body.size(), 2u * 24000 * 2) << "a sentence of over 2 s";
  EXPECT_EQ(streamed.body.size(), whole.body.size());
  EXPECT_TRUE(streamed.body == whole.body);
  std::printf("[ info ] pcm: first chunk %.3f s, whole response %.3f s after the request, %.2f s of audio\n",
              streamed.first_body_seconds, whole.first_body_seconds, whole.body.size() / 48000.0);

  const Response wav = post(port(), "/v1/audio/speech", speech_body(kSentence, "wav", true));
  ASSERT_EQ(wav.status, 200);
  EXPECT_EQ(wav.body.substr(0, 4), "RIFF");
  EXPECT_EQ(wav.body.substr(4, 4), std::string("\xff\xff\xff\xff", 4));  // streamed: length unknown
  const auto decoded = server_test::decode_sndfile(wav.body);
  EXPECT_EQ(decoded.rate, 24000);
  EXPECT_EQ(decoded.samples, server_test::from_pcm16(whole.body));
}

TEST_F(Server, EveryFormatDecodesToTheUtterance) {
  const auto reference = server_test::from_pcm16(post(port(), "/v1/audio/speech", speech_body(kSentence, "pcm", false)).body);
  ASSERT_GT(reference.size(), 24000u);
  struct Case {
    const char* format;
    const char* type;
    double min_correlation;
  };
  for (const Case c : {Case{"wav", "audio/wav", 0.9999}, Case{"flac", "audio/flac", 0.9999}, Case{"mp3", "audio/mpeg", 0.97},
                       Case{"opus", "audio/ogg", 0.9}, Case{"aac", "audio/aac", 0.95}})
    for (bool stream : {true, false}) {
      SCOPED_TRACE(std::string(c.format) + (stream ? " streamed" : " whole"));
      const Response r = post(port(), "/v1/audio/speech", speech_body(kSentence, c.format, stream));
      ASSERT_EQ(r.status, 200) << r.body.substr(0, 300);
      EXPECT_EQ(r.headers[http::field::content_type], c.type);
      const auto d = std::string(c.format) == "aac" ? server_test::decode_aac(r.body) : server_test::decode_sndfile(r.body);
      EXPECT_EQ(d.rate, 24000);
      ASSERT_GE(d.samples.size(), reference.size()) << "decoded audio is shorter than the utterance";
      const auto [corr, lag] = server_test::best_alignment(reference, d.samples, 4096);
      EXPECT_GE(corr, c.min_correlation) << "lag " << lag;
    }
}

TEST_F(Server, CurlStreamsSpeech) {
  TempDir dir;
  const std::string out = dir.file("speech.mp3");
  const RunResult r = run_to_end({"curl", "-sS", "--fail", "-N", "-o", out, "-w", "%{http_code} %{time_starttransfer}",
                                  "-H", "Content-Type: application/json", "-d", speech_body(kSentence, "mp3"),
                                  "http://127.0.0.1:" + std::to_string(port()) + "/v1/audio/speech"},
                                 "", 120);
  ASSERT_EQ(r.code(), 0) << r.err;
  EXPECT_EQ(r.out.substr(0, 3), "200");
  std::printf("[ info ] curl: %s (status, seconds to first byte)\n", r.out.c_str());
  const auto bytes = read_bytes(out);
  const auto d = server_test::decode_sndfile(std::string(bytes.begin(), bytes.end()));
  EXPECT_GT(d.samples.size(), 2u * 24000);
}

TEST_F(Server, CaptionedSpeechHasEveryWordWithItsTimes) {
  for (bool stream : {true, false}) {
    SCOPED_TRACE(stream ? "streamed" : "whole");
    const Response r = post(port(), "/dev/captioned_speech", speech_body(kSentence, "wav", stream));
    ASSERT_EQ(r.status, 200) << r.body.substr(0, 300);
    std::vector<std::string> words;
    double last_end = 0;
    size_t lines = 0;
    std::istringstream in(r.body);
    for (std::string line; std::getline(in, line);) {
      if (line.empty()) continue;
      const json j = json::parse(line);
      ++lines;
      EXPECT_EQ(j["audio_format"], "wav");
      EXPECT_TRUE(j["audio"].is_string());
      for (const auto& t : j["timestamps"]) {
        words.push_back(t["word"]);
        EXPECT_GE(t["start_time"].get<double>(), last_end - 1e-9);
        EXPECT_GT(t["end_time"].get<double>(), t["start_time"].get<double>());
        last_end = t["end_time"];
      }
    }
    EXPECT_EQ(lines > 1, stream) << lines << " lines";
    const std::vector<std::string> expected = {"The", "quick", "brown", "fox", "jumps", "over", "the", "lazy", "dog"};
    EXPECT_EQ(words, expected);
    EXPECT_GT(last_end, 1.5);
  }
}

TEST_F(Server, ListsHealthMetricsAndUnknownPaths) {
  EXPECT_EQ(get(port(), "/health").json_body()["status"], "healthy");
  const json voices = get(port(), "/v1/audio/voices").json_body()["voices"];
  EXPECT_EQ(voices.size(), 54u);
  EXPECT_NE(std::find(voices.begin(), voices.end(), "af_heart"), voices.end());
  const json models = get(port(), "/v1/models").json_body();
  EXPECT_EQ(models["object"], "list");
  std::set<std::string> ids;
  for (const auto& m : models["data"]) ids.insert(m["id"]);
  EXPECT_EQ(ids, (std::set<std::string>{"kokoro", "tts-1", "tts-1-hd"}));
  expect_openai_error(get(port(), "/v1/nothing"), 404, "");
  expect_openai_error(get(port(), "/v1/audio/speech"), 405, "");
  ASSERT_EQ(post(port(), "/v1/audio/speech", speech_body("Metrics.", "pcm")).status, 200);
  const Response m = get(port(), "/metrics");
  EXPECT_EQ(m.status, 200);
  for (const char* needle : {"kokoro_requests_total{protocol=\"http\",endpoint=\"/v1/audio/speech\"}",
                             "kokoro_errors_total{protocol=\"http\",status=\"404\"} ", "kokoro_ttfa_seconds_count ",
                             "kokoro_rtf_bucket{le=\"1\"}", "kokoro_sessions{state=\"open\"}", "kokoro_underruns_total "})
    EXPECT_NE(m.body.find(needle), std::string::npos) << needle;
  expect_good_request();
}

TEST_F(Server, MalformedOversizeAndSlowRequests) {
  // Not HTTP at all.
  EXPECT_EQ(raw_exchange(port(), "GARBAGE\r\n\r\n", 5).substr(0, 12), "HTTP/1.1 400");
  // A header over 16 KB.
  EXPECT_EQ(raw_exchange(port(), "GET /health HTTP/1.1\r\nX-Big: " + std::string(20000, 'x') + "\r\n\r\n", 5).substr(0, 12),
            "HTTP/1.1 431");
  // A body over the limit (--max-input-chars 2000: 2000 * 12 + 64 KiB): refused before it is read.
  const std::string big = "{\"input\": \"" + std::string(200000, 'a') + "\"}";
  const Response r = post(port(), "/v1/audio/speech", big);
  expect_openai_error(r, 413, "input");
  expect_good_request();

  // Slowloris: a header trickling in, a line at a time, is cut off at --header-timeout (2 s) after the
  // connection opened, while other clients are served.
  net::io_context io;
  tcp::socket slow(io);
  slow.connect({net::ip::address_v4::loopback(), port()});
  const auto opened = Clock::now();
  net::write(slow, net::buffer(std::string("POST /v1/audio/speech HTTP/1.1\r\nHost: x\r\n")));
  bool closed = false;
  for (int i = 0; i < 40 && !closed; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(250));
    beast::error_code ec;
    net::write(slow, net::buffer(std::string("X-Drip: 1\r\n")), ec);
    char c;
    const ssize_t n = ::recv(slow.native_handle(), &c, 1, MSG_DONTWAIT);
    closed = ec || n == 0 || (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK);
    if (i == 2) expect_good_request();
  }
  const double after = std::chrono::duration<double>(Clock::now() - opened).count();
  EXPECT_TRUE(closed) << "a trickling header kept its connection for " << after << " s";
  EXPECT_LT(after, 8.0);
  expect_good_request();
}

TEST_F(Server, WyomingDescribePingSynthesizeAndStreaming) {
  WyomingClient c(wyoming_port());
  c.send("describe");
  const auto info = c.next();
  ASSERT_EQ(info.type, "info");
  const json& tts = info.data["tts"][0];
  EXPECT_EQ(tts["supports_synthesize_streaming"], true);
  EXPECT_EQ(tts["voices"].size(), 54u);
  for (const auto& v : tts["voices"]) {
    EXPECT_FALSE(v["languages"].empty()) << v.dump();
    EXPECT_EQ(v["installed"], true);
  }

  c.send("ping", {{"text", "hello"}});
  const auto pong = c.next();
  EXPECT_EQ(pong.type, "pong");
  EXPECT_EQ(pong.data["text"], "hello");

  // synthesize: the same samples as HTTP's pcm for the same text and voice.
  std::string pcm;
  c.send("synthesize", {{"text", kSentence}, {"voice", {{"name", "af_heart"}}}});
  EXPECT_EQ(c.until("audio-stop", &pcm), (std::vector<std::string>{"audio-start", "audio-chunk", "audio-stop"}));
  const Response http_pcm = post(port(), "/v1/audio/speech", speech_body(kSentence, "pcm", false));
  EXPECT_TRUE(pcm == http_pcm.body) << pcm.size() << " vs " << http_pcm.body.size() << " bytes";

  // Unknown voice: an error event, and the connection goes on.
  c.send("synthesize", {{"text", "Hi."}, {"voice", {{"name", "xx_nobody"}}}});
  const auto error = c.next();
  EXPECT_EQ(error.type, "error");
  EXPECT_NE(error.data["text"].get<std::string>().find("xx_nobody"), std::string::npos);

  // Home Assistant's streaming order: start, chunks, the whole text again (ignored), stop.
  c.send("synthesize-start", {{"voice", {{"name", "af_heart"}}}});
  for (const char* piece : {"The weather today ", "is sunny. Tomorrow it ", "will rain, so take ", "an umbrella. Bye"})
    c.send("synthesize-chunk", {{"text", piece}});
  c.send("synthesize", {{"text", "The weather today is sunny. Tomorrow it will rain, so take an umbrella. Bye"}});
  c.send("synthesize-stop");
  std::string streamed;
  const auto types = c.until("synthesize-stopped", &streamed);
  const std::vector<std::string> sentence = {"audio-start", "audio-chunk", "audio-stop"};
  std::vector<std::string> expected;
  for (int i = 0; i < 3; ++i) expected.insert(expected.end(), sentence.begin(), sentence.end());
  expected.push_back("synthesize-stopped");
  EXPECT_EQ(types, expected);
  EXPECT_GT(streamed.size(), 4u * 48000) << "three sentences, over 4 s";

  // Not Wyoming: an error event, then the server closes this connection and still serves others.
  c.send_raw("this is not json\n");
  EXPECT_EQ(c.next().type, "error");
  EXPECT_EQ(c.next().type, "");
  WyomingClient d(wyoming_port());
  d.send("synthesize", {{"text", "Still here."}});
  EXPECT_EQ(d.until("audio-stop").back(), "audio-stop");
}

// Separate servers: one session (for 503 and disconnects), an API key.
TEST(ServerCapacity, NoFreeSessionIs503WithRetryAfterAndADisconnectFreesIt) {
  ServerProcess s({"--max-sessions", "1"});
  ASSERT_TRUE(s.running() && s.http_port) << s.log();
  std::string long_text;
  for (int i = 0; i < 40; ++i) long_text += "This sentence is here to keep the only session busy for a while. ";

  // A client that asks for a long stream and reads only its first bytes: back-pressure keeps the session.
  auto hog = std::make_unique<Connection>(s.http_port);
  {
    http::request<http::string_body> req{http::verb::post, "/v1/audio/speech", 11};
    req.set(http::field::host, "x");
    req.body() = speech_body(long_text, "pcm");
    req.prepare_payload();
    http::write(hog->socket(), req);
    char first[1024];
    ASSERT_GT(hog->socket().read_some(net::buffer(first)), 0u);
  }
  const Response busy = post(s.http_port, "/v1/audio/speech", speech_body("Hello.", "pcm"));
  expect_openai_error(busy, 503, "");
  EXPECT_EQ(busy.headers[http::field::retry_after], "1");
  // Wyoming is refused the same way.
  WyomingClient w(s.wyoming_port);
  w.send("synthesize", {{"text", "Hello."}});
  EXPECT_EQ(w.next().type, "error");

  // The hog disconnects mid-stream: its session stops (the metrics show it free) and serves the next client.
  const auto gone = Clock::now();
  hog.reset();
  const bool freed = wait_until(20, [&] {
    return get(s.http_port, "/metrics").body.find("kokoro_sessions{state=\"leased\"} 0\n") != std::string::npos;
  }, 0.02);
  EXPECT_TRUE(freed) << "the session stayed leased after its client left";
  std::printf("[ info ] session free %.3f s after the client disconnected (machine load counts)\n",
              std::chrono::duration<double>(Clock::now() - gone).count());
  const Response next = post(s.http_port, "/v1/audio/speech", speech_body("Hello again.", "pcm"));
  EXPECT_EQ(next.status, 200) << next.body;
  EXPECT_TRUE(s.running()) << s.log();
}

TEST(ServerApiKey, MissingOrWrongKeyIs401) {
  ServerProcess s({"--api-key", "sesame", "--max-sessions", "1", "--no-wyoming"});
  ASSERT_TRUE(s.running() && s.http_port) << s.log();
  EXPECT_EQ(get(s.http_port, "/health").status, 200);  // load balancers probe without a key
  const std::string body = speech_body("Hello.", "pcm");
  Response r = post(s.http_port, "/v1/audio/speech", body);
  expect_openai_error(r, 401, "");
  EXPECT_EQ(r.headers[http::field::www_authenticate], "Bearer");
  expect_openai_error(post(s.http_port, "/v1/audio/speech", body, {{"Authorization", "Bearer sesam"}}), 401, "");
  expect_openai_error(post(s.http_port, "/v1/audio/speech", body, {{"Authorization", "Basic sesame"}}), 401, "");
  expect_openai_error(get(s.http_port, "/v1/audio/voices"), 401, "");
  r = post(s.http_port, "/v1/audio/speech", body, {{"Authorization", "Bearer sesame"}});
  EXPECT_EQ(r.status, 200);
  EXPECT_GT(r.body.size(), 10000u);
}
