// Boost.Beast + Boost.Asio: one strand per connection, asynchronous reads and writes on `threads` I/O threads, so an
// idle keep-alive connection costs a socket and a small buffer. Requests are answered through a Responder that may
// be called from a worker thread: the response is posted back to the connection's strand.
#include "apps/serve/http_server.h"

#include <algorithm>
#include <array>
#include <atomic>
#include <boost/asio/dispatch.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/signal_set.hpp>
#include <boost/asio/ssl.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/strand.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <boost/beast/ssl.hpp>
#include <boost/beast/websocket/rfc6455.hpp>
#include <cctype>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <nlohmann/json.hpp>
#include <optional>
#include <thread>
#include <type_traits>

#include "apps/serve/websocket_session.h"

namespace kiln::serve {

namespace beast = boost::beast;
namespace http = boost::beast::http;
namespace asio = boost::asio;
using tcp = boost::asio::ip::tcp;
using Clock = std::chrono::steady_clock;

namespace {

struct Shared {
  HttpServerOptions options;
  HttpHandler handler;
  ResponseObserver observer;
  std::atomic<int64_t> in_flight{0};
  std::atomic<bool> draining{false};
};

std::string lowercase(std::string text) {
  std::transform(text.begin(), text.end(), text.begin(), [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return text;
}

bool token_matches(const std::string& authorization, const std::string& token) {
  const std::string prefix = "Bearer ";
  if (authorization.size() != prefix.size() + token.size() || authorization.compare(0, prefix.size(), prefix) != 0) {
    return false;
  }
  unsigned char diff = 0;  // constant time in the token's length
  for (size_t i = 0; i < token.size(); ++i) diff |= static_cast<unsigned char>(authorization[prefix.size() + i] ^ token[i]);
  return diff == 0;
}

// The value of ?token= in a query, percent-decoded; "" when absent.
std::string query_token(const std::string& query) {
  size_t begin = 0;
  while (begin < query.size()) {
    const size_t end = std::min(query.find('&', begin), query.size());
    if (query.compare(begin, 6, "token=") == 0) {
      std::string value;
      for (size_t i = begin + 6; i < end; ++i) {
        if (query[i] == '%' && i + 2 < end && std::isxdigit(static_cast<unsigned char>(query[i + 1])) &&
            std::isxdigit(static_cast<unsigned char>(query[i + 2]))) {
          value += static_cast<char>(std::stoi(query.substr(i + 1, 2), nullptr, 16));
          i += 2;
        } else {
          value += query[i];
        }
      }
      return value;
    }
    begin = end + 1;
  }
  return {};
}

// Stream: beast::tcp_stream (HTTP) or beast::ssl_stream<beast::tcp_stream> (HTTPS, after its handshake).
template <class Stream>
class Session : public std::enable_shared_from_this<Session<Stream>> {
 public:
  Session(Stream stream, std::shared_ptr<Shared> shared) : m_stream(std::move(stream)), m_shared(std::move(shared)) {}

  void start() {
    asio::dispatch(m_stream.get_executor(), [self = this->shared_from_this()] {
      if constexpr (kTls) {
        self->lowest().expires_after(std::chrono::milliseconds(static_cast<int64_t>(self->m_shared->options.idle_seconds * 1000)));
        self->m_stream.async_handshake(asio::ssl::stream_base::server, [self](beast::error_code ec) {
          if (ec) return self->close();  // not TLS, or a certificate the client refused: nothing to answer
          self->read();
        });
      } else {
        self->read();
      }
    });
  }

 private:
  void read() {
    m_parser.emplace();
    m_parser->body_limit(m_shared->options.max_body_bytes);
    lowest().expires_after(std::chrono::milliseconds(static_cast<int64_t>(m_shared->options.idle_seconds * 1000)));
    http::async_read_header(m_stream, m_buffer, *m_parser,
                            [self = this->shared_from_this()](beast::error_code ec, size_t) { self->on_header(ec); });
  }

  // From its header on, a request counts as in flight: a drain waits for its body and answers it (503).
  void on_header(beast::error_code ec) {
    if (ec == http::error::end_of_stream || ec == beast::error::timeout || ec == asio::error::operation_aborted) {
      return close();
    }
    m_started = Clock::now();
    m_shared->in_flight.fetch_add(1);
    if (ec && ec != http::error::body_limit) return abandon();
    if (ec) return on_read(ec);
    lowest().expires_after(std::chrono::milliseconds(static_cast<int64_t>(m_shared->options.idle_seconds * 1000)));
    http::async_read(m_stream, m_buffer, *m_parser,
                     [self = this->shared_from_this()](beast::error_code ec, size_t) { self->on_read(ec); });
  }

  void abandon() {
    m_shared->in_flight.fetch_sub(1);
    close();
  }

  void on_read(beast::error_code ec) {
    if (ec == http::error::body_limit) {
      m_method = std::string(m_parser->get().method_string());
      m_path = std::string(m_parser->get().target());
      m_keep_alive = false;
      m_linger = true;
      return write(http_error(413, "the request body is over the limit of " +
                                       std::to_string(m_shared->options.max_body_bytes) + " bytes (--max-body-mb)"));
    }
    if (ec) return abandon();  // a client gone mid-request, or bytes that are not HTTP: nothing to answer
    http::request<http::string_body> message = m_parser->release();
    const bool upgrade = beast::websocket::is_upgrade(message);
    HttpRequest request;
    request.method = std::string(message.method_string());
    const std::string target(message.target());
    const size_t question = target.find('?');
    request.path = target.substr(0, question);
    if (question != std::string::npos) request.query = target.substr(question + 1);
    for (const auto& field : message) request.headers[lowercase(std::string(field.name_string()))] = std::string(field.value());
    if (!upgrade) request.body = std::move(message.body());
    m_keep_alive = message.keep_alive();
    m_method = request.method;
    m_path = request.path;
    m_origin = request.header("origin");
    lowest().expires_never();  // the answer may wait in a batch queue; the request's own timeout bounds it
    if (m_shared->draining.load()) {
      m_keep_alive = false;
      return write(http_error(503, "the server is shutting down"));
    }
    if (request.method == "OPTIONS") return write(preflight());
    if (!m_shared->options.token.empty() && !public_get(request) &&
        !token_matches(request.header("authorization"), m_shared->options.token) &&
        !(upgrade && token_matches("Bearer " + query_token(request.query), m_shared->options.token))) {
      HttpResponse response = http_error(401, "this server needs \"Authorization: Bearer <token>\"");
      response.headers.emplace_back("WWW-Authenticate", "Bearer");
      return write(std::move(response));
    }
    if (upgrade) return websocket_open(std::move(message), request);
    auto answered = std::make_shared<std::atomic<bool>>(false);
    Responder respond = [self = this->shared_from_this(), answered](HttpResponse response) {
      if (answered->exchange(true)) return;
      asio::post(self->m_stream.get_executor(),
                 [self, response = std::move(response)]() mutable { self->write(std::move(response)); });
    };
    m_shared->handler(std::move(request), std::move(respond));
  }

  // The route's handler takes the connection over (websocket_session.cpp); the upgrade request stops counting as in
  // flight, and the connection is logged when it ends.
  void websocket_open(http::request<http::string_body> message, const HttpRequest& request) {
    const auto& routes = m_shared->options.websocket_routes;
    const auto route = routes.find(request.path);
    m_keep_alive = false;
    if (route == routes.end() || request.method != "GET") {
      HttpResponse response = http_error(404, "no WebSocket endpoint at " + request.method + " " + request.path);
      response.route = "(no route)";
      return write(std::move(response));
    }
    WebSocketUpgrade opened = route->second(request);
    if (!opened.handler) {
      opened.refusal.route = route->first;
      return write(std::move(opened.refusal));
    }
    WebSocketSessionOptions options;
    options.max_message_bytes = m_shared->options.max_body_bytes;
    options.on_end = [shared = m_shared, path = request.path, pattern = route->first](int status, double seconds) {
      if (shared->options.access_log) {
        const nlohmann::json line = {{"method", "GET"}, {"path", path}, {"status", status}, {"websocket", true},
                                     {"ms", std::round(seconds * 1e5) / 100}};
        std::fprintf(stderr, "%s\n", line.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace).c_str());
      }
      if (shared->observer) shared->observer(pattern, status, seconds);
    };
    m_shared->in_flight.fetch_sub(1);
    if constexpr (kTls) {
      websocket_session_start(std::move(m_stream), std::move(message), std::move(opened.handler), options);
    } else {
      websocket_session_start(m_stream.release_socket(), std::move(message), std::move(opened.handler), options);
    }
  }

  bool public_get(const HttpRequest& request) const {
    const auto& paths = m_shared->options.public_paths;
    return request.method == "GET" && std::find(paths.begin(), paths.end(), request.path) != paths.end();
  }

  bool origin_allowed() const {
    const auto& origins = m_shared->options.cors_origins;
    return !m_origin.empty() && std::find(origins.begin(), origins.end(), m_origin) != origins.end();
  }

  HttpResponse preflight() const {
    HttpResponse response;
    response.status = origin_allowed() ? 204 : 403;
    response.route = "OPTIONS";
    if (response.status == 204) {
      response.content_type.clear();
      response.headers.emplace_back("Access-Control-Allow-Methods", "GET, POST, OPTIONS");
      response.headers.emplace_back("Access-Control-Allow-Headers", "Authorization, Content-Type");
      response.headers.emplace_back("Access-Control-Max-Age", "600");
    } else {
      response.body = nlohmann::json{{"error", "origin not allowed: " + m_origin}}.dump();
    }
    return response;
  }

  void write(HttpResponse response) {
    auto message = std::make_shared<http::response<http::string_body>>();
    message->version(11);
    message->result(static_cast<unsigned>(response.status));
    message->set(http::field::server, "kiln");
    if (!response.content_type.empty()) message->set(http::field::content_type, response.content_type);
    for (const auto& [name, value] : response.headers) message->set(name, value);
    if (origin_allowed()) {
      message->set(http::field::access_control_allow_origin, m_origin);
      message->set(http::field::vary, "Origin");
    }
    message->body() = std::move(response.body);
    const bool keep_alive = m_keep_alive && !m_shared->draining.load();
    message->keep_alive(keep_alive);
    message->prepare_payload();
    const size_t bytes = message->body().size();
    http::async_write(m_stream, *message,
                      [self = this->shared_from_this(), message, keep_alive, bytes, route = std::move(response.route),
                       status = response.status](beast::error_code ec, size_t) {
                        self->on_written(ec, keep_alive, route, status, bytes);
                      });
  }

  void on_written(beast::error_code ec, bool keep_alive, const std::string& route, int status, size_t bytes) {
    const double seconds = std::chrono::duration<double>(Clock::now() - m_started).count();
    if (m_shared->options.access_log) {
      const nlohmann::json line = {{"method", m_method}, {"path", m_path}, {"status", status},
                                   {"bytes", bytes},     {"ms", std::round(seconds * 1e5) / 100}};
      std::fprintf(stderr, "%s\n", line.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace).c_str());
    }
    if (m_shared->observer) m_shared->observer(route, status, seconds);
    m_shared->in_flight.fetch_sub(1);
    if (!ec && m_linger) return linger();
    if (ec || !keep_alive) return close();
    read();
  }

  // After refusing a body unread, keep reading (and dropping) it for a moment: closing with unread bytes would send
  // a reset that can destroy the 413 before the client reads it.
  void linger() {
    beast::error_code ignored;
    lowest().socket().shutdown(tcp::socket::shutdown_send, ignored);
    lowest().expires_after(std::chrono::seconds(2));
    m_stream.async_read_some(asio::buffer(m_discard), [self = this->shared_from_this()](beast::error_code ec, size_t) {
      if (ec) return self->close();
      self->linger_more();
    });
  }
  void linger_more() {
    m_stream.async_read_some(asio::buffer(m_discard), [self = this->shared_from_this()](beast::error_code ec, size_t) {
      if (ec) return self->close();
      self->linger_more();
    });
  }

  void close() {
    beast::error_code ignored;
    lowest().socket().shutdown(tcp::socket::shutdown_both, ignored);
  }

  static constexpr bool kTls = !std::is_same_v<Stream, beast::tcp_stream>;
  beast::tcp_stream& lowest() { return beast::get_lowest_layer(m_stream); }

  Stream m_stream;
  beast::flat_buffer m_buffer;
  std::optional<http::request_parser<http::string_body>> m_parser;
  std::shared_ptr<Shared> m_shared;
  Clock::time_point m_started;
  std::string m_method;
  std::string m_path;
  std::string m_origin;
  bool m_keep_alive = true;
  bool m_linger = false;
  std::array<char, 16384> m_discard{};
};

class BeastServer final : public HttpServer {
 public:
  BeastServer(std::shared_ptr<Shared> shared)
      : m_shared(std::move(shared)), m_acceptor(asio::make_strand(m_ioc)), m_signals(m_ioc) {}

  // The certificate chain and its private key (PEM): an error names the file and OpenSSL's reason.
  Status tls_load() {
    const HttpServerOptions& options = m_shared->options;
    if (options.tls_cert.empty() && options.tls_key.empty()) return Status::ok();
    if (options.tls_cert.empty() || options.tls_key.empty()) {
      return invalid_argument("serve: TLS needs both --tls-cert and --tls-key");
    }
    m_tls = std::make_unique<asio::ssl::context>(asio::ssl::context::tls_server);
    m_tls->set_options(asio::ssl::context::default_workarounds | asio::ssl::context::no_sslv2 |
                       asio::ssl::context::no_sslv3 | asio::ssl::context::no_tlsv1 | asio::ssl::context::no_tlsv1_1);
    beast::error_code ec;
    m_tls->use_certificate_chain_file(options.tls_cert, ec);
    if (ec) {
      return invalid_argument("serve: --tls-cert " + options.tls_cert + ": OpenSSL: " + ec.message() +
                              " (expected a PEM certificate chain)");
    }
    m_tls->use_private_key_file(options.tls_key, asio::ssl::context::pem, ec);
    if (ec) {
      return invalid_argument("serve: --tls-key " + options.tls_key + ": OpenSSL: " + ec.message() +
                              " (expected the PEM private key of --tls-cert)");
    }
    if (SSL_CTX_check_private_key(m_tls->native_handle()) != 1) {
      return invalid_argument("serve: --tls-key " + options.tls_key + " is not the key of --tls-cert " + options.tls_cert);
    }
    return Status::ok();
  }

  Status bind() {
    KILN_TRY(tls_load());
    beast::error_code ec;
    const auto address = asio::ip::make_address(m_shared->options.host, ec);
    if (ec) return invalid_argument("serve: --host " + m_shared->options.host + " is not an IP address");
    const tcp::endpoint endpoint(address, static_cast<uint16_t>(m_shared->options.port));
    m_acceptor.open(endpoint.protocol(), ec);
    if (!ec) m_acceptor.set_option(asio::socket_base::reuse_address(true), ec);
    if (!ec) m_acceptor.bind(endpoint, ec);
    if (!ec) m_acceptor.listen(asio::socket_base::max_listen_connections, ec);
    if (ec) {
      return io_error("serve: cannot listen on " + m_shared->options.host + ":" +
                      std::to_string(m_shared->options.port) + ": " + ec.message());
    }
    m_port = m_acceptor.local_endpoint().port();
    return Status::ok();
  }

  int32_t port() const override { return m_port; }

  void run(const std::function<void()>& on_drain) override {
    m_on_drain = on_drain;
    accept();
    if (m_shared->options.handle_signals) {
      beast::error_code ignored;  // a signal that cannot be caught leaves stop() and the default action
      m_signals.add(SIGINT, ignored);
      m_signals.add(SIGTERM, ignored);
      m_signals.async_wait([this](beast::error_code ec, int) {
        if (!ec) begin_drain();
      });
    }
    std::vector<std::thread> threads;
    for (int32_t i = 1; i < std::max(1, m_shared->options.threads); ++i) threads.emplace_back([this] { m_ioc.run(); });
    m_ioc.run();
    for (auto& thread : threads) thread.join();
  }

  void stop() override {
    asio::post(m_ioc, [this] { begin_drain(); });
  }

 private:
  void accept() {
    m_acceptor.async_accept(asio::make_strand(m_ioc), [this](beast::error_code ec, tcp::socket socket) {
      if (ec == asio::error::operation_aborted || !m_acceptor.is_open()) return;
      if (!ec && m_tls) {
        using TlsStream = beast::ssl_stream<beast::tcp_stream>;
        std::make_shared<Session<TlsStream>>(TlsStream(beast::tcp_stream(std::move(socket)), *m_tls), m_shared)->start();
      } else if (!ec) {
        std::make_shared<Session<beast::tcp_stream>>(beast::tcp_stream(std::move(socket)), m_shared)->start();
      }
      accept();  // a failed accept (out of descriptors) does not stop the server
    });
  }

  void begin_drain() {
    if (m_shared->draining.exchange(true)) return;
    asio::post(m_acceptor.get_executor(), [this] {
      beast::error_code ignored;
      m_acceptor.close(ignored);
    });
    m_signals.cancel();
    if (m_on_drain) m_on_drain();
    m_deadline = Clock::now() + std::chrono::milliseconds(static_cast<int64_t>(m_shared->options.drain_seconds * 1000));
    wait_for_in_flight();
  }

  // Idle keep-alive connections are not waited for: io_context::stop() drops them.
  void wait_for_in_flight() {
    if (m_shared->in_flight.load() == 0 || Clock::now() >= m_deadline) {
      m_ioc.stop();
      return;
    }
    m_timer.expires_after(std::chrono::milliseconds(10));
    m_timer.async_wait([this](beast::error_code) { wait_for_in_flight(); });
  }

  std::shared_ptr<Shared> m_shared;
  asio::io_context m_ioc;
  tcp::acceptor m_acceptor;
  asio::signal_set m_signals;
  asio::steady_timer m_timer{m_ioc};
  std::function<void()> m_on_drain;
  Clock::time_point m_deadline;
  int32_t m_port = 0;
  std::unique_ptr<asio::ssl::context> m_tls;  // with --tls-cert: every connection is TLS
};

}  // namespace

HttpResponse http_error(int status, const std::string& message) {
  return http_json(status, nlohmann::json{{"error", message}}.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace));
}

HttpResponse http_json(int status, std::string body) {
  HttpResponse response;
  response.status = status;
  response.body = std::move(body);
  return response;
}

Result<std::unique_ptr<HttpServer>> HttpServer::open(const HttpServerOptions& options, HttpHandler handler,
                                                     ResponseObserver observer) {
  auto shared = std::make_shared<Shared>();
  shared->options = options;
  shared->handler = std::move(handler);
  shared->observer = std::move(observer);
  auto server = std::make_unique<BeastServer>(std::move(shared));
  KILN_TRY(server->bind());
  return std::unique_ptr<HttpServer>(std::move(server));
}

}  // namespace kiln::serve
