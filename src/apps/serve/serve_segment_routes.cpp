// POST /v1/segment: one image's bytes -> its person mask as an 8-bit gray PNG (255 = person), the photo with the
// mask as its alpha (?output=alpha, RGBA PNG), or JSON with the mask's PNG in base64 (?output=json).
#include <chrono>
#include <nlohmann/json.hpp>

#include "apps/serve/serve_routes.h"
#include "kiln/codec.h"
#if KILN_HAS_SEGMENT
#include "apps/serve/segment_service.h"
#endif

namespace kiln::serve {

namespace {

// The value of `key` in a query string ("output=json&x=1"), "" when absent.
std::string segment_query_value(const std::string& query, const std::string& key) {
  size_t begin = 0;
  while (begin <= query.size()) {
    const size_t end = std::min(query.find('&', begin), query.size());
    const std::string pair = query.substr(begin, end - begin);
    const size_t equals = pair.find('=');
    if (pair.substr(0, equals) == key) return equals == std::string::npos ? std::string() : pair.substr(equals + 1);
    begin = end + 1;
  }
  return {};
}

#if KILN_HAS_SEGMENT
std::string segment_base64(const std::vector<uint8_t>& bytes) {
  static const char* const kAlphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  std::string out;
  out.reserve((bytes.size() + 2) / 3 * 4);
  for (size_t i = 0; i < bytes.size(); i += 3) {
    const uint32_t b0 = bytes[i];
    const uint32_t b1 = i + 1 < bytes.size() ? bytes[i + 1] : 0;
    const uint32_t b2 = i + 2 < bytes.size() ? bytes[i + 2] : 0;
    const uint32_t triple = (b0 << 16) | (b1 << 8) | b2;
    out += kAlphabet[(triple >> 18) & 63];
    out += kAlphabet[(triple >> 12) & 63];
    out += i + 1 < bytes.size() ? kAlphabet[(triple >> 6) & 63] : '=';
    out += i + 2 < bytes.size() ? kAlphabet[triple & 63] : '=';
  }
  return out;
}

// The photo (RGB) with the mask as its alpha channel.
ImageBuffer segment_alpha_image(const ImageBuffer& rgb, const ImageBuffer& mask) {
  ImageBuffer out;
  out.width = rgb.width;
  out.height = rgb.height;
  out.channels = 4;
  const size_t pixels = static_cast<size_t>(rgb.width) * rgb.height;
  out.pixels.resize(pixels * 4);
  for (size_t p = 0; p < pixels; ++p) {
    out.pixels[p * 4 + 0] = rgb.pixels[p * 3 + 0];
    out.pixels[p * 4 + 1] = rgb.pixels[p * 3 + 1];
    out.pixels[p * 4 + 2] = rgb.pixels[p * 3 + 2];
    out.pixels[p * 4 + 3] = mask.pixels[p];
  }
  return out;
}

HttpResponse segment_answer(const SegmentCallResult& result, const std::string& output, double seconds) {
  if (result.http_status != 200) {
    HttpResponse response = http_error(result.http_status, result.error);
    if (result.http_status == 429 || result.http_status == 503) response.headers.emplace_back("Retry-After", "1");
    return response;
  }
  EncodeOptions png;
  png.format = ImageFormat::kPng;
  png.png_compression = 1;  // a mask compresses well at any level; the time goes to the answer
  const ImageBuffer image = output == "alpha" ? segment_alpha_image(result.rgb, result.mask) : ImageBuffer();
  auto encoded = image_encode(output == "alpha" ? image.view() : result.mask.view(), png);
  if (!encoded.is_ok()) return http_error(500, "PNG encoding failed: " + encoded.status().message());
  HttpResponse response;
  if (output == "json") {
    const nlohmann::json body = {{"width", result.mask.width},
                                 {"height", result.mask.height},
                                 {"mask_png_base64", segment_base64(encoded.value())},
                                 {"person_fraction", result.person_fraction},
                                 {"processing_time_ms", seconds * 1000},
                                 {"batch_size", result.batch_size},
                                 {"queue_ms", static_cast<double>(result.queue_ns) * 1e-6}};
    response = http_json(200, body.dump());
  } else {
    response.content_type = "image/png";
    const std::vector<uint8_t>& bytes = encoded.value();
    response.body.assign(bytes.begin(), bytes.end());
  }
  batch_headers_add(&response, result.batch_size, result.queue_ns);
  return response;
}
#endif

void segment_request(ServeContext& context, const HttpRequest& request, Responder respond) {
  const auto start = std::chrono::steady_clock::now();
  std::string output = segment_query_value(request.query, "output");
  if (output.empty()) output = "mask";
  if (output != "mask" && output != "alpha" && output != "json") {
    return respond(http_error(400, "output: expected mask (the default), alpha or json, got \"" + output + "\""));
  }
#if KILN_HAS_SEGMENT
  if (!context.segment) {
    return respond(http_error(404, "segmentation is not served: start kiln serve with --segment"));
  }
  const auto* data = reinterpret_cast<const uint8_t*>(request.body.data());
  if (request.body.empty()) return respond(http_error(400, "the body is empty: send the image's bytes"));
  if (image_format_sniff(data, request.body.size()) == ImageFormat::kUnknown) {
    return respond(http_error(415, "unsupported image format: " + image_content_describe(data, request.body.size())));
  }
  auto scheduling = request_scheduling(request, context.config.priority_levels);
  if (!scheduling.is_ok()) return respond(http_error(400, scheduling.status().message()));
  std::vector<uint8_t> bytes(data, data + request.body.size());
  context.segment->submit(std::move(bytes), output == "alpha", scheduling.value(),
                          [start, output, respond](SegmentCallResult result) {
                            const double seconds =
                                std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
                            respond(segment_answer(result, output, seconds));
                          });
#else
  (void)context;
  (void)start;
  respond(http_error(404, "segmentation is not served: this kiln is built without FFmpeg (kiln segment)"));
#endif
}

}  // namespace

void segment_routes_add(ServeContext& context, std::vector<Route>* routes) {
  routes->push_back({"POST", "/v1/segment", [&context](const HttpRequest& request, const RouteParams&, Responder respond) {
                       segment_request(context, request, std::move(respond));
                     }});
  routes->push_back({"GET", kSegmentStreamPath, [](const HttpRequest&, const RouteParams&, Responder respond) {
                       HttpResponse response = http_error(426, "this is a WebSocket endpoint: send an upgrade request");
                       response.headers.emplace_back("Upgrade", "websocket");
                       respond(std::move(response));
                     }});
}

}  // namespace kiln::serve
