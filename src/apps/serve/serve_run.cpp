// kiln serve's lifetime: load the face models and --models (each on its own workers), bind, announce the address,
// serve, and on SIGTERM/SIGINT (or stop()) close the batchers (what is queued still runs) and wait for the answers.
#include <cstdio>

#include "apps/serve/face_collections.h"
#include "apps/serve/serve_page.h"
#include "apps/serve/serve_session.h"
#include "apps/serve/serve_workers.h"
#if KILN_HAS_SEGMENT
#include "apps/serve/segment_service.h"
#endif
#include "kiln/apps/serve.h"

namespace kiln {

namespace {

BatcherConfig batcher_config(const ServeConfig& config) {
  BatcherConfig batcher;
  batcher.max_batch_size = std::max(1, config.max_batch);
  batcher.max_queue_delay_us = std::max<int64_t>(0, config.max_queue_delay_us);
  batcher.max_queue_size = static_cast<size_t>(std::max<int64_t>(1, config.max_queue));
  batcher.default_timeout_us = static_cast<int64_t>(config.timeout_seconds * 1e6);
  batcher.timeout_action = TimeoutAction::kReject;
  batcher.priority_levels = std::max(1, config.priority_levels);
  batcher.default_priority_level = (batcher.priority_levels + 1) / 2;
  return batcher;
}

Status config_check(const ServeConfig& config) {
  if (config.port < 0 || config.port > 65535) return invalid_argument("serve: --port must be 0..65535");
  if (config.grpc_port < -1 || config.grpc_port > 65535) return invalid_argument("serve: --grpc-port must be 0..65535");
#if !KILN_HAS_GRPC
  if (config.grpc_port >= 0) return invalid_argument("serve: this kiln is built without gRPC (see make deps)");
#endif
#if !KILN_HAS_SEGMENT
  if (config.segment) return invalid_argument("serve: --segment: this kiln is built without FFmpeg (kiln segment)");
#endif
  if (config.dedup < 0 || config.dedup > 1) return invalid_argument("serve: --dedup must be 0..1 (0: off)");
  if (config.max_body_mb <= 0) return invalid_argument("serve: --max-body-mb must be positive");
  if (config.instances < 0 || config.instances > 64) return invalid_argument("serve: --instances must be 0..64");
  if (config.max_batch < 1) return invalid_argument("serve: --max-batch must be at least 1");
  if (config.max_queue < 1) return invalid_argument("serve: --max-queue must be at least 1");
  if (config.timeout_seconds <= 0) return invalid_argument("serve: --timeout must be positive");
  if (config.priority_levels < 1 || config.priority_levels > 16) {
    return invalid_argument("serve: --priority-levels must be 1..16");
  }
  return Status::ok();
}

}  // namespace

namespace serve {

Status ServeSession::models_load(const LogFn& log) {
  const ServeConfig& config = m_context.config;
  ServeContext& context = m_context;
  if (config.faces) {
    FaceServiceConfig faces;
    faces.face.min_score = static_cast<float>(config.face_min_score);
    faces.exec = config.exec;
    faces.instances = config.instances;
    faces.batcher = batcher_config(config);
    context.faces = std::make_unique<FaceService>(faces, &context.metrics, log);
    context.collections = std::make_shared<FaceCollections>(config.dedup, faces.face, config.collections_dir);
    KILN_TRY(context.collections->load());
    if (!context.faces->ready() && log) log("serve: " + context.faces->error());
    FaceService* service = context.faces.get();
    context.metrics.gauges_register("faces", [service] {
      return ModelGauges{service->ready(), static_cast<int64_t>(service->queued()), 0};
    });
  }
#if KILN_HAS_SEGMENT
  if (config.segment) {
    SegmentServiceConfig segment;
    segment.exec = config.exec;
    segment.instances = config.instances;
    segment.batcher = batcher_config(config);
    context.segment = std::make_shared<SegmentService>(segment, &context.metrics, log);
    if (!context.segment->ready() && log) log("serve: " + context.segment->error());
    SegmentService* service = context.segment.get();
    context.metrics.gauges_register("segment", [service] {
      return ModelGauges{service->ready(), static_cast<int64_t>(service->queued()), service->fallbacks()};
    });
  }
#endif
  for (const std::string& name : config.models) {
    ModelServiceConfig model;
    model.model = name;
    model.options.mode = config.exec.mode;
    model.options.threads = config.exec.threads;
    model.instances = config.instances;
    model.batcher = batcher_config(config);
    context.models.push_back(std::make_unique<ModelService>(model, &context.metrics, log));
    ModelService* service = context.models.back().get();
    if (!service->ready() && log) log("serve: model " + service->name() + " failed to load: " + service->error());
    context.metrics.gauges_register(service->name(), [service] {
      return ModelGauges{service->ready(), static_cast<int64_t>(service->queued()), service->fallbacks()};
    });
  }
  return Status::ok();
}

Result<std::unique_ptr<ServeSession>> ServeSession::open(const ServeConfig& given, const LogFn& log,
                                                         bool handle_signals) {
  KILN_TRY(config_check(given));
  std::unique_ptr<ServeSession> session(new ServeSession());
  session->m_log = log;
  ServeContext& context = session->m_context;
  context.config = serve_workers_resolve(given, log);
  const ServeConfig& config = context.config;
  HttpServerOptions options;
  options.host = config.host;
  options.port = config.port;
  options.max_body_bytes = static_cast<uint64_t>(config.max_body_mb * 1024 * 1024);
  options.token = config.token;
  options.public_paths = page_paths();
  options.cors_origins = config.cors_origins;
  options.threads = config.threads;
  options.drain_seconds = config.drain_seconds;
  options.access_log = !config.quiet;
  options.handle_signals = handle_signals;
  options.websocket_routes = websocket_routes(context);
  options.tls_cert = config.tls_cert;
  options.tls_key = config.tls_key;
  KILN_TRY(session->models_load(log));
  ServeMetrics& metrics = context.metrics;
  KILN_TRY_ASSIGN(session->m_http,
                  HttpServer::open(options, serve_router(context),
                                          [&metrics](const std::string& route, int status, double s) {
                                            metrics.request_observe(route, status, s);
                                          }));
#if KILN_HAS_GRPC
  if (config.grpc_port >= 0) {  // opened before the address is announced: a port in use fails the start
    GrpcServerOptions grpc_options{config.host, config.grpc_port, options.max_body_bytes, config.token,
                                          config.tls_cert, config.tls_key};
    KILN_TRY_ASSIGN(session->m_grpc, GrpcServer::open(grpc_options, context));
  }
#endif
  return session;
}

void ServeSession::run() {
  m_http->run([this] {
    if (m_grpc) m_grpc->shutdown_begin(m_context.config.drain_seconds);
    if (m_context.faces) m_context.faces->close();
#if KILN_HAS_SEGMENT
    if (m_context.segment) m_context.segment->close();
#endif
    for (auto& model : m_context.models) model->close();
  });
  m_grpc.reset();  // its calls in flight answered (or cancelled past --drain) before their models go
  // The workers end before the server's io_context goes: an answer still being computed past --drain is posted to
  // a stopped io_context (and dropped), never to a destroyed one.
  m_context.faces.reset();
  m_context.segment.reset();
  m_context.models.clear();
  if (m_log) m_log("serve: stopped");
}

ServeSession::~ServeSession() {
  m_grpc.reset();
  m_context.faces.reset();
  m_context.segment.reset();
  m_context.models.clear();
}

}  // namespace serve

Status serve_run(const ServeConfig& config, const LogFn& log) {
  KILN_TRY_ASSIGN(auto session, serve::ServeSession::open(config, log, /*handle_signals=*/true));
  const ServeConfig& served = session->config();
  std::printf("kiln serve: listening on %s://%s:%d\n", served.tls_cert.empty() ? "http" : "https", served.host.c_str(),
              session->port());
  if (session->grpc_port() >= 0) {
    std::printf("kiln serve: grpc listening on %s:%d%s\n", served.host.c_str(), session->grpc_port(),
                served.tls_cert.empty() ? "" : " (TLS)");
  }
  std::fflush(stdout);
  session->run();
  return Status::ok();
}

}  // namespace kiln
