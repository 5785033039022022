// The crawler's GPU-worker API, field for field (docs/serve.md: the mapping), and kiln's own POST /v1/faces.
#include <chrono>
#include <nlohmann/json.hpp>

#include "apps/serve/face_collections.h"
#include "apps/serve/serve_faces_input.h"
#include "apps/serve/serve_multipart.h"
#include "apps/serve/serve_routes.h"
#include "kiln/codec.h"

namespace kiln::serve {

namespace {

using Json = nlohmann::json;

std::string face_json_text(const Json& json) { return json.dump(-1, ' ', false, Json::error_handler_t::replace); }

Json landmarks_json(const FaceDetection& d) {
  Json points = Json::array();
  for (int32_t k = 0; k < d.landmark_count; ++k) points.push_back({d.landmarks[k][0], d.landmarks[k][1]});
  return points;
}

// The worker's FaceDetection: bbox [x1, y1, x2, y2], landmarks [[x, y], ...], embedding, quality (the detection
// score), age and gender (null: kiln has no such model); accepted and reasons are kiln's additions.
Json crawler_face_json(const Face& face) {
  const float* b = face.detection.box;
  return {{"bbox", {b[0], b[1], b[0] + b[2], b[1] + b[3]}},
          {"landmarks", landmarks_json(face.detection)},
          {"embedding", face.embedding},
          {"quality", face.detection.score},
          {"age", nullptr},
          {"gender", nullptr},
          {"accepted", face.accepted},
          {"reasons", face.reasons}};
}

// Every field of kiln faces' records.
Json kiln_face_json(const Face& face) {
  const float* b = face.detection.box;
  return {{"box", {b[0], b[1], b[2], b[3]}},
          {"bbox", {b[0], b[1], b[0] + b[2], b[1] + b[3]}},
          {"det_score", face.detection.score},
          {"landmarks", landmarks_json(face.detection)},
          {"embedding", face.embedding},
          {"quality",
           {{"blur", face.quality.blur},
            {"brightness", face.quality.brightness},
            {"contrast", face.quality.contrast},
            {"sharpness", face.quality.sharpness},
            {"overall_score", face.quality.score}}},
          {"pose", {{"yaw", face.pose.yaw}, {"pitch", face.pose.pitch}, {"roll", face.pose.roll}}},
          {"face_size", face.face_size},
          {"scale", face.scale},
          {"accepted", face.accepted},
          {"reasons", face.reasons}};
}

const char* provider_name(const std::string& placement) {
  if (placement.rfind("cuda", 0) == 0) return "CUDAExecutionProvider";
  if (placement.rfind("tensorrt", 0) == 0) return "TensorrtExecutionProvider";
  return "CPUExecutionProvider";
}

double seconds_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

HttpResponse refusal(const FaceCallResult& result) {
  HttpResponse response = http_error(result.http_status, result.error);
  if (result.http_status == 429 || result.http_status == 503) response.headers.emplace_back("Retry-After", "1");
  return response;
}

void batch_headers_of(const FaceCallResult& result, HttpResponse* response) {
  int32_t batch = 0;
  int64_t queue = 0;
  for (const FaceImageResult& image : result.images) {
    batch = std::max(batch, image.batch_size);
    queue = std::max(queue, image.queue_ns);
  }
  batch_headers_add(response, batch, queue);
}

void crawler_batch(ServeContext& context, const HttpRequest& request, Responder respond) {
  const auto start = std::chrono::steady_clock::now();
  auto parsed = face_batch_request_parse(request.body, static_cast<size_t>(std::max<int64_t>(1, context.config.max_queue)));
  if (!parsed.is_ok()) return respond(http_error(400, parsed.status().message()));
  auto scheduling = request_scheduling(request, context.config.priority_levels);
  if (!scheduling.is_ok()) return respond(http_error(400, scheduling.status().message()));
  FaceBatchRequest batch = std::move(parsed).value();
  std::vector<std::string> ids;
  for (const auto& image : batch.images) ids.push_back(image.image_id);
  const double min_quality = batch.min_face_quality;
  FaceService* faces = context.faces.get();
  const std::string worker_id = context.config.worker_id;
  faces->submit(std::move(batch.images), scheduling.value(), [=](FaceCallResult result) {
    if (result.http_status != 200) return respond(refusal(result));
    Json results = Json::array();
    Json errors = Json::array();
    for (size_t i = 0; i < result.images.size(); ++i) {
      Json detections = Json::array();
      for (const Face& face : result.images[i].faces) {
        if (face.detection.score >= min_quality) detections.push_back(crawler_face_json(face));
      }
      results.push_back(std::move(detections));
      if (!result.images[i].error.empty()) {
        errors.push_back({{"index", i}, {"image_id", ids[i]}, {"error", result.images[i].error}});
      }
    }
    const Json body = {{"results", std::move(results)},
                       {"processing_time_ms", seconds_since(start) * 1000},
                       {"gpu_used", faces->gpu_used()},
                       {"worker_id", worker_id},
                       {"errors", std::move(errors)}};
    HttpResponse response = http_json(200, face_json_text(body));
    batch_headers_of(result, &response);
    respond(std::move(response));
  });
}

// POST /v1/faces: one image's bytes, or multipart/form-data with one image per part (answered per part, by name
// and filename); ?collection=NAME adds the faces to that collection, marking duplicates (serve_collections.cpp).
void kiln_faces(ServeContext& context, const HttpRequest& request, Responder respond) {
  const auto start = std::chrono::steady_clock::now();
  const std::string collection = query_value(request.query, "collection");
  if (!collection.empty() && !FaceCollections::name_valid(collection)) {
    return respond(http_error(400, "collection: 1-64 letters, digits, '.', '_' or '-', got \"" + collection + "\""));
  }
  const bool multipart = multipart_is(request.header("content-type"));
  auto inputs = multipart ? faces_multipart_images(request, static_cast<size_t>(std::max<int64_t>(1, context.config.max_queue)))
                          : faces_raw_image(request);
  if (!inputs.is_ok()) {
    const bool unsupported = inputs.status().code() == Errc::kUnsupportedFormat;
    return respond(http_error(unsupported ? 415 : 400, inputs.status().message()));
  }
  auto scheduling = request_scheduling(request, context.config.priority_levels);
  if (!scheduling.is_ok()) return respond(http_error(400, scheduling.status().message()));
  FacesNamedImages named = std::move(inputs).value();
  FaceService* faces = context.faces.get();
  FaceCollections* collections = context.collections.get();
  faces->submit(std::move(named.images), scheduling.value(), [=, names = std::move(named.names)](FaceCallResult result) {
    if (result.http_status != 200) return respond(refusal(result));
    if (!multipart && !result.images.front().error.empty()) {
      return respond(http_error(400, "the image could not be read: " + result.images.front().error));
    }
    std::vector<Json> lists;
    for (const FaceImageResult& image : result.images) {
      Json list = Json::array();
      for (const Face& face : image.faces) list.push_back(kiln_face_json(face));
      lists.push_back(std::move(list));
    }
    Json body = {{"processing_time_ms", 0}, {"gpu_used", faces->gpu_used()}};
    if (!collection.empty()) collection_faces_add(*collections, collection, names, result, &lists, &body);
    if (multipart) {
      Json images = Json::array();
      for (size_t i = 0; i < result.images.size(); ++i) {
        Json entry = {{"name", names[i].name}, {"filename", names[i].filename}, {"faces", std::move(lists[i])}};
        if (!result.images[i].error.empty()) entry["error"] = result.images[i].error;
        images.push_back(std::move(entry));
      }
      body["images"] = std::move(images);
    } else {
      body["faces"] = std::move(lists.front());
    }
    body["processing_time_ms"] = seconds_since(start) * 1000;
    HttpResponse response = http_json(200, face_json_text(body));
    batch_headers_of(result, &response);
    respond(std::move(response));
  });
}

}  // namespace

void face_routes_add(ServeContext& context, std::vector<Route>* routes) {
  routes->push_back({"GET", "/health", [&context](const HttpRequest&, const RouteParams&, Responder respond) {
                       const FaceService& faces = *context.faces;
                       const Json body = {{"status", faces.ready() ? "healthy" : "unhealthy"},
                                          {"gpu_available", faces.gpu_used()},
                                          {"directml_available", false},
                                          {"model_loaded", faces.ready()},
                                          {"uptime_seconds", seconds_since(context.started)},
                                          {"worker_id", context.config.worker_id},
                                          {"queue_size", faces.queued()}};
                       respond(http_json(200, face_json_text(body)));
                     }});
  routes->push_back({"GET", "/gpu_info", [&context](const HttpRequest&, const RouteParams&, Responder respond) {
                       const FaceService& faces = *context.faces;
                       const FaceStageReport report = faces.report();
                       Json models = Json::object();
                       if (faces.ready()) {
                         models["detection"] = {{"providers", {provider_name(report.detection)}},
                                                {"using_gpu", report.detection.rfind("cpu", 0) != 0},
                                                {"placement", report.detection}};
                         models["recognition"] = {{"providers", {provider_name(report.embedding)}},
                                                  {"using_gpu", report.embedding.rfind("cpu", 0) != 0},
                                                  {"placement", report.embedding}};
                       }
                       const double now = std::chrono::duration<double>(
                                              std::chrono::system_clock::now().time_since_epoch()).count();
                       const Json body = {{"directml_available", false},
                                          {"gpu_actually_used", faces.gpu_used()},
                                          {"model_info", std::move(models)},
                                          {"timestamp", now}};
                       respond(http_json(200, face_json_text(body)));
                     }});
  // The worker answered both alike: detection with embeddings.
  for (const char* path : {"/detect_faces_batch", "/detect_and_embed_batch"}) {
    routes->push_back({"POST", path, [&context](const HttpRequest& request, const RouteParams&, Responder respond) {
                         crawler_batch(context, request, std::move(respond));
                       }});
  }
  routes->push_back({"POST", "/v1/faces", [&context](const HttpRequest& request, const RouteParams&, Responder respond) {
                       kiln_faces(context, request, std::move(respond));
                     }});
}

}  // namespace kiln::serve
