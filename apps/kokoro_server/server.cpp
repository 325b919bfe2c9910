#include "apps/kokoro_server/server.h"

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/ip/v6_only.hpp>
#include <boost/asio/redirect_error.hpp>
#include <boost/asio/use_awaitable.hpp>

namespace kokoro::server {

namespace net = boost::asio;
using tcp = net::ip::tcp;

Server::Server(net::io_context& io, EnginePool& pool, Metrics& metrics, ServerOptions options)
    : io_(io), pool_(pool), metrics_(metrics), options_(std::move(options)), http_acceptor_(io), wyoming_acceptor_(io) {}

namespace {

uint16_t bind(tcp::acceptor& acceptor, const std::string& host, uint16_t port) {
  const tcp::endpoint endpoint(net::ip::make_address(host), port);
  acceptor.open(endpoint.protocol());
  acceptor.set_option(tcp::acceptor::reuse_address(true));
  if (endpoint.address().is_v6()) acceptor.set_option(net::ip::v6_only(false));
  acceptor.bind(endpoint);
  acceptor.listen(net::socket_base::max_listen_connections);
  return acceptor.local_endpoint().port();
}

}  // namespace

uint16_t Server::listen_http(const std::string& host, uint16_t port) {
  const uint16_t bound = bind(http_acceptor_, host, port);
  net::co_spawn(io_, accept_loop(http_acceptor_, false), net::detached);
  return bound;
}

uint16_t Server::listen_wyoming(const std::string& host, uint16_t port) {
  const uint16_t bound = bind(wyoming_acceptor_, host, port);
  net::co_spawn(io_, accept_loop(wyoming_acceptor_, true), net::detached);
  return bound;
}

void Server::stop() {
  boost::system::error_code ignored;
  http_acceptor_.close(ignored);
  wyoming_acceptor_.close(ignored);
}

net::awaitable<void> Server::accept_loop(tcp::acceptor& acceptor, bool wyoming) {
  auto& count = *(wyoming ? wyoming_connections_ : http_connections_);
  for (;;) {
    boost::system::error_code ec;
    tcp::socket socket = co_await acceptor.async_accept(net::redirect_error(net::use_awaitable, ec));
    if (ec) {
      if (ec == net::error::operation_aborted || !acceptor.is_open()) co_return;
      continue;  // EMFILE and the like: the next accept may succeed
    }
    if (count >= options_.max_connections) {
      boost::system::error_code ignored;
      socket.close(ignored);  // over the limit: refused at once rather than queued
      metrics_.error(wyoming ? "wyoming" : "http", 503);
      continue;
    }
    ++count;
    net::co_spawn(io_, wyoming ? wyoming_connection(std::move(socket)) : http_connection(std::move(socket)), net::detached);
  }
}

}  // namespace kokoro::server
