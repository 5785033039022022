// The Beast side of a WebSocket connection: http_server.cpp hands over an upgrade request's socket, and the session
// accepts it, reads whole messages into the route's WebSocketHandler and writes what its channel is given, in order.
// Only http_server.cpp and websocket_session.cpp include this (and so Boost.Beast).
#pragma once

#include <boost/asio/ip/tcp.hpp>
#include <boost/beast/core/tcp_stream.hpp>
#include <boost/beast/http.hpp>
#include <boost/beast/ssl/ssl_stream.hpp>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>

#include "apps/serve/websocket_types.h"

namespace kiln::serve {

struct WebSocketSessionOptions {
  uint64_t max_message_bytes = 64ull << 20;
  // Called once the connection ends (access log, /metrics): the status (101 accepted) and its seconds.
  std::function<void(int status, double seconds)> on_end;
};

// Takes the socket (or the TLS stream, its handshake done) over; the session lives until the connection ends.
void websocket_session_start(boost::asio::ip::tcp::socket socket,
                             boost::beast::http::request<boost::beast::http::string_body> request,
                             std::shared_ptr<WebSocketHandler> handler, const WebSocketSessionOptions& options);
void websocket_session_start(boost::beast::ssl_stream<boost::beast::tcp_stream> stream,
                             boost::beast::http::request<boost::beast::http::string_body> request,
                             std::shared_ptr<WebSocketHandler> handler, const WebSocketSessionOptions& options);

}  // namespace kiln::serve
