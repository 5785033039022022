// kiln serve's lifetime: load the face models and --models (each on its own workers), bind, announce the address,
// serve, and on SIGTERM/SIGINT close the batchers (what is queued still runs) and wait for the answers.
#include <cstdio>

#include "apps/serve/face_collections.h"
#include "apps/serve/http_server.h"
#include "apps/serve/serve_page.h"
#if KILN_HAS_GRPC
#include "apps/serve/grpc_server.h"
#endif
#include "apps/serve/serve_routes.h"
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

Status serve_run(const ServeConfig& given, const LogFn& log) {
  KILN_TRY(config_check(given));
  const ServeConfig config = serve::serve_workers_resolve(given, log);
  serve::ServeContext context;
  context.config = config;
  serve::HttpServerOptions options;
  options.host = config.host;
  options.port = config.port;
  options.max_body_bytes = static_cast<uint64_t>(config.max_body_mb * 1024 * 1024);
  options.token = config.token;
  options.public_paths = serve::page_paths();
  options.cors_origins = config.cors_origins;
  options.threads = config.threads;
  options.drain_seconds = config.drain_seconds;
  options.access_log = !config.quiet;
  options.websocket_routes = serve::websocket_routes(context);
  options.tls_cert = config.tls_cert;
  options.tls_key = config.tls_key;
  if (config.faces) {
    serve::FaceServiceConfig faces;
    faces.face.min_score = static_cast<float>(config.face_min_score);
    faces.exec = config.exec;
    faces.instances = config.instances;
    faces.batcher = batcher_config(config);
    context.faces = std::make_unique<serve::FaceService>(faces, &context.metrics, log);
    context.collections = std::make_shared<serve::FaceCollections>(config.dedup, faces.face, config.collections_dir);
    KILN_TRY(context.collections->load());
    if (!context.faces->ready() && log) log("serve: " + context.faces->error());
    serve::FaceService* service = context.faces.get();
    context.metrics.gauges_register("faces", [service] {
      return serve::ModelGauges{service->ready(), static_cast<int64_t>(service->queued()), 0};
    });
  }
#if KILN_HAS_SEGMENT
  if (config.segment) {
    serve::SegmentServiceConfig segment;
    segment.exec = config.exec;
    segment.instances = config.instances;
    segment.batcher = batcher_config(config);
    context.segment = std::make_shared<serve::SegmentService>(segment, &context.metrics, log);
    if (!context.segment->ready() && log) log("serve: " + context.segment->error());
    serve::SegmentService* service = context.segment.get();
    context.metrics.gauges_register("segment", [service] {
      return serve::ModelGauges{service->ready(), static_cast<int64_t>(service->queued()), service->fallbacks()};
    });
  }
#endif
  for (const std::string& name : config.models) {
    serve::ModelServiceConfig model;
    model.model = name;
    model.options.mode = config.exec.mode;
    model.options.threads = config.exec.threads;
    model.instances = config.instances;
    model.batcher = batcher_config(config);
    context.models.push_back(std::make_unique<serve::ModelService>(model, &context.metrics, log));
    serve::ModelService* service = context.models.back().get();
    if (!service->ready() && log) log("serve: model " + service->name() + " failed to load: " + service->error());
    context.metrics.gauges_register(service->name(), [service] {
      return serve::ModelGauges{service->ready(), static_cast<int64_t>(service->queued()), service->fallbacks()};
    });
  }
  serve::ServeMetrics& metrics = context.metrics;
  KILN_TRY_ASSIGN(auto server, serve::HttpServer::open(options, serve::serve_router(context),
                                                       [&metrics](const std::string& route, int status, double s) {
                                                         metrics.request_observe(route, status, s);
                                                       }));
#if KILN_HAS_GRPC
  std::unique_ptr<serve::GrpcServer> grpc;  // opened before the lines are printed: a port in use fails the start
  if (config.grpc_port >= 0) {
    serve::GrpcServerOptions grpc_options{config.host, config.grpc_port, options.max_body_bytes, config.token};
    KILN_TRY_ASSIGN(grpc, serve::GrpcServer::open(grpc_options, context));
  }
#endif
  std::printf("kiln serve: listening on %s://%s:%d\n", config.tls_cert.empty() ? "http" : "https", config.host.c_str(),
              server->port());
#if KILN_HAS_GRPC
  if (grpc) std::printf("kiln serve: grpc listening on %s:%d\n", config.host.c_str(), grpc->port());
#endif
  std::fflush(stdout);
  server->run([&] {
#if KILN_HAS_GRPC
    if (grpc) grpc->shutdown_begin(config.drain_seconds);
#endif
    if (context.faces) context.faces->close();
#if KILN_HAS_SEGMENT
    if (context.segment) context.segment->close();
#endif
    for (auto& model : context.models) model->close();
  });
#if KILN_HAS_GRPC
  grpc.reset();  // its calls in flight answered (or cancelled past --drain) before their models go
#endif
  // The workers end before the server's io_context goes: an answer still being computed past --drain is posted to
  // a stopped io_context (and dropped), never to a destroyed one.
  context.faces.reset();
  context.segment.reset();
  context.models.clear();
  if (log) log("serve: stopped");
  return Status::ok();
}

}  // namespace kiln
