// The images application: quality checks and inference preprocessing over files or in-memory images, in batches,
// on the GPU or the CPU. `kiln quality` / `kiln preprocess` and kiln.quality / kiln.preprocess run these jobs.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "kiln/codec.h"
#include "kiln/exec.h"
#include "kiln/image.h"
#include "kiln/ops/preprocess.h"
#include "kiln/ops/quality.h"
#include "kiln/params.h"
#include "kiln/status.h"

namespace kiln {

// Where a job's images come from: `paths` (files as given, folders searched recursively for .jpg/.jpeg/.png,
// "@list.txt" files of paths), or caller memory (u8 HWC views; named "#0", "#1", ...). Files are decoded in
// batches; one that cannot be read is reported and skipped, never fatal.
struct ImageInputs {
  std::vector<std::string> paths;
  VarShapeBatchView images;
};

// What happened to one input.
struct ImageRecord {
  std::string name;   // the path, or "#i"
  bool ok = false;    // decoded (or given) and processed
  std::string error;  // why not
  std::string backend;
};

// What a job tells its caller while it runs (any may be empty).
template <typename Record>
struct JobEvents {
  std::function<void(const Record&)> record;  // every input, in order
  std::function<void(int64_t done, int64_t total, const std::string& backend)> progress;  // after each batch
  LogFn log;  // the notes of the configuration (environment) and each kind of fallback, once; from any thread
};

// ---- quality -------------------------------------------------------------------------------------------------

struct QualityJobConfig {
  QualityThresholds thresholds;
  bool bgr = false;       // in-memory 3/4-channel images are BGR(A) (files always decode as RGB)
  std::string json;       // write one JSON object per input here (JSON lines), atomically
  std::string filter_to;  // copy the passing files, byte for byte, into this folder
  std::string preview;    // a PNG: preview_images images evenly spaced in the ranking by score, with their metrics
  int64_t preview_images = 24;
  // Continue a killed run: every 128 images or more, the results go to "<json or filter_to>.parts/"; a resumed run
  // (same inputs and settings) continues after its last whole part and ends with the outputs an uninterrupted run
  // writes.
  bool resume = false;
  int64_t max_pixels = kImageMaxPixels;
  double decode_timeout = kImageDecodeTimeoutSeconds;  // seconds one image may take to decode (0: no limit)
  ExecSettings exec;      // batch_size: images decoded and measured per batch
};
const ParamTable<QualityJobConfig>& quality_job_params();

struct QualityRecord : ImageRecord {
  QualityMetrics metrics;
  QualityVerdict verdict;
};

struct QualityJobSummary {
  int64_t total = 0;
  int64_t passed = 0;
  int64_t failed = 0;
  int64_t unreadable = 0;
  int64_t copied = 0;  // files copied into filter_to
  int64_t resumed = 0;  // inputs whose results came from the parts of a killed run
  double seconds = 0;
  std::string backend;    // "cpu", "opencl", "opencl+cpu" when a fallback moved later batches
  std::string placement;  // why the first batch ran where it did
  int64_t fallbacks = 0;
  std::vector<std::string> fallback_events;
};

// Unreadable inputs are counted and reported through events.record, never fatal.
Result<QualityJobSummary> quality_job_run(const QualityJobConfig& config, const ImageInputs& inputs,
                                          const JobEvents<QualityRecord>& events = {});

// ---- preprocess ----------------------------------------------------------------------------------------------

struct PreprocessJobConfig {
  int32_t width = 0;   // output size (required)
  int32_t height = 0;
  Layout layout = Layout::kCHW;
  PixelType dtype = PixelType::kF32;  // float32 or float16
  PreprocessParams params;
  std::string output;  // .npy or .h5/.hdf5, written atomically; empty: the caller's memory (TensorMemory)
  int64_t max_pixels = kImageMaxPixels;
  double decode_timeout = kImageDecodeTimeoutSeconds;  // seconds one image may take to decode (0: no limit)
  ExecSettings exec;
};
const ParamTable<PreprocessJobConfig>& preprocess_job_params();

// Caller memory for the job's items: where item i (0, 1, 2, ...) goes, packed, of the item's bytes. Asked for each
// item once, from one thread at a time, not always in order (two batches are processed at once).
using TensorMemory = std::function<void*(int64_t item)>;

struct PreprocessJobSummary {
  int64_t written = 0;
  int64_t unreadable = 0;
  double seconds = 0;
  std::vector<int64_t> item_shape;  // (3, H, W) or (H, W, 3)
  std::vector<std::string> names;   // the inputs that were written, in order
  std::string backend;
  std::string placement;
  int64_t fallbacks = 0;
  std::vector<std::string> fallback_events;
};

// Writes config.output, or into `memory` when output is empty. IoError when no input could be read (nothing is
// written then).
Result<PreprocessJobSummary> preprocess_job_run(const PreprocessJobConfig& config, const ImageInputs& inputs,
                                                const TensorMemory* memory = nullptr,
                                                const JobEvents<ImageRecord>& events = {});

}  // namespace kiln
