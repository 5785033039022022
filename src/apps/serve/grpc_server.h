// kiln serve's gRPC front: the Open Inference Protocol's inference.GRPCInferenceService (ServerLive, ServerReady,
// ModelReady, ServerMetadata, ModelMetadata, ModelInfer; proto/grpc_service.proto) on the same models, batchers
// and metrics as the REST routes. gRPC's headers stay in the grpc_*.cpp files.
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "kiln/status.h"

namespace kiln::serve {

struct ServeContext;

struct GrpcServerOptions {
  std::string host = "127.0.0.1";
  int32_t port = 0;                   // 0: any free port
  uint64_t max_message_bytes = 64ull << 20;  // larger requests: RESOURCE_EXHAUSTED
  std::string token;                  // non-empty: metadata "authorization: Bearer <token>", else UNAUTHENTICATED
  std::string tls_cert;               // PEM certificate chain and private key: TLS on the port, plaintext refused
  std::string tls_key;
};

class GrpcServer {
 public:
  // Binds and starts serving on gRPC's own threads; the bound port is port().
  static Result<std::unique_ptr<GrpcServer>> open(const GrpcServerOptions& options, ServeContext& context);
  // Shuts down (at once, when shutdown_begin was not called) and waits for the calls in flight.
  virtual ~GrpcServer() = default;
  virtual int32_t port() const = 0;
  // Stops taking calls and returns at once; the calls in flight get drain_seconds to be answered, then are cancelled.
  virtual void shutdown_begin(double drain_seconds) = 0;
};

}  // namespace kiln::serve
