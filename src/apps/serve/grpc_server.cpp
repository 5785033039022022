// gRPC's callback API: each call is answered through its reactor, at once (health, metadata, refusals) or from the
// model's worker thread when its batch has run, so a call waiting in the batch queue holds no thread.
#include "apps/serve/grpc_server.h"

#include <grpcpp/grpcpp.h>

#include <chrono>
#include <cstdio>
#include <fstream>
#include <sstream>
#include <limits>
#include <thread>

#include "apps/serve/grpc_tensors.h"
#include "apps/serve/serve_routes.h"
#include "grpc_service.grpc.pb.h"
#include "kiln/version.h"

namespace kiln::serve {

namespace {

using Clock = std::chrono::steady_clock;
constexpr const char* kModelVersion = "1";

Result<std::string> pem_read(const std::string& path, const char* option) {
  std::ifstream file(path, std::ios::binary);
  std::ostringstream text;
  text << file.rdbuf();
  if (!file || text.str().empty()) return io_error(std::string("serve: gRPC: cannot read ") + option + " " + path);
  return text.str();
}

// TLS with the same certificate and key as HTTPS (no client certificates), else plaintext.
Result<std::shared_ptr<grpc::ServerCredentials>> server_credentials(const GrpcServerOptions& options) {
  if (options.tls_cert.empty() && options.tls_key.empty()) return grpc::InsecureServerCredentials();
  grpc::SslServerCredentialsOptions::PemKeyCertPair pair;
  KILN_TRY_ASSIGN(pair.private_key, pem_read(options.tls_key, "--tls-key"));
  KILN_TRY_ASSIGN(pair.cert_chain, pem_read(options.tls_cert, "--tls-cert"));
  grpc::SslServerCredentialsOptions ssl(GRPC_SSL_DONT_REQUEST_CLIENT_CERTIFICATE);
  ssl.pem_key_cert_pairs.push_back(std::move(pair));
  return grpc::SslServerCredentials(ssl);
}

grpc::StatusCode grpc_code_of_http(int http_status) {
  switch (http_status) {
    case 400: return grpc::StatusCode::INVALID_ARGUMENT;
    case 401: return grpc::StatusCode::UNAUTHENTICATED;
    case 404: return grpc::StatusCode::NOT_FOUND;
    case 413:
    case 429: return grpc::StatusCode::RESOURCE_EXHAUSTED;
    case 503: return grpc::StatusCode::UNAVAILABLE;
    case 504: return grpc::StatusCode::DEADLINE_EXCEEDED;
    default: return grpc::StatusCode::INTERNAL;
  }
}

const char* grpc_code_name(grpc::StatusCode code) {
  switch (code) {
    case grpc::StatusCode::OK: return "OK";
    case grpc::StatusCode::INVALID_ARGUMENT: return "INVALID_ARGUMENT";
    case grpc::StatusCode::UNAUTHENTICATED: return "UNAUTHENTICATED";
    case grpc::StatusCode::NOT_FOUND: return "NOT_FOUND";
    case grpc::StatusCode::RESOURCE_EXHAUSTED: return "RESOURCE_EXHAUSTED";
    case grpc::StatusCode::UNAVAILABLE: return "UNAVAILABLE";
    case grpc::StatusCode::DEADLINE_EXCEEDED: return "DEADLINE_EXCEEDED";
    default: return "INTERNAL";
  }
}

// Triton's request parameters "priority" (1 first, 0: the server's default) and "timeout" (microseconds), and the
// call's deadline, which lowers the queue timeout too.
Result<Scheduling> grpc_scheduling(const inference::ModelInferRequest& request,
                                   std::chrono::system_clock::time_point deadline, int32_t levels) {
  Scheduling scheduling;
  const auto int_param = [&request](const char* key, int64_t* value) -> Status {
    const auto it = request.parameters().find(key);
    if (it == request.parameters().end()) return Status::ok();
    if (it->second.has_int64_param()) *value = it->second.int64_param();
    else if (it->second.has_uint64_param() && it->second.uint64_param() < (1ull << 62)) {
      *value = static_cast<int64_t>(it->second.uint64_param());
    } else {
      return invalid_argument(std::string("parameters.") + key + ": expected an integer");
    }
    return Status::ok();
  };
  int64_t priority = 0;
  int64_t timeout_us = 0;
  KILN_TRY(int_param("priority", &priority));
  KILN_TRY(int_param("timeout", &timeout_us));
  if (priority < 0 || priority > levels) {
    return invalid_argument("parameters.priority: expected 1 (highest) .. " + std::to_string(levels) +
                            " or 0 (the default), got " + std::to_string(priority));
  }
  if (timeout_us < 0) return invalid_argument("parameters.timeout: expected microseconds, at least 0");
  scheduling.priority = static_cast<int32_t>(priority);
  scheduling.timeout_us = timeout_us;
  const auto left = std::chrono::duration_cast<std::chrono::microseconds>(deadline - std::chrono::system_clock::now());
  if (left.count() < (int64_t{1} << 40)) {  // a deadline was set (none reads as the far future)
    const int64_t left_us = std::max<int64_t>(1, left.count());
    scheduling.timeout_us = scheduling.timeout_us > 0 ? std::min(scheduling.timeout_us, left_us) : left_us;
  }
  return scheduling;
}

class InferenceService final : public inference::GRPCInferenceService::CallbackService {
 public:
  InferenceService(ServeContext& context, std::string token) : m_context(context), m_token(std::move(token)) {}

  grpc::ServerUnaryReactor* ServerLive(grpc::CallbackServerContext* call, const inference::ServerLiveRequest*,
                                       inference::ServerLiveResponse* response) override {
    return answer(call, "ServerLive", [&] {
      response->set_live(true);
      return grpc::Status::OK;
    });
  }

  grpc::ServerUnaryReactor* ServerReady(grpc::CallbackServerContext* call, const inference::ServerReadyRequest*,
                                        inference::ServerReadyResponse* response) override {
    return answer(call, "ServerReady", [&] {
      response->set_ready(serve_all_ready(m_context));
      return grpc::Status::OK;
    });
  }

  grpc::ServerUnaryReactor* ServerMetadata(grpc::CallbackServerContext* call, const inference::ServerMetadataRequest*,
                                           inference::ServerMetadataResponse* response) override {
    return answer(call, "ServerMetadata", [&] {
      response->set_name("kiln");
      response->set_version(KILN_VERSION_STRING);
      for (const std::string& extension : oip_extensions()) response->add_extensions(extension);
      return grpc::Status::OK;
    });
  }

  grpc::ServerUnaryReactor* ModelReady(grpc::CallbackServerContext* call, const inference::ModelReadyRequest* request,
                                       inference::ModelReadyResponse* response) override {
    return answer(call, "ModelReady", [&] {
      ModelService* model = nullptr;
      const grpc::Status found = model_find(request->name(), request->version(), &model);
      if (found.ok()) response->set_ready(model->ready());
      return found;
    });
  }

  grpc::ServerUnaryReactor* ModelMetadata(grpc::CallbackServerContext* call,
                                          const inference::ModelMetadataRequest* request,
                                          inference::ModelMetadataResponse* response) override {
    return answer(call, "ModelMetadata", [&] {
      ModelService* model = nullptr;
      const grpc::Status found = model_find(request->name(), request->version(), &model);
      if (!found.ok()) return found;
      if (!model->ready()) {
        return grpc::Status(grpc::StatusCode::UNAVAILABLE,
                            "model " + model->name() + " failed to load: " + model->error());
      }
      response->set_name(model->name());
      response->add_versions(kModelVersion);
      response->set_platform("onnxruntime_onnx");
      const auto add = [](const TensorInfo& info, inference::ModelMetadataResponse::TensorMetadata* tensor) {
        tensor->set_name(info.name);
        tensor->set_datatype(oip_datatype(info.type));
        for (const int64_t dim : info.shape) tensor->add_shape(dim);
      };
      for (const auto& info : model->info().inputs) add(info, response->add_inputs());
      for (const auto& info : model->info().outputs) add(info, response->add_outputs());
      return grpc::Status::OK;
    });
  }

  grpc::ServerUnaryReactor* ModelInfer(grpc::CallbackServerContext* call, const inference::ModelInferRequest* request,
                                       inference::ModelInferResponse* response) override {
    const Clock::time_point start = Clock::now();
    grpc::ServerUnaryReactor* reactor = call->DefaultReactor();
    const auto refuse = [&](grpc::StatusCode code, const std::string& message) {
      finish(reactor, "ModelInfer", start, grpc::Status(code, message));
      return reactor;
    };
    if (!authorized(*call)) return refuse(grpc::StatusCode::UNAUTHENTICATED, kUnauthenticated);
    ModelService* model = nullptr;
    if (const grpc::Status found = model_find(request->model_name(), request->model_version(), &model); !found.ok()) {
      return refuse(found.error_code(), found.error_message());
    }
    if (request->inputs_size() != 1) {
      return refuse(grpc::StatusCode::INVALID_ARGUMENT, "model " + model->name() + " takes 1 input, the request has " +
                                                            std::to_string(request->inputs_size()));
    }
    auto input = grpc_input_tensor(*request, 0);
    if (!input.is_ok()) return refuse(grpc::StatusCode::INVALID_ARGUMENT, input.status().message());
    std::vector<std::string> wanted;
    for (const auto& output : request->outputs()) {
      bool known = false;
      for (const auto& info : model->info().outputs) known = known || info.name == output.name();
      if (!known) {
        return refuse(grpc::StatusCode::INVALID_ARGUMENT,
                      "model " + model->name() + " has no output \"" + output.name() + "\"");
      }
      wanted.push_back(output.name());
    }
    auto scheduling = grpc_scheduling(*request, call->deadline(), m_context.config.priority_levels);
    if (!scheduling.is_ok()) return refuse(grpc::StatusCode::INVALID_ARGUMENT, scheduling.status().message());
    response->set_model_name(model->name());
    response->set_model_version(kModelVersion);
    response->set_id(request->id());
    model->submit(std::move(input).value(), scheduling.value(),
                  [this, call, reactor, response, start, wanted = std::move(wanted)](InferCallResult result) {
                    if (result.http_status != 200) {
                      return finish(reactor, "ModelInfer", start,
                                    grpc::Status(grpc_code_of_http(result.http_status), result.error));
                    }
                    grpc_outputs_fill(result.outputs, wanted, response);
                    char queue_ms[32];
                    std::snprintf(queue_ms, sizeof(queue_ms), "%.3f", static_cast<double>(result.queue_ns) * 1e-6);
                    call->AddTrailingMetadata("kiln-batch-size", std::to_string(result.batch_size));
                    call->AddTrailingMetadata("kiln-queue-ms", queue_ms);
                    finish(reactor, "ModelInfer", start, grpc::Status::OK);
                  });
    return reactor;
  }

 private:
  static constexpr const char* kUnauthenticated = "this server needs metadata \"authorization: Bearer <token>\"";

  bool authorized(const grpc::CallbackServerContext& call) const {
    if (m_token.empty()) return true;
    const auto& metadata = call.client_metadata();
    const auto it = metadata.find("authorization");
    return it != metadata.end() && std::string(it->second.data(), it->second.size()) == "Bearer " + m_token;
  }

  grpc::Status model_find(const std::string& name, const std::string& version, ModelService** model) const {
    *model = m_context.model_find(name);
    if (*model == nullptr) {
      return grpc::Status(grpc::StatusCode::NOT_FOUND, "unknown model \"" + name + "\" (served: --models)");
    }
    if (!version.empty() && version != kModelVersion) {
      return grpc::Status(grpc::StatusCode::NOT_FOUND, "model " + name + " has no version " + version + " (only 1)");
    }
    return grpc::Status::OK;
  }

  // A call answered at once: the token checked, then `body` run.
  template <typename Body>
  grpc::ServerUnaryReactor* answer(grpc::CallbackServerContext* call, const char* method, Body&& body) {
    const Clock::time_point start = Clock::now();
    grpc::ServerUnaryReactor* reactor = call->DefaultReactor();
    finish(reactor, method, start,
           authorized(*call) ? body() : grpc::Status(grpc::StatusCode::UNAUTHENTICATED, kUnauthenticated));
    return reactor;
  }

  // Counted before Finish: the call and its messages may be gone once it is answered.
  void finish(grpc::ServerUnaryReactor* reactor, const char* method, Clock::time_point start,
              const grpc::Status& status) {
    const double seconds = std::chrono::duration<double>(Clock::now() - start).count();
    m_context.metrics.grpc_request_observe(method, grpc_code_name(status.error_code()), seconds);
    reactor->Finish(status);
  }

  ServeContext& m_context;
  std::string m_token;
};

class GrpcServerImpl final : public GrpcServer {
 public:
  GrpcServerImpl(ServeContext& context, const std::string& token) : m_service(context, token) {}

  ~GrpcServerImpl() override {
    if (m_server == nullptr) return;
    if (!m_shutdown.joinable()) m_server->Shutdown(std::chrono::system_clock::now());
    if (m_shutdown.joinable()) m_shutdown.join();
    m_server->Wait();
  }

  Status start(const GrpcServerOptions& options) {
    const std::string host = options.host.find(':') != std::string::npos ? "[" + options.host + "]" : options.host;
    const std::string address = host + ":" + std::to_string(options.port);
    KILN_TRY_ASSIGN(auto credentials, server_credentials(options));
    grpc::ServerBuilder builder;
    builder.AddListeningPort(address, credentials, &m_port);
    builder.AddChannelArgument(GRPC_ARG_ALLOW_REUSEPORT, 0);  // a port in use is an error, not a second listener
    builder.SetMaxReceiveMessageSize(static_cast<int>(
        std::min<uint64_t>(options.max_message_bytes, static_cast<uint64_t>(std::numeric_limits<int>::max()))));
    builder.RegisterService(&m_service);
    m_server = builder.BuildAndStart();
    if (m_server == nullptr || m_port == 0) {
      return Status(Errc::kIoError, "serve: gRPC cannot listen on " + address + " (in use, or not an address here)");
    }
    return Status::ok();
  }

  int32_t port() const override { return m_port; }

  void shutdown_begin(double drain_seconds) override {
    if (m_shutdown.joinable()) return;
    const auto deadline = std::chrono::system_clock::now() +
                          std::chrono::milliseconds(static_cast<int64_t>(std::max(0.0, drain_seconds) * 1000));
    m_shutdown = std::thread([this, deadline] { m_server->Shutdown(deadline); });
  }

 private:
  InferenceService m_service;
  std::unique_ptr<grpc::Server> m_server;
  int m_port = 0;
  std::thread m_shutdown;
};

}  // namespace

Result<std::unique_ptr<GrpcServer>> GrpcServer::open(const GrpcServerOptions& options, ServeContext& context) {
  auto server = std::make_unique<GrpcServerImpl>(context, options.token);
  KILN_TRY(server->start(options));
  return std::unique_ptr<GrpcServer>(std::move(server));
}

}  // namespace kiln::serve
