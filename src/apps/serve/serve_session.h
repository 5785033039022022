// One kiln serve: its models, HTTP server and gRPC server, opened together and served until a signal or stop().
// serve_run (the command: the calling thread, signals handled) and ServeInstance (background threads) share it.
#pragma once

#include <cstdint>
#include <memory>

#include "apps/serve/grpc_server.h"
#include "apps/serve/http_server.h"
#include "apps/serve/serve_routes.h"
#include "kiln/apps/serve.h"

namespace kiln::serve {

class ServeSession {
 public:
  // Checks the configuration, loads the models (one that fails is logged, not an error) and binds the ports.
  static Result<std::unique_ptr<ServeSession>> open(const ServeConfig& given, const LogFn& log, bool handle_signals);
  ~ServeSession();
  int32_t port() const { return m_http->port(); }
  int32_t grpc_port() const { return m_grpc ? m_grpc->port() : -1; }
  const ServeConfig& config() const { return m_context.config; }
  // Serves until a handled signal or stop(), drains, then releases gRPC and the models.
  void run();
  // From any thread, before or during run().
  void stop() { m_http->stop(); }

 private:
  ServeSession() = default;
  Status models_load(const LogFn& log);

  ServeContext m_context;
  std::unique_ptr<HttpServer> m_http;
  std::unique_ptr<GrpcServer> m_grpc;
  LogFn m_log;
};

}  // namespace kiln::serve
