// Quality metrics vs OpenCV's separate calls: cvtColor, Laplacian (ksize=1) + meanStdDev, meanStdDev of the gray
// image, Sobel dx/dy + magnitude + mean (all CV_64F, BORDER_REFLECT_101).
#include <gtest/gtest.h>
#include <opencv2/imgproc.hpp>

#include <cmath>
#include <cstring>
#include <string>
#include <vector>

#include "common/image_ops_util.h"
#include "kiln/image_ops.h"
#include "ops/quality.h"

namespace kiln {
namespace {

QualityMetrics opencv_metrics(const ImageView& v, bool bgr) {
  const cv::Mat src = test::cv_view(v);
  cv::Mat gray;
  if (v.channels == 1) {
    gray = src;
  } else if (v.channels == 3) {
    cv::cvtColor(src, gray, bgr ? cv::COLOR_BGR2GRAY : cv::COLOR_RGB2GRAY);
  } else {
    cv::cvtColor(src, gray, bgr ? cv::COLOR_BGRA2GRAY : cv::COLOR_RGBA2GRAY);
  }
  QualityMetrics m;
  cv::Mat lap;
  cv::Laplacian(gray, lap, CV_64F, 1, 1, 0, cv::BORDER_REFLECT_101);
  cv::Scalar mean, stddev;
  cv::meanStdDev(lap, mean, stddev);
  m.blur = stddev[0] * stddev[0];
  cv::meanStdDev(gray, mean, stddev);
  m.brightness = mean[0];
  m.contrast = stddev[0];
  cv::Mat gx, gy, mag;
  cv::Sobel(gray, gx, CV_64F, 1, 0, 3, 1, 0, cv::BORDER_REFLECT_101);
  cv::Sobel(gray, gy, CV_64F, 0, 1, 3, 1, 0, cv::BORDER_REFLECT_101);
  cv::magnitude(gx, gy, mag);
  m.sharpness = cv::mean(mag)[0];
  m.score = quality_score(m);
  return m;
}

// Integer-derived metrics (blur, brightness, contrast) come from exact integer sums on both sides: only the final
// double rounding differs (OpenCV's sq/n - mean^2 vs kiln's exact (n*sq - sum^2)/n^2), hence 1e-9 relative.
// Sharpness: kiln takes a float sqrt per pixel (correctly rounded, relative error <= 2^-24), OpenCV a double one,
// so the mean differs by at most ~6e-8 relative: 1e-7 relative.
constexpr double kIntegerRel = 1e-9;
constexpr double kSharpnessRel = 1e-7;

void expect_close(double kiln_value, double cv_value, double rel, const std::string& what) {
  EXPECT_NEAR(kiln_value, cv_value, rel * std::max(1.0, std::abs(cv_value))) << what;
}

void check_batch(const std::vector<ImageShape>& shapes, uint32_t seed, bool bgr, float lo = 0.0f, float hi = 255.0f) {
  const VarShapeBatch batch = test::random_batch(shapes, seed, lo, hi);
  std::vector<QualityMetrics> results(static_cast<size_t>(batch.count()));
  QualityParams params;
  params.bgr = bgr;
  ExecOptions exec;
  exec.mode = ExecMode::kCpu;
  ASSERT_TRUE(quality_measure(params, batch.view(), results.data(), exec).is_ok());
  for (int64_t i = 0; i < batch.count(); ++i) {
    const ImageView& v = batch[i];
    const std::string what = std::to_string(v.width) + "x" + std::to_string(v.height) + "x" +
                             std::to_string(v.channels) + (bgr ? " bgr" : " rgb");
    const QualityMetrics ref = opencv_metrics(v, bgr);
    const QualityMetrics& got = results[static_cast<size_t>(i)];
    expect_close(got.blur, ref.blur, kIntegerRel, what + " blur");
    expect_close(got.brightness, ref.brightness, kIntegerRel, what + " brightness");
    expect_close(got.contrast, ref.contrast, kIntegerRel, what + " contrast");
    expect_close(got.sharpness, ref.sharpness, kSharpnessRel, what + " sharpness");
    EXPECT_NEAR(got.score, ref.score, 1e-7) << what << " score";
    EXPECT_EQ(got.occlusion, 0.0);
  }
}

std::vector<ImageShape> shapes_with(int32_t channels) {
  std::vector<ImageShape> shapes;
  for (const auto& [w, h] : std::vector<std::pair<int32_t, int32_t>>{
           {2, 2}, {3, 2}, {2, 3}, {5, 7}, {17, 13}, {64, 48}, {101, 67}, {333, 251}, {640, 480}}) {
    shapes.push_back(ImageShape{w, h, channels, PixelType::kU8, Layout::kHWC});
  }
  return shapes;
}

TEST(QualityOpenCV, Gray) { check_batch(shapes_with(1), 1, false); }
TEST(QualityOpenCV, Rgb) { check_batch(shapes_with(3), 2, false); }
TEST(QualityOpenCV, Bgr) { check_batch(shapes_with(3), 3, true); }
TEST(QualityOpenCV, Rgba) { check_batch(shapes_with(4), 4, false); }
TEST(QualityOpenCV, Bgra) { check_batch(shapes_with(4), 5, true); }
// Narrow value ranges: low contrast and small Laplacian variance (cancellation in OpenCV's sq/n - mean^2).
TEST(QualityOpenCV, LowContrast) { check_batch(shapes_with(1), 6, false, 120.0f, 124.0f); }
TEST(QualityOpenCV, Wide) {
  check_batch({ImageShape{2100, 3, 1, PixelType::kU8, Layout::kHWC}, ImageShape{4099, 2, 3, PixelType::kU8, Layout::kHWC}},
              7, false);
}

// 1-pixel extents: reflect-101 of a 1-pixel axis stays at index 0, as in cv::borderInterpolate.
TEST(QualityOpenCV, TinyImages) {
  check_batch({ImageShape{1, 1, 1}, ImageShape{1, 5, 1}, ImageShape{6, 1, 1}, ImageShape{1, 2, 3}, ImageShape{2, 1, 4}},
              8, false);
}

// A constant image: every metric but brightness is 0.
TEST(QualityOpenCV, Constant) {
  VarShapeBatch batch = test::filled_batch({ImageShape{31, 17, 3}}, 77);
  QualityMetrics m;
  ASSERT_TRUE(quality_measure(QualityParams{}, batch.view(), &m).is_ok());
  EXPECT_EQ(m.blur, 0.0);
  EXPECT_EQ(m.contrast, 0.0);
  EXPECT_EQ(m.sharpness, 0.0);
  EXPECT_EQ(m.brightness, 77.0);  // (77 * (9798 + 19235 + 3735) + 2^14) >> 15 = 77
}

// Strided (cropped) views read the same pixels as packed copies.
TEST(QualityOpenCV, CroppedView) {
  const VarShapeBatch big = test::random_batch({ImageShape{90, 70, 3}}, 9);
  const ImageView crop = big[0].crop(5, 7, 61, 43);
  VarShapeBatch packed = VarShapeBatch::allocate({ImageShape{61, 43, 3}});
  for (int32_t y = 0; y < 43; ++y) std::memcpy(packed[0].row<uint8_t>(y), crop.row<uint8_t>(y), 61 * 3);
  const VarShapeBatch wrapped = VarShapeBatch::wrap(std::vector<ImageView>{crop});
  QualityMetrics a, b;
  ASSERT_TRUE(quality_measure(QualityParams{}, wrapped.view(), &a).is_ok());
  ASSERT_TRUE(quality_measure(QualityParams{}, packed.view(), &b).is_ok());
  EXPECT_EQ(a.blur, b.blur);
  EXPECT_EQ(a.sharpness, b.sharpness);
  EXPECT_EQ(a.brightness, b.brightness);
  const QualityMetrics ref = opencv_metrics(crop, false);
  expect_close(a.blur, ref.blur, kIntegerRel, "crop blur");
  expect_close(a.sharpness, ref.sharpness, kSharpnessRel, "crop sharpness");
}

}  // namespace
}  // namespace kiln
