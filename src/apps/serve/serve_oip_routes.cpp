// The Open Inference Protocol (KServe v2) over HTTP/REST, JSON tensors: server and model health, metadata and
// infer, with the binary tensor data extension. Health answers 200 for true and 400 for false, as the protocol says
// (4xx); errors are {"error": "..."}.
#include <cstdlib>
#include <nlohmann/json.hpp>

#include "apps/serve/serve_routes.h"
#include "apps/serve/serve_tensors.h"
#if KILN_HAS_SEGMENT
#include "apps/serve/segment_service.h"
#endif
#include "kiln/version.h"

namespace kiln::serve {

namespace {

using Json = nlohmann::json;

constexpr const char* kModelVersion = "1";
constexpr const char* kHeaderLength = "Inference-Header-Content-Length";  // the binary tensor data extension's

// The JSON header's length of a body in the binary tensor data extension's form; -1 when the header is absent.
Result<int64_t> binary_header_length(const HttpRequest& request) {
  const std::string text = request.header("inference-header-content-length");
  if (text.empty()) return int64_t{-1};
  char* end = nullptr;
  const long long value = std::strtoll(text.c_str(), &end, 10);
  if (*end != '\0' || value < 0) {
    return invalid_argument(std::string(kHeaderLength) + ": expected the JSON header's byte count, got " + text);
  }
  return static_cast<int64_t>(value);
}

std::string oip_json_text(const Json& json) { return json.dump(-1, ' ', false, Json::error_handler_t::replace); }

Json tensor_metadata(const TensorInfo& tensor) {
  return {{"name", tensor.name}, {"datatype", oip_datatype(tensor.type)}, {"shape", tensor.shape}};
}

Json output_json(const Tensor& tensor) {
  Json data = Json::array();
  const size_t size = tensor_type_exact_size(tensor.type);
  if (!tensor.exact.empty() && size > 0) {
    const auto count = static_cast<size_t>(tensor.elements());
    for (size_t i = 0; i < count; ++i) {
      const uint8_t* p = tensor.exact.data() + i * size;
      if (tensor.type == TensorType::kUInt8) data.push_back(*p);
      if (tensor.type == TensorType::kInt32) data.push_back(*reinterpret_cast<const int32_t*>(p));
      if (tensor.type == TensorType::kInt64) data.push_back(*reinterpret_cast<const int64_t*>(p));
    }
  } else {
    data = tensor.data;
  }
  return {{"name", tensor.name},
          {"datatype", tensor.exact.empty() ? "FP32" : oip_datatype(tensor.type)},
          {"shape", tensor.shape},
          {"data", std::move(data)}};
}

// The model a route names, or the 404 that says why not.
ModelService* model_of(const ServeContext& context, const RouteParams& params, const Responder& respond) {
  ModelService* model = context.model_find(params.at("name"));
  if (model == nullptr) {
    respond(http_error(404, "unknown model \"" + params.at("name") + "\" (served: see GET /v2/models/<name>, --models)"));
    return nullptr;
  }
  const auto version = params.find("version");
  if (version != params.end() && version->second != kModelVersion) {
    respond(http_error(404, "model " + model->name() + " has no version " + version->second + " (only 1)"));
    return nullptr;
  }
  return model;
}

void metadata(const ServeContext& context, const RouteParams& params, const Responder& respond) {
  const ModelService* model = model_of(context, params, respond);
  if (model == nullptr) return;
  if (!model->ready()) return respond(http_error(400, "model " + model->name() + " failed to load: " + model->error()));
  Json inputs = Json::array();
  Json outputs = Json::array();
  for (const auto& t : model->info().inputs) inputs.push_back(tensor_metadata(t));
  for (const auto& t : model->info().outputs) outputs.push_back(tensor_metadata(t));
  respond(http_json(200, oip_json_text({{"name", model->name()},
                                 {"versions", {kModelVersion}},
                                 {"platform", "onnxruntime_onnx"},
                                 {"inputs", std::move(inputs)},
                                 {"outputs", std::move(outputs)}})));
}

void model_ready(const ServeContext& context, const RouteParams& params, const Responder& respond) {
  const ModelService* model = model_of(context, params, respond);
  if (model == nullptr) return;
  Json body = {{"name", model->name()}, {"ready", model->ready()}};
  if (!model->ready()) body["error"] = model->error();
  respond(http_json(model->ready() ? 200 : 400, oip_json_text(body)));
}

// The answer to an infer request: its outputs as JSON, or as raw bytes after the JSON for those asked so.
HttpResponse infer_answer(const std::string& name, const InferRequestV2& form, const InferCallResult& result) {
  if (result.http_status != 200) {
    HttpResponse response = http_error(result.http_status, result.error);
    if (result.http_status == 429 || result.http_status == 503) response.headers.emplace_back("Retry-After", "1");
    return response;
  }
  Json outputs = Json::array();
  std::string binary;
  for (const Tensor& t : result.outputs) {
    if (!form.outputs.empty() && std::find(form.outputs.begin(), form.outputs.end(), t.name) == form.outputs.end()) {
      continue;
    }
    if (!form.output_binary(t.name)) {
      outputs.push_back(output_json(t));
      continue;
    }
    const std::string bytes = tensor_output_bytes(t);
    outputs.push_back({{"name", t.name},
                       {"datatype", tensor_output_datatype(t)},
                       {"shape", t.shape},
                       {"parameters", {{"binary_data_size", bytes.size()}}}});
    binary += bytes;
  }
  Json body = {{"model_name", name}, {"model_version", kModelVersion}, {"outputs", std::move(outputs)}};
  if (!form.id.empty()) body["id"] = form.id;
  HttpResponse response = http_json(200, oip_json_text(body));
  if (form.binary_output_all || !form.binary_outputs.empty()) {
    response.headers.emplace_back(kHeaderLength, std::to_string(response.body.size()));
    response.content_type = "application/octet-stream";
    response.body += binary;
  }
  batch_headers_add(&response, result.batch_size, result.queue_ns);
  return response;
}

void infer(const ServeContext& context, const HttpRequest& request, const RouteParams& params, Responder respond) {
  ModelService* model = model_of(context, params, respond);
  if (model == nullptr) return;
  auto header_length = binary_header_length(request);
  if (!header_length.is_ok()) return respond(http_error(400, header_length.status().message()));
  auto parsed = infer_request_parse(request.body, header_length.value());
  if (!parsed.is_ok()) return respond(http_error(400, parsed.status().message()));
  InferRequestV2 call = std::move(parsed).value();
  if (call.inputs.size() != 1) {
    return respond(http_error(400, "model " + model->name() + " takes 1 input, the request has " +
                                       std::to_string(call.inputs.size())));
  }
  for (const std::string& name : call.outputs) {
    bool known = false;
    for (const auto& t : model->info().outputs) known = known || t.name == name;
    if (!known) return respond(http_error(400, "model " + model->name() + " has no output \"" + name + "\""));
  }
  auto scheduling = request_scheduling(request, context.config.priority_levels);
  if (!scheduling.is_ok()) return respond(http_error(400, scheduling.status().message()));
  // The protocol's own parameters, where the kiln-priority / kiln-timeout-ms headers do not say.
  if (call.priority > context.config.priority_levels) {
    return respond(http_error(400, "parameters.priority: expected 1 (highest) .. " +
                                       std::to_string(context.config.priority_levels) + " or 0 (the default), got " +
                                       std::to_string(call.priority)));
  }
  if (request.header("kiln-priority").empty() && call.priority > 0) {
    scheduling.value().priority = static_cast<int32_t>(call.priority);
  }
  if (request.header("kiln-timeout-ms").empty() && call.timeout_us > 0) scheduling.value().timeout_us = call.timeout_us;
  const std::string name = model->name();
  InferInputTensor input = std::move(call.inputs.front());
  call.inputs.clear();
  model->submit(std::move(input), scheduling.value(), [respond, name, form = std::move(call)](InferCallResult result) {
    respond(infer_answer(name, form, result));
  });
}

}  // namespace

bool serve_all_ready(const ServeContext& context) {
  if (context.faces && !context.faces->ready()) return false;
#if KILN_HAS_SEGMENT
  if (context.segment && !context.segment->ready()) return false;
#endif
  for (const auto& model : context.models) {
    if (!model->ready()) return false;
  }
  return true;
}

const std::vector<std::string>& oip_extensions() {
  static const std::vector<std::string> extensions = {"binary_tensor_data"};
  return extensions;
}

void oip_routes_add(ServeContext& context, std::vector<Route>* routes) {
  const ServeContext& c = context;
  routes->push_back({"GET", "/v2", [&c](const HttpRequest&, const RouteParams&, Responder respond) {
                       respond(http_json(200, oip_json_text({{"name", "kiln"},
                                                      {"version", KILN_VERSION_STRING},
                                                      {"extensions", oip_extensions()}})));
                     }});
  routes->push_back({"GET", "/v2/health/live", [](const HttpRequest&, const RouteParams&, Responder respond) {
                       respond(http_json(200, oip_json_text({{"live", true}})));
                     }});
  routes->push_back({"GET", "/v2/health/ready", [&c](const HttpRequest&, const RouteParams&, Responder respond) {
                       const bool ready = serve_all_ready(c);
                       respond(http_json(ready ? 200 : 400, oip_json_text({{"ready", ready}})));
                     }});
  for (const char* prefix : {"/v2/models/{name}", "/v2/models/{name}/versions/{version}"}) {
    const std::string p = prefix;
    routes->push_back({"GET", p, [&c](const HttpRequest&, const RouteParams& params, Responder respond) {
                         metadata(c, params, respond);
                       }});
    routes->push_back({"GET", p + "/ready", [&c](const HttpRequest&, const RouteParams& params, Responder respond) {
                         model_ready(c, params, respond);
                       }});
    routes->push_back({"POST", p + "/infer",
                       [&c](const HttpRequest& request, const RouteParams& params, Responder respond) {
                         infer(c, request, params, std::move(respond));
                       }});
  }
}

}  // namespace kiln::serve
