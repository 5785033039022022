// The HTTP/1.1 server core: accept, keep-alive, body limit (413), bearer token (401), CORS for listed origins, the
// access log, and a graceful drain. Boost.Beast stays inside http_server.cpp.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "apps/serve/http_types.h"
#include "apps/serve/websocket_types.h"
#include "kiln/status.h"

namespace kiln::serve {

struct HttpServerOptions {
  std::string host = "127.0.0.1";
  int32_t port = 0;
  uint64_t max_body_bytes = 64ull << 20;
  std::string token;
  std::vector<std::string> public_paths;  // GET of these needs no token (the web page's own files)
  std::vector<std::string> cors_origins;
  int32_t threads = 1;
  double drain_seconds = 10;
  double idle_seconds = 75;  // a keep-alive connection idle this long is closed
  bool access_log = true;
  bool handle_signals = true;  // SIGTERM and SIGINT drain the server (off in-process: they stay the host's)
  std::string tls_cert;  // PEM certificate chain and private key: HTTPS (and WSS) on the port instead of HTTP
  std::string tls_key;
  // GET upgrades to a WebSocket on these paths; the token may also come as ?token= (browsers cannot set headers).
  std::map<std::string, WebSocketOpener> websocket_routes;
};

// Called once per answered request: the route pattern, the status and the time from the request read to the
// response written.
using ResponseObserver = std::function<void(const std::string& route, int status, double seconds)>;

class HttpServer {
 public:
  // Binds and listens; the bound port is port() (useful with port 0).
  static Result<std::unique_ptr<HttpServer>> open(const HttpServerOptions& options, HttpHandler handler,
                                                  ResponseObserver observer = {});
  virtual ~HttpServer() = default;
  virtual int32_t port() const = 0;
  // Serves until SIGTERM or SIGINT (when handle_signals) or stop(), then stops accepting, calls on_drain (which should stop intake and
  // let queued work finish), waits up to drain_seconds for the requests in flight to be answered, and returns.
  virtual void run(const std::function<void()>& on_drain) = 0;
  // The same as a signal, from any thread.
  virtual void stop() = 0;
};

}  // namespace kiln::serve
