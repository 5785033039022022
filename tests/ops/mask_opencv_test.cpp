// mask: smoothing and the largest-component filter against OpenCV (exact): median vs cv::medianBlur
// (ksize 2r+1, BORDER_REPLICATE), open/close vs cv::morphologyEx (rect kernel, default border), largest component
// vs cv::connectedComponentsWithStats (8-connected).
#include <gtest/gtest.h>

#include <opencv2/imgproc.hpp>

#include <vector>

#include "common/image_ops_util.h"
#include "ops/mask_test_util.h"

namespace kiln {
namespace {

using test::logits_batch;
using test::masks_for;
using test::run_cpu;

const std::vector<std::pair<int32_t, int32_t>> kSizes = {{37, 23}, {64, 48}, {5, 3}, {1, 9}, {80, 1}};

// The unsmoothed decision, then the smoothed one, then OpenCV applied to the former.
void expect_smoothing_matches(MaskSmoothing smoothing, int32_t channels, int32_t target, int32_t radius,
                              uint32_t seed) {
  SCOPED_TRACE(testing::Message() << mask_smoothing_name(smoothing) << " C=" << channels << " target=" << target
                                  << " r=" << radius);
  const auto in = logits_batch(kSizes, channels, PixelType::kF32, seed);
  const auto raw = masks_for(in);
  const auto smoothed = masks_for(in);
  MaskParams params;
  params.target_class = target;
  params.threshold = 0.45f;
  ASSERT_TRUE(run_cpu(params, in, raw).is_ok());
  params.smoothing = smoothing;
  params.radius = radius;
  ASSERT_TRUE(run_cpu(params, in, smoothed).is_ok());
  for (int64_t i = 0; i < in.count(); ++i) {
    const cv::Mat src = test::cv_view(raw[i]);
    cv::Mat want;
    const int k = 2 * radius + 1;
    if (smoothing == MaskSmoothing::kMedian) {
      // medianBlur needs ksize > 1 and an image at least as large as the window's half for ksize >= 7 in some
      // OpenCV versions; replicate the border ourselves and take the centre to stay in the exact regime.
      cv::Mat padded;
      cv::copyMakeBorder(src, padded, radius, radius, radius, radius, cv::BORDER_REPLICATE);
      cv::Mat blurred;
      cv::medianBlur(padded, blurred, k);
      want = blurred(cv::Rect(radius, radius, src.cols, src.rows)).clone();
      if (src.cols >= k && src.rows >= k) {
        cv::Mat direct;
        cv::medianBlur(src, direct, k);
        ASSERT_EQ(cv::countNonZero(direct != want), 0) << "padding changed OpenCV's median";
      }
    } else {
      const cv::Mat kernel = cv::getStructuringElement(cv::MORPH_RECT, cv::Size(k, k));
      cv::morphologyEx(src, want, smoothing == MaskSmoothing::kOpen ? cv::MORPH_OPEN : cv::MORPH_CLOSE, kernel);
    }
    const test::ImageDiff d = test::image_diff(smoothed[i], test::kiln_view(want));
    EXPECT_EQ(d.over, 0) << "image " << i << " (" << raw[i].width << "x" << raw[i].height << "): " << d.first;
  }
}

TEST(MaskOpenCv, MedianMatchesMedianBlur) {
  uint32_t seed = 1;
  for (int32_t radius : {1, 2, 3, 5}) {
    expect_smoothing_matches(MaskSmoothing::kMedian, 1, -1, radius, seed++);  // binary 0/255
    expect_smoothing_matches(MaskSmoothing::kMedian, 5, -1, radius, seed++);  // class ids 0..4
    expect_smoothing_matches(MaskSmoothing::kMedian, 3, 1, radius, seed++);   // binary of class 1
  }
}

TEST(MaskOpenCv, OpenAndCloseMatchMorphologyEx) {
  uint32_t seed = 50;
  for (MaskSmoothing s : {MaskSmoothing::kOpen, MaskSmoothing::kClose}) {
    for (int32_t radius : {1, 2, 4}) {
      expect_smoothing_matches(s, 1, -1, radius, seed++);
      expect_smoothing_matches(s, 4, -1, radius, seed++);
      expect_smoothing_matches(s, 3, 2, radius, seed++);
    }
  }
}

TEST(MaskOpenCv, RadiusZeroIsIdentity) {
  const auto in = logits_batch(kSizes, 3, PixelType::kF32, 9);
  const auto a = masks_for(in);
  const auto b = masks_for(in);
  MaskParams params;
  ASSERT_TRUE(run_cpu(params, in, a).is_ok());
  params.smoothing = MaskSmoothing::kMedian;
  params.radius = 0;
  ASSERT_TRUE(run_cpu(params, in, b).is_ok());
  for (int64_t i = 0; i < in.count(); ++i) EXPECT_EQ(test::image_diff(a[i], b[i]).over, 0);
}

// Keeps OpenCV's largest component (ties: the lowest label, i.e. the first in raster order).
cv::Mat opencv_largest(const cv::Mat& mask) {
  cv::Mat labels, stats, centroids;
  const int n = cv::connectedComponentsWithStats(mask != 0, labels, stats, centroids, 8, CV_32S);
  int keep = 0;
  int best = 0;
  for (int l = 1; l < n; ++l) {
    if (stats.at<int>(l, cv::CC_STAT_AREA) > best) {
      best = stats.at<int>(l, cv::CC_STAT_AREA);
      keep = l;
    }
  }
  cv::Mat out = cv::Mat::zeros(mask.size(), CV_8U);
  if (keep > 0) mask.copyTo(out, labels == keep);
  return out;
}

TEST(MaskOpenCv, LargestComponentMatchesConnectedComponents) {
  uint32_t seed = 200;
  int64_t checked = 0;
  for (int32_t channels : {1, 4}) {
    for (MaskSmoothing s : {MaskSmoothing::kNone, MaskSmoothing::kOpen, MaskSmoothing::kMedian}) {
      for (float t : {0.3f, 0.6f, 0.85f}) {
        SCOPED_TRACE(testing::Message() << "C=" << channels << " " << mask_smoothing_name(s) << " t=" << t);
        const auto in = logits_batch({{37, 23}, {64, 48}, {5, 3}, {120, 90}}, channels, PixelType::kF32, seed++);
        const auto raw = masks_for(in);
        const auto kept = masks_for(in);
        MaskParams params;
        params.smoothing = s;
        params.radius = 1;
        params.threshold = t;
        params.target_class = channels == 1 ? -1 : 2;
        ASSERT_TRUE(run_cpu(params, in, raw).is_ok());
        params.largest_component = true;
        ASSERT_TRUE(run_cpu(params, in, kept).is_ok());
        for (int64_t i = 0; i < in.count(); ++i) {
          const cv::Mat want = opencv_largest(test::cv_view(raw[i]));
          const test::ImageDiff d = test::image_diff(kept[i], test::kiln_view(want));
          EXPECT_EQ(d.over, 0) << "image " << i << ": " << d.first;
          ++checked;
        }
      }
    }
  }
  EXPECT_EQ(checked, 2 * 3 * 3 * 4);
}

TEST(MaskOpenCv, LargestComponentKeepsClassIdsAndTiesGoToTheFirst) {
  // Class-id maps: every non-zero id counts as foreground; kept pixels keep their ids.
  const auto in = logits_batch({{50, 40}}, 3, PixelType::kF32, 5);
  const auto raw = masks_for(in);
  const auto kept = masks_for(in);
  MaskParams params;
  ASSERT_TRUE(run_cpu(params, in, raw).is_ok());
  params.largest_component = true;
  ASSERT_TRUE(run_cpu(params, in, kept).is_ok());
  EXPECT_EQ(test::image_diff(kept[0], test::kiln_view(opencv_largest(test::cv_view(raw[0])))).over, 0);

  // Two components of 2 pixels each: the first in raster order stays. Logits: 1 channel, +5 = on.
  auto tie = test::random_batch({{6, 3, 1, PixelType::kF32, Layout::kCHW}}, 1, -5.0f, -5.0f);
  tie[0].row<float>(0)[4] = 5.0f;  // component A: (4,0), (5,1) (diagonal)
  tie[0].row<float>(1)[5] = 5.0f;
  tie[0].row<float>(2)[0] = 5.0f;  // component B: (0,2), (1,2)
  tie[0].row<float>(2)[1] = 5.0f;
  const auto out = masks_for(tie);
  ASSERT_TRUE(run_cpu(params, tie, out).is_ok());
  EXPECT_EQ(out[0].row<uint8_t>(0)[4], 255);
  EXPECT_EQ(out[0].row<uint8_t>(1)[5], 255);
  EXPECT_EQ(out[0].row<uint8_t>(2)[0], 0);
  EXPECT_EQ(out[0].row<uint8_t>(2)[1], 0);
}

}  // namespace
}  // namespace kiln
