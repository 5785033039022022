// The images of a /v1/faces request (raw or multipart), the faces it adds to a collection, and
// POST /v1/faces/search: the nearest faces of a collection to an image's faces or to an embedding.
#include <chrono>
#include <cmath>

#include "apps/serve/serve_faces_input.h"
#include "apps/serve/serve_multipart.h"
#include "apps/serve/serve_routes.h"
#include "kiln/codec.h"

namespace kiln::serve {

namespace {

using Json = nlohmann::json;

std::string collection_text(const Json& json) { return json.dump(-1, ' ', false, Json::error_handler_t::replace); }

Json box_json(const std::array<float, 4>& box) { return {box[0], box[1], box[2], box[3]}; }

Json hits_json(const std::vector<CollectionHit>& hits) {
  Json out = Json::array();
  for (const CollectionHit& hit : hits) {
    out.push_back({{"id", hit.id}, {"image", hit.image}, {"box", box_json(hit.box)}, {"score", hit.score}});
  }
  return out;
}

// k (default 5, 1..1000) from the query or the JSON body.
Result<int64_t> search_k(const std::string& text) {
  if (text.empty()) return int64_t{5};
  char* end = nullptr;
  const long value = std::strtol(text.c_str(), &end, 10);
  if (*end != '\0' || value < 1 || value > 1000) return invalid_argument("k: expected 1..1000, got " + text);
  return static_cast<int64_t>(value);
}

void search_answer(ServeContext& context, const std::string& collection, int64_t k,
                   const std::vector<std::vector<float>>& queries, const std::vector<Json>& boxes,
                   std::chrono::steady_clock::time_point start, const Responder& respond) {
  std::vector<const float*> pointers;
  for (const auto& query : queries) pointers.push_back(query.data());
  std::string index;
  auto hits = context.collections->search(collection, pointers, k, &index);
  if (!hits.is_ok()) return respond(http_error(500, "search failed: " + hits.status().message()));
  Json results = Json::array();
  for (size_t q = 0; q < queries.size(); ++q) {
    Json entry = {{"hits", hits_json(hits.value()[q])}};
    if (!boxes.empty()) entry["box"] = boxes[q];
    results.push_back(std::move(entry));
  }
  const Json body = {{"collection", collection},
                     {"collection_size", context.collections->size(collection)},
                     {"index", index},
                     {"results", std::move(results)},
                     {"processing_time_ms", std::chrono::duration<double, std::milli>(
                                                std::chrono::steady_clock::now() - start).count()}};
  respond(http_json(200, collection_text(body)));
}

// The body is an image (its faces are the queries, best detection first) or JSON {"embedding": [512 floats],
// "collection", "k"}; the query's collection and k win over the JSON's.
void faces_search(ServeContext& context, const HttpRequest& request, Responder respond) {
  const auto start = std::chrono::steady_clock::now();
  std::string collection = query_value(request.query, "collection");
  std::string k_text = query_value(request.query, "k");
  const bool json = request.header("content-type").rfind("application/json", 0) == 0 ||
                    (!request.body.empty() && request.body.front() == '{');
  std::vector<float> embedding;
  if (json) {
    const Json parsed = Json::parse(request.body, nullptr, false);
    if (parsed.is_discarded() || !parsed.is_object()) return respond(http_error(400, "the body is not a JSON object"));
    if (collection.empty() && parsed.contains("collection") && parsed["collection"].is_string()) {
      collection = parsed["collection"].get<std::string>();
    }
    if (k_text.empty() && parsed.contains("k") && parsed["k"].is_number_integer()) {
      k_text = std::to_string(parsed["k"].get<int64_t>());
    }
    const Json* values = parsed.contains("embedding") ? &parsed["embedding"] : nullptr;
    if (!values || !values->is_array() || values->size() != static_cast<size_t>(kFaceEmbeddingSize)) {
      return respond(http_error(400, "embedding: expected an array of " + std::to_string(kFaceEmbeddingSize) + " numbers"));
    }
    double norm = 0;
    for (const Json& value : *values) {
      if (!value.is_number()) return respond(http_error(400, "embedding: expected numbers only"));
      embedding.push_back(value.get<float>());
      norm += static_cast<double>(embedding.back()) * embedding.back();
    }
    if (!(norm > 0) || !std::isfinite(norm)) return respond(http_error(400, "embedding: all zeros or not finite"));
    for (float& value : embedding) value = static_cast<float>(value / std::sqrt(norm));  // cosine, as kiln's are
  }
  if (collection.empty()) return respond(http_error(400, "collection: name the collection to search (?collection=)"));
  if (!FaceCollections::name_valid(collection)) return respond(http_error(400, "collection: not a valid name"));
  if (context.collections->size(collection) < 0) {
    return respond(http_error(404, "no collection named \"" + collection + "\" (POST /v1/faces?collection= adds faces)"));
  }
  auto k = search_k(k_text);
  if (!k.is_ok()) return respond(http_error(400, k.status().message()));
  if (json) return search_answer(context, collection, k.value(), {embedding}, {}, start, respond);
  auto image = faces_raw_image(request);
  if (!image.is_ok()) {
    const bool unsupported = image.status().code() == Errc::kUnsupportedFormat;
    return respond(http_error(unsupported ? 415 : 400, image.status().message()));
  }
  auto scheduling = request_scheduling(request, context.config.priority_levels);
  if (!scheduling.is_ok()) return respond(http_error(400, scheduling.status().message()));
  const int64_t wanted = k.value();
  context.faces->submit(std::move(image.value().images), scheduling.value(),
                        [&context, collection, wanted, start, respond](FaceCallResult result) {
                          if (result.http_status != 200) return respond(http_error(result.http_status, result.error));
                          const FaceImageResult& found = result.images.front();
                          if (!found.error.empty()) {
                            return respond(http_error(400, "the image could not be read: " + found.error));
                          }
                          std::vector<std::vector<float>> queries;
                          std::vector<Json> boxes;
                          for (const Face& face : found.faces) {
                            queries.push_back(face.embedding);
                            const float* b = face.detection.box;
                            boxes.push_back({b[0], b[1], b[2], b[3]});
                          }
                          search_answer(context, collection, wanted, queries, boxes, start, respond);
                        });
}

}  // namespace

Result<FacesNamedImages> faces_raw_image(const HttpRequest& request) {
  const auto* data = reinterpret_cast<const uint8_t*>(request.body.data());
  if (request.body.empty()) return invalid_argument("the body is empty: send the image's bytes");
  if (image_format_sniff(data, request.body.size()) == ImageFormat::kUnknown) {
    return unsupported_format("unsupported image format: " + image_content_describe(data, request.body.size()));
  }
  FacesNamedImages out;
  out.images.resize(1);
  out.images[0].bytes.assign(data, data + request.body.size());
  out.names.push_back({query_value(request.query, "name"), ""});
  return out;
}

Result<FacesNamedImages> faces_multipart_images(const HttpRequest& request, size_t max_images) {
  KILN_TRY_ASSIGN(std::vector<MultipartPart> parts, multipart_parse(request.header("content-type"), request.body));
  if (parts.empty()) return invalid_argument("multipart: the body has no part: send one image per part");
  if (parts.size() > max_images) {
    return invalid_argument("multipart: " + std::to_string(parts.size()) + " parts, at most " +
                            std::to_string(max_images) + " (--max-queue)");
  }
  FacesNamedImages out;
  for (MultipartPart& part : parts) {
    FaceBatchImage image;
    image.image_id = part.filename.empty() ? part.name : part.filename;
    if (part.data.empty()) image.error = "the part is empty";
    image.bytes.assign(part.data.begin(), part.data.end());  // the service names a format it cannot read
    out.images.push_back(std::move(image));
    out.names.push_back({part.name, part.filename});
  }
  return out;
}

void collection_faces_add(FaceCollections& collections, const std::string& collection,
                          const std::vector<FacesImageName>& names, const FaceCallResult& result,
                          std::vector<Json>* lists, Json* body) {
  std::vector<std::vector<CollectionFace>> images;
  for (size_t i = 0; i < result.images.size(); ++i) {
    if (!result.images[i].error.empty()) continue;  // an image that was not read is not one of the collection's
    const std::string image = names[i].filename.empty() ? names[i].name : names[i].filename;
    images.emplace_back();
    for (const Face& face : result.images[i].faces) images.back().push_back({&face, image});
  }
  Status saved;
  const std::vector<CollectionAdded> added = collections.add(collection, images, &saved);
  size_t next = 0;
  for (size_t i = 0; i < result.images.size(); ++i) {
    for (Json& face : (*lists)[i]) {
      const CollectionAdded& a = added[next++];
      face["collection_id"] = a.id >= 0 ? Json(a.id) : Json(nullptr);
      face["duplicate_of"] = a.duplicate_of >= 0 ? Json(a.duplicate_of) : Json(nullptr);
      face["duplicate_cosine"] = a.cosine;
    }
  }
  (*body)["collection"] = collection;
  (*body)["collection_size"] = collections.size(collection);
  if (!saved.is_ok()) (*body)["collection_error"] = "added, but not saved: " + saved.message();
}

void collection_routes_add(ServeContext& context, std::vector<Route>* routes) {
  routes->push_back({"POST", "/v1/faces/search",
                     [&context](const HttpRequest& request, const RouteParams&, Responder respond) {
                       faces_search(context, request, std::move(respond));
                     }});
}

}  // namespace kiln::serve
