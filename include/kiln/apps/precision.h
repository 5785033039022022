// The precision application: a model (a packaged model's name or an .onnx file) -> an fp16 or a calibrated int8
// copy, checked against the original on real frames (a video, image files, folders, @lists) preprocessed exactly
// as kiln infer / kiln segment feed the model, timed on ONNX Runtime's CPU provider, and written only when all of
// that succeeded. `kiln model convert --fp16` and `kiln model quantize --int8` run this job.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "kiln/params.h"
#include "kiln/precision.h"

namespace kiln {

enum class ModelPrecision : uint8_t { kFp16 = 0, kInt8 };

struct ModelPrecisionConfig {
  std::string model;   // a packaged model's name (kiln models) or an .onnx file
  std::string output;  // the new .onnx file (written through a temporary file and a rename)
  ModelPrecision precision = ModelPrecision::kInt8;
  // Frames: video files, image files, folders of images, @list files. Needed for int8; for fp16 they are what
  // the copy is compared on (without them: random inputs of the model's shape).
  std::vector<std::string> calibrate;
  int64_t max_frames = 64;  // at most this many frames in all, spread evenly over each video
  ModelFp16Options fp16;
  ModelQuantizeOptions quantize;
  ModelCompareOptions compare;
};

struct ModelPrecisionSummary {
  std::string model;   // the file read
  std::string output;  // the file written
  ModelPrecision precision = ModelPrecision::kInt8;
  int64_t bytes_before = 0;
  int64_t bytes_after = 0;
  int64_t frames = 0;          // calibration / comparison inputs used
  int64_t frames_skipped = 0;  // image files that could not be decoded
  bool random_inputs = false;  // fp16 without frames: compared on random inputs
  std::string input_spec;      // how frames were fed, e.g. "3 x 256 x 256 RGB, x * 0.00392 (packaged model selfie)"
  ModelFp16Report fp16;
  ModelQuantizeReport quantize;
  ModelCompareReport compare;
  double seconds = 0;
  std::string json() const;
};

// The settings of `kiln model convert --fp16` and `kiln model quantize --int8` (flags) and of kiln.model_convert
// and kiln.model_quantize (keywords), declared once: output, max_frames, threads, seconds, and min_elements (fp16)
// or method, percentile, activations, per_tensor, reduce_range, quantize_head (int8). The model, the frames
// (`calibrate`) and the nodes kept in float32 (`exclude`) are lists and arguments of their own.
const ParamTable<ModelPrecisionConfig>& model_convert_params();
const ParamTable<ModelPrecisionConfig>& model_quantize_params();

// InvalidArgument / IoError / UnsupportedFormat naming the file for a bad model, missing or unreadable frames or
// an output equal to the input; nothing is written then.
Result<ModelPrecisionSummary> model_precision_job_run(const ModelPrecisionConfig& config);

}  // namespace kiln
