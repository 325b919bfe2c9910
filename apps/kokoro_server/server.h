// kokoro-server's network side: one Boost.Asio I/O thread serves the HTTP API (Boost.Beast) and the Wyoming
// protocol; synthesis runs on the engine's threads (EnginePool), never on the I/O thread. Every connection
// is a C++20 coroutine with deadlines on each read and write (header, idle, body, write, engine stall), so
// a slow or silent client costs a coroutine frame, not a thread, and is dropped on time.
#pragma once

#include <utility>  // before Asio: Boost 1.74's awaitable.hpp uses std::exchange without it

#include <atomic>
#include <boost/asio/awaitable.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <chrono>
#include <cstdint>
#include <memory>
#include <string>

#include "apps/kokoro_server/engine_pool.h"
#include "apps/kokoro_server/metrics.h"
#include "apps/kokoro_server/speech_request.h"

namespace kokoro::server {

struct ServerOptions {
  std::string api_key;  // "" for none
  SpeechLimits limits;
  std::string default_voice = "af_heart";  // Wyoming requests that name none
  std::chrono::seconds header_timeout{10};   // a new connection's first request header, whole
  std::chrono::seconds idle_timeout{60};     // between requests on a kept-alive connection (and Wyoming events)
  std::chrono::seconds body_timeout{30};     // a request body, whole
  std::chrono::seconds write_timeout{30};    // one write to a client that does not read
  std::chrono::seconds stall_timeout{60};    // the engine producing nothing for this long ends the request
  size_t max_connections = 256;              // per protocol; more are closed at once
  size_t stream_capacity_samples = 2 * 24000;  // audio queued per stream before the engine waits (2 s)
};

class Server {
 public:
  Server(boost::asio::io_context& io, EnginePool& pool, Metrics& metrics, ServerOptions options);
  // Bind and start accepting; return the port bound (useful with port 0). Throw on failure.
  uint16_t listen_http(const std::string& host, uint16_t port);
  uint16_t listen_wyoming(const std::string& host, uint16_t port);
  void stop();

  EnginePool& pool() { return pool_; }
  Metrics& metrics() { return metrics_; }
  const ServerOptions& options() const { return options_; }

 private:
  boost::asio::awaitable<void> accept_loop(boost::asio::ip::tcp::acceptor& acceptor, bool wyoming);
  boost::asio::awaitable<void> http_connection(boost::asio::ip::tcp::socket socket);
  boost::asio::awaitable<void> wyoming_connection(boost::asio::ip::tcp::socket socket);

  boost::asio::io_context& io_;
  EnginePool& pool_;
  Metrics& metrics_;
  ServerOptions options_;
  boost::asio::ip::tcp::acceptor http_acceptor_, wyoming_acceptor_;
  // Shared with the connections: a connection still suspended when the server object is gone (shutdown
  // destroys the io_context last) may count itself out safely.
  std::shared_ptr<std::atomic<size_t>> http_connections_ = std::make_shared<std::atomic<size_t>>(0);
  std::shared_ptr<std::atomic<size_t>> wyoming_connections_ = std::make_shared<std::atomic<size_t>>(0);
};

}  // namespace kokoro::server
