// kokoro-server: the OpenAI speech API (HTTP, default port 8880) and the Wyoming protocol (TCP 10200) in one
// process, over one model and a pool of engine sessions (docs/server.md).
#include <CLI/CLI.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/signal_set.hpp>
#include <cstdio>
#include <cstdlib>

#include "apps/kokoro_server/engine_pool.h"
#include "apps/kokoro_server/server.h"
#include "apps/kokoro_server/zeroconf.h"

namespace {

int warm_up(kokoro::server::EnginePool& pool) {
  // One unheard sentence: the first utterance of a process prepares the weights for the kernels (or reads
  // them from the cache); a client should not wait for that.
  std::string why;
  auto lease = pool.acquire(&why);
  if (!lease) return -1;
  auto stream = std::make_shared<kokoro::server::SpeechStream>(1u << 30);
  lease->speak({"Ready.", "af_heart", "", 1.0f, stream});
  kokoro::server::SpeechStream::Batch batch;
  for (;;) {
    if (!stream->take(&batch)) {
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
      continue;
    }
    if (batch.done) return batch.status;
  }
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"kokoro-server: OpenAI-compatible speech API and Wyoming TTS server for kokoro-rt"};
  std::string host = "127.0.0.1", model, assets, precision, voice = "af_heart";
  int http_port = 8880, wyoming_port = 10200, max_sessions = 8, threads = 0;
  std::string api_key;
  if (const char* k = std::getenv("KOKORO_API_KEY")) api_key = k;
  bool zeroconf = false, verbose = false, no_warmup = false, no_http = false, no_wyoming = false;
  kokoro::server::ServerOptions options;
  size_t max_input = options.limits.max_input_chars;
  int idle = 60, header = 10;
  app.add_option("--host", host, "Address to listen on (0.0.0.0 or :: for every interface)")->capture_default_str();
  app.add_option("--http-port", http_port, "HTTP port (0: any free port)")->check(CLI::Range(0, 65535))->capture_default_str();
  app.add_option("--wyoming-port", wyoming_port, "Wyoming TCP port (0: any free port)")->check(CLI::Range(0, 65535))->capture_default_str();
  app.add_flag("--no-http", no_http, "Serve no HTTP");
  app.add_flag("--no-wyoming", no_wyoming, "Serve no Wyoming");
  app.add_option("--api-key", api_key, "Require 'Authorization: Bearer KEY' (default: $KOKORO_API_KEY; none if empty)");
  app.add_option("--max-sessions", max_sessions, "Engine sessions at most (concurrent utterances)")->check(CLI::Range(1, 256))->capture_default_str();
  app.add_option("--max-input-chars", max_input, "Longest input text accepted, in characters")->check(CLI::Range(1, 10000000))->capture_default_str();
  app.add_option("--idle-timeout", idle, "Seconds a kept-alive connection may wait for its next request")->check(CLI::Range(1, 3600))->capture_default_str();
  app.add_option("--header-timeout", header, "Seconds a new connection has to send its whole request header")->check(CLI::Range(1, 600))->capture_default_str();
  app.add_option("--voice", voice, "Wyoming's voice when a request names none")->capture_default_str();
  app.add_option("--model", model, "Model file (default: as kokoro-say finds it)");
  app.add_option("--assets", assets, "Assets directory (config.json, voices/, lexicons/)");
  app.add_option("--threads", threads, "Compute threads of the model (0: the engine's default)")->check(CLI::Range(0, 64));
  app.add_option("--precision", precision, "fp32, bf16, bf16-all or int8 (default: the engine's)");
  app.add_flag("--zeroconf", zeroconf, "Announce the Wyoming service as _wyoming._tcp through Avahi");
  app.add_flag("--no-warmup", no_warmup, "Skip the unheard warm-up sentence at start");
  app.add_flag("-v,--verbose", verbose, "Engine debug messages on stderr");
  CLI11_PARSE(app, argc, argv);
  options.limits.max_input_chars = max_input;
  options.idle_timeout = std::chrono::seconds(idle);
  options.header_timeout = std::chrono::seconds(header);
  options.default_voice = voice;
  options.api_key = api_key;

  kokoro_config config{};
  config.size = sizeof config;
  config.model_path = model.empty() ? nullptr : model.c_str();
  config.assets_dir = assets.empty() ? nullptr : assets.c_str();
  config.precision = precision.empty() ? nullptr : precision.c_str();
  config.threads = threads;
  config.verbose = verbose;
  std::unique_ptr<kokoro::server::EnginePool> pool;
  try {
    pool = std::make_unique<kokoro::server::EnginePool>(config, max_sessions);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "kokoro-server: %s\n", e.what());
    return 1;
  }
  std::string why;
  if (kokoro::server::engine_voice_spec(voice, pool->voices(), &why).empty()) {
    std::fprintf(stderr, "kokoro-server: --voice: %s\n", why.c_str());
    return 2;
  }
  if (!no_warmup && warm_up(*pool) != KOKORO_OK) {
    std::fprintf(stderr, "kokoro-server: warm-up failed: %s\n", kokoro_last_error());
    return 1;
  }

  boost::asio::io_context io(1);
  kokoro::server::Metrics metrics;
  kokoro::server::Server server(io, *pool, metrics, options);
  std::unique_ptr<kokoro::server::ZeroconfAnnouncement> announcement;
  try {
    std::string listening;
    if (!no_http) {
      const auto port = server.listen_http(host, static_cast<uint16_t>(http_port));
      listening += " http://" + host + ":" + std::to_string(port);
    }
    if (!no_wyoming) {
      const auto port = server.listen_wyoming(host, static_cast<uint16_t>(wyoming_port));
      listening += " wyoming tcp://" + host + ":" + std::to_string(port);
      if (zeroconf) announcement = std::make_unique<kokoro::server::ZeroconfAnnouncement>("kokoro", port);
    }
    if (listening.empty()) {
      std::fprintf(stderr, "kokoro-server: nothing to serve (--no-http and --no-wyoming)\n");
      return 2;
    }
    // Tests and scripts wait for this line (and read the ports from it when asked for port 0).
    std::fprintf(stderr, "kokoro-server: listening on%s (%zu voices, up to %d sessions)\n", listening.c_str(),
                 pool->voices().size(), max_sessions);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "kokoro-server: cannot listen on %s: %s\n", host.c_str(), e.what());
    return 1;
  }

  boost::asio::signal_set signals(io, SIGINT, SIGTERM);
  signals.async_wait([&](const boost::system::error_code&, int) {
    std::fprintf(stderr, "kokoro-server: stopping\n");
    server.stop();
    io.stop();
  });
  std::signal(SIGPIPE, SIG_IGN);
  io.run();
  announcement.reset();
  // Order matters: engine threads stop first (none may post to the I/O side afterwards), then the I/O side
  // goes (its suspended connections give their leases back), then the sessions and the model.
  pool->stop_all();
  return 0;
}
