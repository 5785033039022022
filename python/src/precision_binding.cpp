// _kiln.model_convert and _kiln.model_quantize: the precision job (`kiln model convert --fp16`, `kiln model quantize
// --int8`), with the settings it declares; the summary comes back as the dict `--json` prints.
#include <pybind11/stl.h>

#include "bindings.h"
#include "errors.h"
#include "kiln/apps/precision.h"
#include "py_jobs.h"

namespace kiln::py {

namespace pyb = pybind11;

namespace {

pyb::object precision_run(ModelPrecisionConfig& config, const ParamTable<ModelPrecisionConfig>& params,
                          const pyb::kwargs& kwargs, const std::string& function) {
  settings_apply(params, &config, nullptr, OpKind::kPreprocess, kwargs, function);
  Result<ModelPrecisionSummary> summary = ModelPrecisionSummary{};
  {
    pyb::gil_scoped_release release;
    summary = model_precision_job_run(config);
  }
  status_check(summary.status());
  return pyb::module_::import("json").attr("loads")(summary->json());
}

pyb::object convert_py(const std::string& model, const std::vector<std::string>& calibrate, const pyb::kwargs& kwargs) {
  ModelPrecisionConfig config;
  config.precision = ModelPrecision::kFp16;
  config.model = model;
  config.calibrate = calibrate;
  return precision_run(config, model_convert_params(), kwargs, "model_convert");
}

pyb::object quantize_py(const std::string& model, const std::vector<std::string>& calibrate,
                        const std::vector<std::string>& exclude, const pyb::kwargs& kwargs) {
  ModelPrecisionConfig config;
  config.precision = ModelPrecision::kInt8;
  config.model = model;
  config.calibrate = calibrate;
  config.quantize.exclude_nodes = exclude;
  return precision_run(config, model_quantize_params(), kwargs, "model_quantize");
}

}  // namespace

void precision_bindings_add(pyb::module_& m) {
  using namespace pybind11::literals;
  m.def(
      "model_convert", &convert_py, "model"_a, "calibrate"_a = std::vector<std::string>{},
      R"doc(An fp16 copy of a model (float16 weights, float32 inputs, outputs and compute): `kiln model convert --fp16`.

model: a packaged model's name (kiln.models()) or an .onnx file. calibrate: frames to compare the copy with the
original on (video files, images, folders, @lists); without them, random inputs of the model's shape. The file is
written only after the comparison and timing succeeded. Returns the summary (sizes, accuracy against fp32, speed)
as `--json` prints it.)doc");
  m.def(
      "model_quantize", &quantize_py, "model"_a, "calibrate"_a, "exclude"_a = std::vector<std::string>{},
      R"doc(A statically quantized int8 copy of a model (QDQ), calibrated on real frames: `kiln model quantize --int8`.

model: a packaged model's name (kiln.models()) or an .onnx file. calibrate: the frames (video files, images,
folders, @lists), preprocessed as kiln infer / kiln segment feed the model. exclude: node names left in float32.
The file is written only after the comparison and timing succeeded. Returns the summary (nodes quantized,
accuracy against fp32: mask IoU or cosine, speed) as `--json` prints it.)doc");
}

}  // namespace kiln::py
