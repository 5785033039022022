// kiln serve: an HTTP/1.1 server (keep-alive, many idle connections held cheaply) in front of the face pipeline and
// the packaged models. The crawler's GPU-worker API (/health, /gpu_info, /detect_faces_batch,
// /detect_and_embed_batch), kiln's POST /v1/faces, the Open Inference Protocol v2 over REST (/v2/...) and Prometheus
// /metrics; concurrent requests for one model are batched by the DynamicBatcher onto `instances` worker threads per
// model. docs/serve.md describes every endpoint.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "kiln/exec.h"
#include "kiln/status.h"

namespace kiln {

struct ServeConfig {
  std::string host = "127.0.0.1";
  int32_t port = 8765;  // 0: any free port (the bound one is printed)
  int32_t grpc_port = -1;  // the Open Inference Protocol over gRPC: -1 off, 0 any free port (printed)
  bool faces = true;    // the face endpoints (detector + fr-embed through FaceAnalyzer)
  bool segment = false;  // POST /v1/segment with the packaged selfie model (kiln segment's)
  std::vector<std::string> models;  // packaged names or .onnx paths served over the Open Inference Protocol
  std::string token;                // non-empty: every request needs "Authorization: Bearer <token>"
  std::string tls_cert;             // PEM certificate chain and private key: HTTPS and WSS on --port
  std::string tls_key;
  double max_body_mb = 64;          // larger bodies: 413
  std::vector<std::string> cors_origins;  // origins answered with CORS headers; none: no CORS headers
  int32_t instances = 0;            // worker threads per model, each with its own session / FaceAnalyzer;
                                    // 0: one with a GPU provider, one per core (at most 4) on the CPU
  int32_t threads = 1;              // I/O threads of the HTTP server
  int32_t max_batch = 8;            // images (faces) or requests (models) per batch
  int64_t max_queue_delay_us = 2000;  // a smaller batch leaves once its oldest request waited this long
  int64_t max_queue = 256;          // queued images or requests per model beyond this: 429 with Retry-After
  double timeout_seconds = 30;      // a request still queued after this: 504 (kiln-timeout-ms may lower it)
  int32_t priority_levels = 3;      // kiln-priority: 1 (first) .. this; requests without it get the middle one
  double drain_seconds = 10;        // on SIGTERM/SIGINT: how long queued and running requests may take
  double face_min_score = 0.5;      // the detector's threshold; requests filter further (min_face_quality)
  double dedup = 0.7;               // /v1/faces?collection=: a face this close (cosine) to one there is a duplicate
  std::string collections_dir;      // non-empty: each collection also saved as a `kiln faces` output DIR/NAME.h5
  std::string worker_id = "kiln-serve";
  bool quiet = false;               // no access log
  ExecSettings exec;                // mode (auto|gpu|cpu) and CPU threads of each instance
};

// Loads the models, listens, prints "kiln serve: listening on http://HOST:PORT" (https with TLS) on stdout when
// ready, and serves until SIGTERM or SIGINT, then stops accepting, answers what is queued within drain_seconds and
// returns Ok.
// An error binding the address or in the configuration comes back at once; a model that fails to load is reported
// (and /v2/health/ready is false), the rest still served.
Status serve_run(const ServeConfig& config, const LogFn& log = {});

// The same server on background threads of this process (kiln.serve in Python): start() loads the models and binds
// (an error binding or in the configuration comes back), then serves. It leaves the process's signals alone (its
// threads block SIGINT and SIGTERM, so Ctrl-C reaches the host's own handler) and prints no "listening" line;
// `log` gets the lines the command prints on stderr, from any thread (the access log still goes to stderr).
class ServeInstance {
 public:
  static Result<std::unique_ptr<ServeInstance>> start(const ServeConfig& config, const LogFn& log = {});
  virtual ~ServeInstance() = default;  // stops first, as stop()
  virtual int32_t port() const = 0;
  virtual int32_t grpc_port() const = 0;  // -1 without gRPC
  virtual bool running() const = 0;
  // As SIGTERM to the command: stops accepting, answers what is queued within drain_seconds, joins the threads and
  // releases the models. Returns when done; later calls do nothing.
  virtual void stop() = 0;
};

}  // namespace kiln
