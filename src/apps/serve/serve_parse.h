// Request parsing for kiln serve, pure functions of the body's bytes (no sockets, no models), so that a fuzz harness
// can drive them: the crawler's face batch request, the Open Inference Protocol's JSON infer request, base64.
// Every error is InvalidArgument with the reason the client reads in its 400.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "kiln/status.h"

namespace kiln::serve {

// Standard base64 (RFC 4648, '+' '/'), padding optional, whitespace ignored, also URL-safe '-' '_'. A data URL's
// "data:...;base64," prefix is skipped.
Result<std::vector<uint8_t>> base64_decode(std::string_view text);

// POST /detect_faces_batch and /detect_and_embed_batch: {"images": [{"data": base64, "image_id": ...}],
// "min_face_quality": 0.5, "require_face": true, "crop_faces": true, "face_margin": 0.2} (the predecessor's
// defaults). An image whose base64 does not decode keeps its error (answered as that image's result).
struct FaceBatchImage {
  std::vector<uint8_t> bytes;
  std::string image_id;  // "" when not given
  std::string error;     // non-empty: this image is not analyzed
};
struct FaceBatchRequest {
  std::vector<FaceBatchImage> images;
  double min_face_quality = 0.5;
  bool require_face = true;
  bool crop_faces = true;
  double face_margin = 0.2;
};
Result<FaceBatchRequest> face_batch_request_parse(std::string_view body, size_t max_images);

// POST /v2/models/{name}[/versions/{v}]/infer with JSON tensors. Data may be flat (row-major) or nested; numbers
// only (the datatype is checked against the model by the caller). With the binary tensor data extension, the body
// is a JSON header of `header_length` bytes (the Inference-Header-Content-Length header; -1: none) followed by the
// raw bytes of the inputs that say "parameters": {"binary_data_size": N}, in their order.
struct InferInputTensor {
  std::string name;
  std::vector<int64_t> shape;
  std::string datatype;
  std::vector<float> data;
};
struct InferRequestV2 {
  std::string id;  // echoed in the response when given
  std::vector<InferInputTensor> inputs;
  std::vector<std::string> outputs;  // requested names; empty: every output
  // Outputs answered as raw bytes after the JSON: those requested with "parameters": {"binary_data": true}, or
  // every output when the request's parameters say "binary_data_output": true (an output's false still wins).
  std::vector<std::string> binary_outputs;
  std::vector<std::string> json_outputs;  // requested with "binary_data": false
  bool binary_output_all = false;
  // Triton's request parameters "priority" (1 first; 0 the server's default) and "timeout" (microseconds in the
  // queue); -1 when not given. The caller checks the priority against its levels.
  int64_t priority = -1;
  int64_t timeout_us = -1;
  bool output_binary(const std::string& name) const;
};
Result<InferRequestV2> infer_request_parse(std::string_view body, int64_t header_length = -1);

}  // namespace kiln::serve
