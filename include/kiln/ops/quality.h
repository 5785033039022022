// Image-quality metrics in one pass over the gray image (u8 1-channel, or 3/4-channel converted on the fly with
// OpenCV's weights): blur = population variance of the 3x3 Laplacian (reflect-101 border), brightness = mean,
// contrast = standard deviation, sharpness = mean Sobel gradient magnitude; the predecessor's overall score and
// acceptance thresholds.
#pragma once

#include <string>
#include <vector>

#include "kiln/image.h"
#include "kiln/ops.h"
#include "kiln/params.h"

namespace kiln {

struct QualityMetrics {
  double blur = 0;
  double brightness = 0;
  double contrast = 0;
  double sharpness = 0;
  double occlusion = 0;  // 0 until a face detector provides it
  double score = 0;
};

struct QualityParams {
  bool bgr = false;  // 3/4-channel inputs are BGR(A) rather than RGB(A)
};

struct QualityThresholds {
  double min_blur = 120;
  double min_brightness = 30;
  double max_brightness = 225;
  double min_sharpness = 100;
  double min_contrast = 0;
  double min_score = 0;
};

// min_blur, min_brightness, max_brightness, min_sharpness, min_contrast, min_score.
const ParamTable<QualityThresholds>& quality_threshold_params();

struct QualityVerdict {
  bool pass = true;
  std::vector<std::string> reasons;  // one per failed threshold, e.g. "blur 85.2 < 120"
};

// 0.25 min(blur/1000, 1) + 0.20 (1 - |brightness - 128| / 128) + 0.20 min(contrast/50, 1)
//   + 0.25 min(sharpness/100, 1) + 0.10 (1 - occlusion)
double quality_score(const QualityMetrics& metrics);
QualityVerdict quality_judge(const QualityMetrics& metrics, const QualityThresholds& thresholds);

}  // namespace kiln
