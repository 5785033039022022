// One WebSocket connection on its strand (the socket's executor, as the HTTP session had it): the accept, a read
// loop handing each whole message to the handler, and a queue of outgoing messages written one at a time (Beast
// allows one write in flight). The handler and the session point at each other until the connection ends.
#include "apps/serve/websocket_session.h"

#include <boost/asio/post.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/ssl.hpp>
#include <boost/beast/websocket.hpp>
#include <boost/beast/websocket/ssl.hpp>
#include <chrono>
#include <deque>
#include <utility>

namespace kiln::serve {

namespace beast = boost::beast;
namespace http = boost::beast::http;
namespace websocket = boost::beast::websocket;
namespace asio = boost::asio;

namespace {

// NextLayer: beast::tcp_stream, or beast::ssl_stream<beast::tcp_stream> (WSS).
template <class NextLayer>
class WebSocketSession final : public WebSocketChannel, public std::enable_shared_from_this<WebSocketSession<NextLayer>> {
 public:
  WebSocketSession(NextLayer next, std::shared_ptr<WebSocketHandler> handler, WebSocketSessionOptions options)
      : m_ws(std::move(next)), m_handler(std::move(handler)), m_options(std::move(options)) {}

  void start(http::request<http::string_body> request) {
    m_started = std::chrono::steady_clock::now();
    m_ws.set_option(websocket::stream_base::timeout::suggested(beast::role_type::server));
    m_ws.set_option(websocket::stream_base::decorator(
        [](websocket::response_type& response) { response.set(http::field::server, "kiln"); }));
    m_ws.read_message_max(m_options.max_message_bytes);
    auto upgrade = std::make_shared<http::request<http::string_body>>(std::move(request));
    m_ws.async_accept(*upgrade, [self = this->shared_from_this(), upgrade](beast::error_code ec) {
      if (ec) return self->end();
      self->m_handler->on_open(self);
      self->read();
    });
  }

  void send(std::string message, bool binary) override {
    asio::post(m_ws.get_executor(), [self = this->shared_from_this(), message = std::move(message), binary]() mutable {
      if (self->m_closing || self->m_ended) return;
      self->m_outbox.emplace_back(std::move(message), binary);
      if (self->m_outbox.size() == 1) self->write_front();
    });
  }

  void close(const std::string& reason) override {
    asio::post(m_ws.get_executor(), [self = this->shared_from_this(), reason] {
      if (self->m_closing || self->m_ended) return;
      self->m_closing = true;
      self->m_close_reason = reason;
      if (self->m_outbox.empty()) self->close_now();
    });
  }

 private:
  void read() {
    m_ws.async_read(m_buffer, [self = this->shared_from_this()](beast::error_code ec, size_t) {
      if (ec) return self->end();
      std::string message = beast::buffers_to_string(self->m_buffer.data());
      self->m_buffer.consume(self->m_buffer.size());
      if (self->m_handler) self->m_handler->on_message(std::move(message), self->m_ws.got_binary());
      self->read();
    });
  }

  void write_front() {
    m_ws.binary(m_outbox.front().second);
    m_ws.async_write(asio::buffer(m_outbox.front().first), [self = this->shared_from_this()](beast::error_code ec, size_t) {
      if (ec) return self->end();
      self->m_outbox.pop_front();
      if (!self->m_outbox.empty()) return self->write_front();
      if (self->m_closing) self->close_now();
    });
  }

  void close_now() {
    m_ws.async_close(websocket::close_reason(websocket::close_code::normal, m_close_reason),
                     [self = this->shared_from_this()](beast::error_code) { self->end(); });
  }

  // The connection is over (closed by either side, reset, timed out): the handler hears it once and is let go.
  void end() {
    if (m_ended) return;
    m_ended = true;
    m_outbox.clear();
    if (m_handler) m_handler->on_closed();
    m_handler.reset();
    if (m_options.on_end) {
      m_options.on_end(101, std::chrono::duration<double>(std::chrono::steady_clock::now() - m_started).count());
    }
  }

  websocket::stream<NextLayer> m_ws;
  beast::flat_buffer m_buffer;
  std::shared_ptr<WebSocketHandler> m_handler;
  WebSocketSessionOptions m_options;
  std::deque<std::pair<std::string, bool>> m_outbox;  // the message, binary
  std::string m_close_reason;
  bool m_closing = false;
  bool m_ended = false;
  std::chrono::steady_clock::time_point m_started;
};

}  // namespace

void websocket_session_start(asio::ip::tcp::socket socket, http::request<http::string_body> request,
                             std::shared_ptr<WebSocketHandler> handler, const WebSocketSessionOptions& options) {
  // Called on the connection's strand (the socket's executor), where the session goes on.
  std::make_shared<WebSocketSession<beast::tcp_stream>>(beast::tcp_stream(std::move(socket)), std::move(handler), options)
      ->start(std::move(request));
}

void websocket_session_start(beast::ssl_stream<beast::tcp_stream> stream, http::request<http::string_body> request,
                             std::shared_ptr<WebSocketHandler> handler, const WebSocketSessionOptions& options) {
  using Tls = beast::ssl_stream<beast::tcp_stream>;
  std::make_shared<WebSocketSession<Tls>>(std::move(stream), std::move(handler), options)->start(std::move(request));
}

}  // namespace kiln::serve
