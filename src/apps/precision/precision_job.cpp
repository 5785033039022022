// The precision job: read and check the model, load the frames, make the fp16 or int8 copy, compare it with the
// original on those frames (which also proves that ONNX Runtime loads and runs it), then write it atomically.
#include <chrono>
#include <filesystem>

#include <nlohmann/json.hpp>

#include "apps/precision/calibration_frames.h"
#include "core/file_read.h"
#include "io/durable_file.h"
#include "kiln/apps/precision.h"

namespace kiln {

namespace fs = std::filesystem;

std::string ModelPrecisionSummary::json() const {
  nlohmann::json j = {{"model", model},
                      {"output", output},
                      {"precision", precision == ModelPrecision::kFp16 ? "fp16" : "int8"},
                      {"bytes_before", bytes_before},
                      {"bytes_after", bytes_after},
                      {"frames", frames},
                      {"frames_skipped", frames_skipped},
                      {"random_inputs", random_inputs},
                      {"input_spec", input_spec},
                      {"seconds", seconds},
                      {"compare", nlohmann::json::parse(compare.json())}};
  if (precision == ModelPrecision::kFp16) {
    j["fp16"] = {{"converted", fp16.converted}, {"kept_fp32", fp16.kept_fp32}, {"bytes_converted", fp16.bytes_converted}};
  } else {
    const ModelQuantizeReport& q = quantize;
    j["int8"] = {{"quantized_nodes", q.quantized_nodes}, {"float_nodes", q.float_nodes},
                 {"float_op_types", q.float_op_types}, {"quantize_nodes", q.quantize_nodes},
                 {"dequantize_nodes", q.dequantize_nodes}, {"weights", q.weights}, {"folded", q.folded},
                 {"removed_activations", q.removed_activations}, {"head_nodes", q.head_nodes},
                 {"calibration_items", q.calibration_items},
                 {"opset_from", q.opset_from}, {"opset_to", q.opset_to}};
  }
  return j.dump();
}

Result<ModelPrecisionSummary> model_precision_job_run(const ModelPrecisionConfig& config) {
  const auto started = std::chrono::steady_clock::now();
  if (config.model.empty()) return invalid_argument("no model given");
  if (config.output.empty()) return invalid_argument("no output given (-o FILE.onnx)");
  if (config.precision == ModelPrecision::kInt8 && config.calibrate.empty()) {
    return invalid_argument("int8 quantization needs calibration frames (--calibrate VIDEO|FOLDER|IMAGE|@LIST)");
  }
  KILN_TRY_ASSIGN(const std::string path, model_path_resolve(config.model));
  std::error_code ec;
  if (fs::exists(config.output, ec) && fs::equivalent(path, config.output, ec)) {
    return invalid_argument(config.output + ": the output would overwrite the model it is made from");
  }
  ModelPrecisionSummary s;
  s.model = path;
  s.output = config.output;
  s.precision = config.precision;
  auto read = file_read_all(path, INT32_MAX);
  if (!read.is_ok()) return Status(Errc::kInvalidArgument, "model " + read.status().message());
  const ModelBytes original = std::move(read).value();
  KILN_TRY(model_bytes_check(original, "model " + path));
  s.bytes_before = static_cast<int64_t>(original.size());

  InferOptions infer;
  infer.mode = ExecMode::kCpu;
  infer.threads = config.compare.threads;
  infer.warmup_runs = 0;
  KILN_TRY_ASSIGN(auto session, InferSession::open_bytes(original, infer, "model " + path));
  std::vector<Tensor> frames;
  if (!config.calibrate.empty()) {
    KILN_TRY_ASSIGN(const CalibrationFeed feed, calibration_feed_resolve(config.model, path, session->info()));
    KILN_TRY_ASSIGN(CalibrationFrames loaded, calibration_frames_load(config.calibrate, feed, config.max_frames));
    frames = std::move(loaded.items);
    s.frames_skipped = loaded.skipped;
    s.input_spec = feed.text;
  } else {
    s.random_inputs = true;
    s.input_spec = "random values in [-1, 1)";
    for (uint32_t seed = 0; seed < 8; ++seed) {
      Tensor t;
      t.data = infer_random_input(session->info(), 1, seed, &t.shape);
      frames.push_back(std::move(t));
    }
  }
  session.reset();
  s.frames = static_cast<int64_t>(frames.size());

  ModelBytes converted;
  if (config.precision == ModelPrecision::kFp16) {
    KILN_TRY_ASSIGN(converted, model_fp16_convert(original, config.fp16, &s.fp16));
  } else {
    ModelQuantizeOptions options = config.quantize;
    if (options.threads == 0) options.threads = config.compare.threads;
    KILN_TRY_ASSIGN(converted, model_int8_quantize(original, frames, options, &s.quantize));
  }
  KILN_TRY_ASSIGN(s.compare, model_compare(original, converted, frames, config.compare));
  s.bytes_after = static_cast<int64_t>(converted.size());
  KILN_TRY(parent_folder_create(config.output));
  KILN_TRY(file_write_atomic(config.output, converted.data(), converted.size()));
  s.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  return s;
}

}  // namespace kiln
