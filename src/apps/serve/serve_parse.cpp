// Never throws: nlohmann's parser runs without exceptions and every value's type is checked before it is read.
#include "apps/serve/serve_parse.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <nlohmann/json.hpp>

#include "apps/serve/serve_tensors.h"

namespace kiln::serve {

namespace {

using Json = nlohmann::json;

constexpr std::array<int8_t, 256> parse_base64_table() {
  std::array<int8_t, 256> table{};
  for (auto& v : table) v = -1;
  const char* alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  for (int i = 0; i < 64; ++i) table[static_cast<uint8_t>(alphabet[i])] = static_cast<int8_t>(i);
  table[static_cast<uint8_t>('-')] = 62;
  table[static_cast<uint8_t>('_')] = 63;
  return table;
}

Result<Json> parse_json_object(std::string_view body) {
  Json json = Json::parse(body.begin(), body.end(), nullptr, false);
  if (json.is_discarded()) return invalid_argument("the body is not valid JSON");
  if (!json.is_object()) return invalid_argument("the body must be a JSON object");
  return json;
}

Status parse_number(const Json& object, const char* key, double* value) {
  const auto it = object.find(key);
  if (it == object.end() || it->is_null()) return Status::ok();
  if (!it->is_number()) return invalid_argument(std::string(key) + ": expected a number");
  *value = it->get<double>();
  if (!std::isfinite(*value)) return invalid_argument(std::string(key) + ": expected a finite number");
  return Status::ok();
}

Status parse_bool(const Json& object, const char* key, bool* value) {
  const auto it = object.find(key);
  if (it == object.end() || it->is_null()) return Status::ok();
  if (!it->is_boolean()) return invalid_argument(std::string(key) + ": expected true or false");
  *value = it->get<bool>();
  return Status::ok();
}

// Appends the numbers of a flat or nested array, row-major.
Status parse_flatten_numbers(const Json& value, std::vector<float>* out, int depth) {
  if (depth > 32) return invalid_argument("data: nested too deeply");
  if (value.is_array()) {
    for (const Json& item : value) KILN_TRY(parse_flatten_numbers(item, out, depth + 1));
    return Status::ok();
  }
  if (value.is_number()) {
    out->push_back(value.get<float>());
    return Status::ok();
  }
  if (value.is_boolean()) {
    out->push_back(value.get<bool>() ? 1.0f : 0.0f);
    return Status::ok();
  }
  return invalid_argument("data: expected numbers, found " + std::string(value.type_name()));
}

// An object's "parameters"."key", or null when absent; InvalidArgument when "parameters" is not an object.
Result<const Json*> parse_parameter(const Json& object, const char* key, const std::string& where) {
  const auto parameters = object.find("parameters");
  if (parameters == object.end() || parameters->is_null()) return static_cast<const Json*>(nullptr);
  if (!parameters->is_object()) return invalid_argument(where + "\"parameters\" must be an object");
  const auto value = parameters->find(key);
  return value == parameters->end() ? nullptr : &*value;
}

// A binary input's bytes, taken from the front of `binary`.
Result<std::string_view> parse_binary_take(const Json& size, std::string_view* binary, const std::string& where) {
  if (binary == nullptr) {
    return invalid_argument(where + "binary_data_size needs the Inference-Header-Content-Length header");
  }
  if (!size.is_number_unsigned()) return invalid_argument(where + "binary_data_size must be a byte count");
  const auto bytes = size.get<uint64_t>();
  if (bytes > binary->size()) {
    return invalid_argument(where + "binary_data_size " + std::to_string(bytes) + " runs past the body (" +
                            std::to_string(binary->size()) + " binary bytes left)");
  }
  const std::string_view taken = binary->substr(0, bytes);
  binary->remove_prefix(bytes);
  return taken;
}

Result<InferInputTensor> parse_input_tensor(const Json& input, size_t index, std::string_view* binary) {
  const std::string where = "inputs[" + std::to_string(index) + "]";
  if (!input.is_object()) return invalid_argument(where + ": expected an object");
  InferInputTensor tensor;
  const auto name = input.find("name");
  if (name == input.end() || !name->is_string()) return invalid_argument(where + ": \"name\" must be a string");
  tensor.name = name->get<std::string>();
  const auto datatype = input.find("datatype");
  if (datatype == input.end() || !datatype->is_string()) {
    return invalid_argument(where + " (" + tensor.name + "): \"datatype\" must be a string");
  }
  tensor.datatype = datatype->get<std::string>();
  const auto shape = input.find("shape");
  if (shape == input.end() || !shape->is_array()) {
    return invalid_argument(where + " (" + tensor.name + "): \"shape\" must be an array of integers");
  }
  int64_t elements = 1;
  for (const Json& dim : *shape) {
    if (!dim.is_number_integer() || dim.get<int64_t>() < 0 || dim.get<int64_t>() > (int64_t{1} << 31)) {
      return invalid_argument(where + " (" + tensor.name + "): \"shape\" must hold non-negative integers");
    }
    tensor.shape.push_back(dim.get<int64_t>());
    elements *= tensor.shape.back();
    if (elements > (int64_t{1} << 31)) return invalid_argument(where + " (" + tensor.name + "): shape too large");
  }
  const std::string named = where + " (" + tensor.name + "): ";
  const auto data = input.find("data");
  KILN_TRY_ASSIGN(const Json* binary_size, parse_parameter(input, "binary_data_size", named));
  if (binary_size != nullptr) {
    if (data != input.end()) return invalid_argument(named + "\"data\" and binary_data_size are both given");
    KILN_TRY_ASSIGN(const std::string_view bytes, parse_binary_take(*binary_size, binary, named));
    auto values = tensor_raw_values(bytes, tensor.datatype, elements);
    if (!values.is_ok()) return invalid_argument(named + "binary data: " + values.status().message());
    tensor.data = std::move(values).value();
    return tensor;
  }
  if (data == input.end()) {
    return invalid_argument(named +
                            "\"data\" is missing (or \"parameters\": {\"binary_data_size\": N} for binary data)");
  }
  if (const Status st = parse_flatten_numbers(*data, &tensor.data, 0); !st.is_ok()) {
    return invalid_argument(where + " (" + tensor.name + "): " + st.message());
  }
  if (static_cast<int64_t>(tensor.data.size()) != elements) {
    return invalid_argument(where + " (" + tensor.name + "): " + std::to_string(tensor.data.size()) +
                            " values for a shape of " + std::to_string(elements) + " elements");
  }
  return tensor;
}

}  // namespace

Result<std::vector<uint8_t>> base64_decode(std::string_view text) {
  static constexpr std::array<int8_t, 256> kTable = parse_base64_table();
  if (text.substr(0, 5) == "data:") {
    const size_t comma = text.find(";base64,");
    if (comma == std::string_view::npos) return invalid_argument("a data URL without \";base64,\"");
    text.remove_prefix(comma + 8);
  }
  std::vector<uint8_t> out;
  out.reserve(text.size() / 4 * 3 + 3);
  uint32_t bits = 0;
  int32_t count = 0;
  size_t padding = 0;
  for (size_t i = 0; i < text.size(); ++i) {
    const auto c = static_cast<uint8_t>(text[i]);
    if (c == ' ' || c == '\n' || c == '\r' || c == '\t') continue;
    if (c == '=') {
      ++padding;
      continue;
    }
    const int8_t value = kTable[c];
    if (value < 0 || padding > 0) {
      return invalid_argument("invalid base64: character " + std::to_string(i) +
                              (value < 0 ? " is not in the alphabet" : " follows the '=' padding"));
    }
    bits = (bits << 6) | static_cast<uint32_t>(value);
    if (++count == 4) {
      out.push_back(static_cast<uint8_t>(bits >> 16));
      out.push_back(static_cast<uint8_t>(bits >> 8));
      out.push_back(static_cast<uint8_t>(bits));
      bits = 0;
      count = 0;
    }
  }
  if (count == 1 || padding > 2) return invalid_argument("invalid base64: truncated (length not a multiple of 4)");
  if (count == 2) out.push_back(static_cast<uint8_t>(bits >> 4));
  if (count == 3) {
    out.push_back(static_cast<uint8_t>(bits >> 10));
    out.push_back(static_cast<uint8_t>(bits >> 2));
  }
  return out;
}

Result<FaceBatchRequest> face_batch_request_parse(std::string_view body, size_t max_images) {
  KILN_TRY_ASSIGN(Json json, parse_json_object(body));
  FaceBatchRequest request;
  const auto images = json.find("images");
  if (images == json.end() || !images->is_array()) return invalid_argument("\"images\" must be a list");
  if (images->size() > max_images) {
    return invalid_argument("\"images\" holds " + std::to_string(images->size()) + " images; at most " +
                            std::to_string(max_images) + " per request");
  }
  for (size_t i = 0; i < images->size(); ++i) {
    const Json& image = (*images)[i];
    const std::string where = "images[" + std::to_string(i) + "]";
    if (!image.is_object()) return invalid_argument(where + ": expected {\"data\": base64, \"image_id\": ...}");
    FaceBatchImage parsed;
    const auto id = image.find("image_id");
    if (id != image.end() && id->is_string()) parsed.image_id = id->get<std::string>();
    else if (id != image.end() && id->is_number()) parsed.image_id = id->dump();
    else if (id != image.end() && !id->is_null()) return invalid_argument(where + ".image_id: expected a string");
    const auto data = image.find("data");
    if (data == image.end() || !data->is_string()) return invalid_argument(where + ".data: expected a base64 string");
    auto bytes = base64_decode(data->get_ref<const std::string&>());
    if (bytes.is_ok()) parsed.bytes = std::move(bytes).value();
    else parsed.error = bytes.status().message();
    request.images.push_back(std::move(parsed));
  }
  KILN_TRY(parse_number(json, "min_face_quality", &request.min_face_quality));
  KILN_TRY(parse_bool(json, "require_face", &request.require_face));
  KILN_TRY(parse_bool(json, "crop_faces", &request.crop_faces));
  KILN_TRY(parse_number(json, "face_margin", &request.face_margin));
  if (request.face_margin < 0) return invalid_argument("face_margin: must be at least 0");
  return request;
}

bool InferRequestV2::output_binary(const std::string& name) const {
  if (std::find(json_outputs.begin(), json_outputs.end(), name) != json_outputs.end()) return false;
  return binary_output_all || std::find(binary_outputs.begin(), binary_outputs.end(), name) != binary_outputs.end();
}

Result<InferRequestV2> infer_request_parse(std::string_view body, int64_t header_length) {
  if (header_length > static_cast<int64_t>(body.size())) {
    return invalid_argument("Inference-Header-Content-Length " + std::to_string(header_length) + " exceeds the body (" +
                            std::to_string(body.size()) + " bytes)");
  }
  std::string_view binary;
  if (header_length >= 0) {
    binary = body.substr(static_cast<size_t>(header_length));
    body = body.substr(0, static_cast<size_t>(header_length));
  }
  KILN_TRY_ASSIGN(Json json, parse_json_object(body));
  InferRequestV2 request;
  const auto id = json.find("id");
  if (id != json.end() && id->is_string()) request.id = id->get<std::string>();
  else if (id != json.end() && !id->is_null()) return invalid_argument("\"id\" must be a string");
  const auto inputs = json.find("inputs");
  if (inputs == json.end() || !inputs->is_array() || inputs->empty()) {
    return invalid_argument("\"inputs\" must be a non-empty list of tensors");
  }
  for (size_t i = 0; i < inputs->size(); ++i) {
    KILN_TRY_ASSIGN(InferInputTensor tensor,
                    parse_input_tensor((*inputs)[i], i, header_length >= 0 ? &binary : nullptr));
    request.inputs.push_back(std::move(tensor));
  }
  if (!binary.empty()) {
    return invalid_argument(std::to_string(binary.size()) +
                            " bytes of binary data follow the inputs' binary_data_size");
  }
  KILN_TRY_ASSIGN(const Json* binary_all, parse_parameter(json, "binary_data_output", ""));
  if (binary_all != nullptr && !binary_all->is_boolean()) {
    return invalid_argument("parameters.binary_data_output: expected true or false");
  }
  request.binary_output_all = binary_all != nullptr && binary_all->get<bool>();
  const std::pair<const char*, int64_t*> scheduling[] = {{"priority", &request.priority},
                                                          {"timeout", &request.timeout_us}};
  for (const auto& [key, value] : scheduling) {
    KILN_TRY_ASSIGN(const Json* given, parse_parameter(json, key, ""));
    if (given == nullptr) continue;
    if (!given->is_number_unsigned() || given->get<uint64_t>() > (uint64_t{1} << 40)) {
      return invalid_argument(std::string("parameters.") + key + ": expected a non-negative integer");
    }
    *value = given->get<int64_t>();
  }
  const auto outputs = json.find("outputs");
  if (outputs != json.end() && !outputs->is_null()) {
    if (!outputs->is_array()) return invalid_argument("\"outputs\" must be a list");
    for (const Json& output : *outputs) {
      const auto name = output.is_object() ? output.find("name") : output.end();
      if (!output.is_object() || name == output.end() || !name->is_string()) {
        return invalid_argument("\"outputs\": each must be {\"name\": ...}");
      }
      request.outputs.push_back(name->get<std::string>());
      KILN_TRY_ASSIGN(const Json* binary_data, parse_parameter(output, "binary_data", "\"outputs\": "));
      if (binary_data != nullptr && !binary_data->is_boolean()) {
        return invalid_argument("\"outputs\" (" + request.outputs.back() + "): binary_data: expected true or false");
      }
      if (binary_data != nullptr) {
        (binary_data->get<bool>() ? request.binary_outputs : request.json_outputs).push_back(request.outputs.back());
      }
    }
  }
  return request;
}

}  // namespace kiln::serve
