// The inference application: images (files, folders, @lists) -> decode -> fused preprocess -> batched ONNX Runtime
// inference -> the model's raw outputs, rows in input order. `kiln infer` runs this job.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "kiln/apps/images.h"
#include "kiln/infer.h"
#include "kiln/params.h"

namespace kiln {

struct InferJobConfig {
  std::string model;   // a packaged model's name (kiln models) or an .onnx file
  std::string output;  // .npy: the first output as one array; .npz / .h5: every output by name, plus the paths
  // The model's input: 0 / "auto" take the packaged model's spec, else the model's input shape.
  int32_t width = 0;
  int32_t height = 0;
  std::string layout = "auto";  // auto | nchw | nhwc
  // "model": the packaged model's scale/mean/std/channel order (a plain .onnx file: x / 255, RGB); "flags": the
  // preprocess settings below as given.
  std::string preprocess_from = "model";
  PreprocessParams params;
  std::string provider = "cuda";  // the GPU provider to try first: cuda | tensorrt
  TensorRtOptions tensorrt;
  int64_t max_pixels = kImageMaxPixels;
  double decode_timeout = kImageDecodeTimeoutSeconds;  // seconds one image may take to decode (0: no limit)
  ExecSettings exec;  // mode, threads (decode and ONNX Runtime's intra-op threads), batch_size (images per run)
};
const ParamTable<InferJobConfig>& infer_job_params();

// On ONNX Runtime's CPU provider the job runs the model on at most this many inputs at a time, whatever the batch
// size: its CPU kernels take longer per input at batch 64 than at 8, and smaller chunks start the model sooner and
// keep decoding beside it (docs/benchmarks.md §16.5). GPU providers take the whole batch.
inline constexpr int64_t kInferCpuBatch = 8;

struct InferJobSummary {
  int64_t written = 0;
  int64_t unreadable = 0;
  double seconds = 0;
  std::vector<TensorInfo> outputs;  // written, with their per-item shapes (dim 0 is N)
  std::vector<std::string> names;   // the inputs written, in order
  InferReport report;               // provider, placement, fallbacks
  std::vector<int64_t> input_shape;  // per item, as fed
  // Inputs per model run at most: --batch-size, or on the CPU provider at most kInferCpuBatch.
  int64_t model_batch = 0;
  std::string preprocess;            // where the fused preprocess ran (the first batch's backend: cpu, cuda, opencl)
  // Where the model read its input: "host", or "device (N runs)" when the preprocess wrote it into device memory the
  // provider reads in place, with why that stopped when it did.
  std::string model_input;
};

// Inputs are image files (decoded by the job) or images already decoded (inputs.images: u8 RGB in host memory, named
// "#0", "#1", ... in the outputs).
// Unreadable inputs are skipped and reported through events.record; IoError when none could be read (nothing is
// written then).
Result<InferJobSummary> infer_job_run(const InferJobConfig& config, const ImageInputs& inputs,
                                      const JobEvents<ImageRecord>& events = {});

}  // namespace kiln
