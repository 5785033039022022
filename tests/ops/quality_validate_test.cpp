// Quality: bad calls are InvalidArgument before any backend runs.
#include <gtest/gtest.h>

#include <vector>

#include "common/image_ops_util.h"
#include "kiln/exec.h"
#include "ops/quality.h"

namespace kiln {
namespace {

Errc measure_errc(const VarShapeBatchView& in, QualityMetrics* results, const VarShapeBatchView& out = {}) {
  QualityParams params;
  const OpCall call{OpKind::kQuality, &params, in, out, results};
  const Status via_validate = op_validate(call);
  const Status via_run = op_run(call);
  EXPECT_EQ(via_validate.code(), via_run.code());
  return via_run.code();
}

TEST(QualityValidate, AcceptsU8With134Channels) {
  for (const int32_t c : {1, 3, 4}) {
    for (const Layout layout : {Layout::kHWC, Layout::kCHW}) {
      const VarShapeBatch batch = test::random_batch({ImageShape{5, 4, c, PixelType::kU8, layout}}, 1);
      QualityMetrics m;
      EXPECT_EQ(measure_errc(batch.view(), &m), Errc::kOk) << c;
    }
  }
}

TEST(QualityValidate, RejectsFloatInputs) {
  for (const PixelType type : {PixelType::kF32, PixelType::kF16}) {
    const VarShapeBatch batch = test::random_batch({ImageShape{5, 4, 3, type}}, 1);
    QualityMetrics m;
    EXPECT_EQ(measure_errc(batch.view(), &m), Errc::kInvalidArgument);
  }
}

TEST(QualityValidate, RejectsChannelCounts) {
  for (const int32_t c : {2, 5}) {
    const VarShapeBatch batch = test::random_batch({ImageShape{5, 4, c}}, 1);
    QualityMetrics m;
    EXPECT_EQ(measure_errc(batch.view(), &m), Errc::kInvalidArgument) << c;
  }
}

TEST(QualityValidate, RejectsMissingResults) {
  const VarShapeBatch batch = test::random_batch({ImageShape{5, 4, 1}}, 1);
  EXPECT_EQ(measure_errc(batch.view(), nullptr), Errc::kInvalidArgument);
}

TEST(QualityValidate, RejectsOutputBatch) {
  const VarShapeBatch batch = test::random_batch({ImageShape{5, 4, 1}}, 1);
  const VarShapeBatch out = test::filled_batch({ImageShape{5, 4, 1}});
  QualityMetrics m;
  EXPECT_EQ(measure_errc(batch.view(), &m, out.view()), Errc::kInvalidArgument);
}

TEST(QualityValidate, RejectsBadImages) {
  QualityMetrics m;
  ImageView empty;
  empty.data = &m;
  empty.width = 0;
  empty.height = 3;
  empty.row_stride = 0;
  const VarShapeBatch batch = VarShapeBatch::wrap(std::vector<ImageView>{empty});
  EXPECT_EQ(measure_errc(batch.view(), &m), Errc::kInvalidArgument);
}

TEST(QualityValidate, RejectsMissingParams) {
  const VarShapeBatch batch = test::random_batch({ImageShape{5, 4, 1}}, 1);
  QualityMetrics m;
  const OpCall call{OpKind::kQuality, nullptr, batch.view(), VarShapeBatchView{}, &m};
  EXPECT_EQ(op_run(call).code(), Errc::kInvalidArgument);
}

// One bad image anywhere in the batch rejects the call; quality_validate alone says so too.
TEST(QualityValidate, OneBadImageInBatch) {
  VarShapeBatch good = test::random_batch({ImageShape{5, 4, 3}, ImageShape{7, 2, 1}}, 1);
  VarShapeBatch bad = test::random_batch({ImageShape{5, 4, 2}}, 1);
  std::vector<ImageView> images = good.images();
  images.push_back(bad[0]);
  const VarShapeBatch mixed = VarShapeBatch::wrap(images);
  std::vector<QualityMetrics> results(3);
  QualityParams params;
  const OpCall call{OpKind::kQuality, &params, mixed.view(), VarShapeBatchView{}, results.data()};
  EXPECT_EQ(quality_validate(call).code(), Errc::kInvalidArgument);
}

}  // namespace
}  // namespace kiln
