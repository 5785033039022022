// Quality on the CPU: threaded vs unthreaded, CHW vs HWC, per-image independence in a var-shape batch.
#include <gtest/gtest.h>

#include <cstring>
#include <vector>

#include "common/image_ops_util.h"
#include "core/thread_pool.h"
#include "kiln/image_ops.h"
#include "ops/quality.h"

namespace kiln {
namespace {

std::vector<QualityMetrics> measure(const VarShapeBatchView& in, bool bgr, ThreadPool* pool) {
  std::vector<QualityMetrics> results(static_cast<size_t>(in.count));
  QualityParams params;
  params.bgr = bgr;
  EXPECT_TRUE(quality_measure(params, in, results.data(), test::cpu_exec(pool)).is_ok());
  return results;
}

void expect_identical(const QualityMetrics& a, const QualityMetrics& b, const std::string& what) {
  EXPECT_EQ(a.blur, b.blur) << what;
  EXPECT_EQ(a.brightness, b.brightness) << what;
  EXPECT_EQ(a.contrast, b.contrast) << what;
  EXPECT_EQ(a.sharpness, b.sharpness) << what;
  EXPECT_EQ(a.score, b.score) << what;
}

// A CHW copy of an HWC u8 image.
VarShapeBatch to_chw(const VarShapeBatch& hwc) {
  std::vector<ImageShape> shapes;
  for (const ImageView& v : hwc.images()) shapes.push_back(ImageShape{v.width, v.height, v.channels, v.type, Layout::kCHW});
  VarShapeBatch chw = VarShapeBatch::allocate(shapes);
  for (int64_t i = 0; i < hwc.count(); ++i) {
    const ImageView& s = hwc[i];
    const ImageView& d = chw[i];
    for (int32_t c = 0; c < s.channels; ++c) {
      for (int32_t y = 0; y < s.height; ++y) {
        for (int32_t x = 0; x < s.width; ++x) d.row<uint8_t>(y, c)[x] = s.row<uint8_t>(y)[x * s.channels + c];
      }
    }
  }
  return chw;
}

std::vector<ImageShape> mixed_shapes() {
  return {ImageShape{1, 1, 1}, ImageShape{2, 3, 3}, ImageShape{37, 211, 4}, ImageShape{640, 480, 3},
          ImageShape{129, 1, 1}, ImageShape{1, 300, 3}, ImageShape{1001, 257, 1}};
}

// All sums are exact integers, so the split into row blocks over threads cannot change a bit.
TEST(QualityCpu, ThreadedMatchesUnthreaded) {
  const VarShapeBatch batch = test::random_batch(mixed_shapes(), 11);
  ThreadPool pool(2);
  for (const bool bgr : {false, true}) {
    const auto serial = measure(batch.view(), bgr, nullptr);
    const auto threaded = measure(batch.view(), bgr, &pool);
    for (size_t i = 0; i < serial.size(); ++i) expect_identical(serial[i], threaded[i], "image " + std::to_string(i));
  }
}

TEST(QualityCpu, SingleLargeImageThreaded) {
  const VarShapeBatch batch = test::random_batch({ImageShape{1920, 1080, 3}}, 12);
  ThreadPool pool(2);
  ThreadPool pool3(3);
  const auto serial = measure(batch.view(), false, nullptr);
  expect_identical(serial[0], measure(batch.view(), false, &pool)[0], "2 threads");
  expect_identical(serial[0], measure(batch.view(), false, &pool3)[0], "3 threads");
}

TEST(QualityCpu, ChwMatchesHwc) {
  const VarShapeBatch hwc = test::random_batch(mixed_shapes(), 13);
  const VarShapeBatch chw = to_chw(hwc);
  for (const bool bgr : {false, true}) {
    const auto a = measure(hwc.view(), bgr, nullptr);
    const auto b = measure(chw.view(), bgr, nullptr);
    for (size_t i = 0; i < a.size(); ++i) expect_identical(a[i], b[i], "image " + std::to_string(i));
  }
}

// Each image's metrics are those of the image measured alone.
TEST(QualityCpu, BatchMatchesSingles) {
  const VarShapeBatch batch = test::random_batch(mixed_shapes(), 14);
  const auto all = measure(batch.view(), false, nullptr);
  for (int64_t i = 0; i < batch.count(); ++i) {
    const VarShapeBatch one = VarShapeBatch::wrap(std::vector<ImageView>{batch[i]});
    expect_identical(all[static_cast<size_t>(i)], measure(one.view(), false, nullptr)[0], "image " + std::to_string(i));
  }
}

// bgr swaps the weights of channels 0 and 2.
TEST(QualityCpu, BgrSwapsRedAndBlue) {
  VarShapeBatch batch = test::filled_batch({ImageShape{4, 4, 3}}, 0);
  for (int32_t y = 0; y < 4; ++y) {
    for (int32_t x = 0; x < 4; ++x) batch[0].row<uint8_t>(y)[3 * x] = 255;  // channel 0 only
  }
  const auto rgb = measure(batch.view(), false, nullptr);
  const auto bgr = measure(batch.view(), true, nullptr);
  EXPECT_EQ(rgb[0].brightness, static_cast<double>((255 * 9798 + 16384) >> 15));  // red: 76
  EXPECT_EQ(bgr[0].brightness, static_cast<double>((255 * 3735 + 16384) >> 15));  // blue: 29
}

TEST(QualityCpu, EmptyBatch) {
  QualityMetrics m;
  EXPECT_TRUE(quality_measure(QualityParams{}, VarShapeBatchView{}, &m).is_ok());
}

}  // namespace
}  // namespace kiln
