// Quality: validation, the metrics from the backends' integer sums, the overall score and the acceptance verdict.
#include "ops/quality.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <string>

namespace kiln {

Status quality_validate(const OpCall& call) {
  if (call.results == nullptr) return invalid_argument("quality: no results array");
  if (!call.out.empty()) return invalid_argument("quality: takes no output batch (results go to the results array)");
  for (int64_t i = 0; i < call.in.count; ++i) {
    const ImageView& v = call.in[i];
    const std::string at = "quality: input image " + std::to_string(i);
    if (v.type != PixelType::kU8) return invalid_argument(at + " is " + pixel_type_name(v.type) + ", not uint8");
    if (v.channels != 1 && v.channels != 3 && v.channels != 4) {
      return invalid_argument(at + " has " + std::to_string(v.channels) + " channels (1, 3 or 4)");
    }
  }
  return Status::ok();
}

void quality_sums_add(KilnQualitySums& a, const KilnQualitySums& b) {
  a.gray_sum += b.gray_sum;
  a.gray_sq += b.gray_sq;
  a.lap_sum += b.lap_sum;
  a.lap_sq += b.lap_sq;
  a.mag_fixed += b.mag_fixed;
}

namespace {

// Population variance from an exact sum and sum of squares of n integers.
double variance_exact(int64_t sum, int64_t sq, int64_t n) {
  const __int128 numerator = static_cast<__int128>(n) * sq - static_cast<__int128>(sum) * sum;
  if (numerator <= 0) return 0.0;
  const double nn = static_cast<double>(n);
  return static_cast<double>(numerator) / nn / nn;
}

std::string format_value(double v) {
  char buffer[64];
  std::snprintf(buffer, sizeof(buffer), "%.1f", v);
  return buffer;
}

std::string format_threshold(double v) {
  char buffer[64];
  std::snprintf(buffer, sizeof(buffer), "%g", v);
  return buffer;
}

}  // namespace

QualityMetrics quality_metrics_from_sums(const KilnQualitySums& sums, int64_t pixels) {
  QualityMetrics m;
  if (pixels <= 0) return m;
  const double n = static_cast<double>(pixels);
  m.blur = variance_exact(sums.lap_sum, sums.lap_sq, pixels);
  m.brightness = static_cast<double>(sums.gray_sum) / n;
  m.contrast = std::sqrt(variance_exact(sums.gray_sum, sums.gray_sq, pixels));
  m.sharpness = static_cast<double>(sums.mag_fixed) / static_cast<double>(KILN_QUALITY_MAG_SCALE) / n;
  m.occlusion = 0.0;
  m.score = quality_score(m);
  return m;
}

double quality_score(const QualityMetrics& metrics) {
  const double blur = std::min(metrics.blur / 1000.0, 1.0);
  const double brightness = 1.0 - std::abs(metrics.brightness - 128.0) / 128.0;
  const double contrast = std::min(metrics.contrast / 50.0, 1.0);
  const double sharpness = std::min(metrics.sharpness / 100.0, 1.0);
  const double occlusion = 1.0 - metrics.occlusion;
  return 0.25 * blur + 0.20 * brightness + 0.20 * contrast + 0.25 * sharpness + 0.10 * occlusion;
}

const ParamTable<QualityThresholds>& quality_threshold_params() {
  static const ParamTable<QualityThresholds> table = [] {
    using T = QualityThresholds;
    ParamTable<T> t;
    t.add({.name = "min_blur", .help = "Minimum blur score (variance of the Laplacian)", .min = 0},
          [](T& q) -> double& { return q.min_blur; });
    t.add({.name = "min_brightness", .help = "Minimum mean gray level", .min = 0, .max = 255},
          [](T& q) -> double& { return q.min_brightness; });
    t.add({.name = "max_brightness", .help = "Maximum mean gray level", .min = 0, .max = 255},
          [](T& q) -> double& { return q.max_brightness; });
    t.add({.name = "min_sharpness", .help = "Minimum mean Sobel gradient magnitude", .min = 0},
          [](T& q) -> double& { return q.min_sharpness; });
    t.add({.name = "min_contrast", .help = "Minimum gray standard deviation", .min = 0},
          [](T& q) -> double& { return q.min_contrast; });
    t.add({.name = "min_score", .help = "Minimum overall score (scores are in [0, 1])", .min = 0},
          [](T& q) -> double& { return q.min_score; });
    return t;
  }();
  return table;
}

QualityVerdict quality_judge(const QualityMetrics& metrics, const QualityThresholds& thresholds) {
  QualityVerdict verdict;
  const auto below = [&](const char* name, double value, double minimum) {
    if (value < minimum) verdict.reasons.push_back(std::string(name) + " " + format_value(value) + " < " + format_threshold(minimum));
  };
  below("blur", metrics.blur, thresholds.min_blur);
  below("brightness", metrics.brightness, thresholds.min_brightness);
  if (metrics.brightness > thresholds.max_brightness) {
    verdict.reasons.push_back("brightness " + format_value(metrics.brightness) + " > " +
                              format_threshold(thresholds.max_brightness));
  }
  below("sharpness", metrics.sharpness, thresholds.min_sharpness);
  below("contrast", metrics.contrast, thresholds.min_contrast);
  below("score", metrics.score, thresholds.min_score);
  verdict.pass = verdict.reasons.empty();
  return verdict;
}

}  // namespace kiln
