// The route table of kiln serve: method + path pattern ("/v2/models/{name}/infer") -> handler. serve_router() builds
// it from the face routes (the crawler's API, /v1/faces), the Open Inference Protocol routes and /metrics.
#pragma once

#include <chrono>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "apps/serve/face_service.h"
#include "apps/serve/http_types.h"
#include "apps/serve/model_service.h"
#include "apps/serve/serve_metrics.h"
#include "apps/serve/websocket_types.h"
#include "kiln/apps/serve.h"

namespace kiln::serve {

class SegmentService;  // segment_service.h: built with the segment application
class FaceCollections;  // face_collections.h

struct ServeContext {
  ServeConfig config;
  ServeMetrics metrics;
  std::unique_ptr<FaceService> faces;                       // null when --no-faces
  std::vector<std::unique_ptr<ModelService>> models;        // in --models order
  std::shared_ptr<SegmentService> segment;                  // null unless --segment
  std::shared_ptr<FaceCollections> collections;             // with the faces: /v1/faces?collection=, /v1/faces/search
  std::chrono::steady_clock::time_point started = std::chrono::steady_clock::now();

  ModelService* model_find(const std::string& name) const;
};

using RouteParams = std::map<std::string, std::string>;
using RouteHandler = std::function<void(const HttpRequest&, const RouteParams&, Responder)>;

struct Route {
  std::string method;
  std::string pattern;  // segments; "{x}" captures one into params["x"]
  RouteHandler handler;
};

// Tags the response with its route (for /metrics) and answers.
Responder route_responder(const std::string& pattern, Responder respond);

void face_routes_add(ServeContext& context, std::vector<Route>* routes);
// POST /v1/faces/search (serve_collections.cpp).
void collection_routes_add(ServeContext& context, std::vector<Route>* routes);
void oip_routes_add(ServeContext& context, std::vector<Route>* routes);
void segment_routes_add(ServeContext& context, std::vector<Route>* routes);
// The web page at / with its script and style (serve_page.h).
void page_routes_add(ServeContext& context, std::vector<Route>* routes);

// The Open Inference Protocol's readiness (every model and the face models loaded) and the extensions served, for
// REST and gRPC alike.
bool serve_all_ready(const ServeContext& context);
const std::vector<std::string>& oip_extensions();

// The WebSocket endpoints (GET upgraded): /v1/segment/stream (serve_stream.cpp).
extern const char* const kSegmentStreamPath;
std::map<std::string, WebSocketOpener> websocket_routes(ServeContext& context);

// Every route; 404 for an unknown path, 405 for a known path with another method.
HttpHandler serve_router(ServeContext& context);

// The percent-decoded value of `key` in a query string ("collection=a&k=5"), "" when absent.
std::string query_value(const std::string& query, const std::string& key);

// The request's kiln-priority (1 .. levels) and kiln-timeout-ms (> 0) headers; InvalidArgument naming a bad one.
Result<Scheduling> request_scheduling(const HttpRequest& request, int32_t levels);

// Batch headers of a response: kiln-batch-size (the largest batch one of its items ran in) and kiln-queue-ms (the
// longest time one waited in the queue).
void batch_headers_add(HttpResponse* response, int32_t batch_size, int64_t queue_ns);

}  // namespace kiln::serve
