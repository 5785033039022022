// Calibration frames: video files, image files, folders and @lists -> batch-1 float tensors of a model's input,
// made by the same fused preprocess (size, layout, channel order, scale, mean, std) kiln infer and kiln segment use.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "kiln/infer.h"
#include "kiln/ops/preprocess.h"

namespace kiln {

struct CalibrationFeed {
  int32_t width = 0;
  int32_t height = 0;
  Layout layout = Layout::kCHW;
  PreprocessParams params;
  std::string text;  // for the summary
};

// The packaged model's input spec when `model` names a packaged model or its file; else the input shape
// (N x 3 x H x W or N x H x W x 3, fixed size) with x / 255, RGB.
Result<CalibrationFeed> calibration_feed_resolve(const std::string& model, const std::string& path,
                                                 const ModelInfo& info);

struct CalibrationFrames {
  std::vector<Tensor> items;  // each 1 x the model's input
  int64_t skipped = 0;        // image files that could not be decoded
};

// At most max_frames in all: every image up to that, and from each video frames spread evenly over its length.
// IoError / InvalidArgument naming the source for a missing file or folder, an unreadable video, or no frame.
Result<CalibrationFrames> calibration_frames_load(const std::vector<std::string>& sources, const CalibrationFeed& feed,
                                                  int64_t max_frames);

}  // namespace kiln
