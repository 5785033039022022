// Resize negative tests: bad shapes, types, ROIs and parameters give InvalidArgument before any backend runs.
#include <gtest/gtest.h>

#include <vector>

#include "common/image_ops_util.h"
#include "kiln/image_ops.h"
#include "kiln/ops/resize.h"
#include "ops/resize.h"

namespace kiln {
namespace {

Errc run(const ResizeParams& params, const VarShapeBatch& in, const VarShapeBatch& out) {
  return resize(params, in.view(), out.view(), test::cpu_exec()).code();
}

// Default params on a random input batch and a filled output batch of these shapes.
Errc run_shapes(const std::vector<ImageShape>& in, const std::vector<ImageShape>& out) {
  return run(ResizeParams{}, test::random_batch(in, 1), test::filled_batch(out));
}

TEST(ResizeValidate, AcceptsAGoodCall) {
  EXPECT_EQ(run_shapes({{10, 10, 3, PixelType::kU8}}, {{5, 7, 3, PixelType::kU8}}), Errc::kOk);
}

TEST(ResizeValidate, RejectsMismatchedCounts) {
  EXPECT_EQ(run_shapes({{10, 10, 3, PixelType::kU8}, {10, 10, 3, PixelType::kU8}}, {{5, 7, 3, PixelType::kU8}}),
            Errc::kInvalidArgument);
}

TEST(ResizeValidate, RejectsChannelMismatchAndTwoChannels) {
  EXPECT_EQ(run_shapes({{10, 10, 3, PixelType::kU8}}, {{5, 7, 1, PixelType::kU8}}), Errc::kInvalidArgument);
  EXPECT_EQ(run_shapes({{10, 10, 2, PixelType::kU8}}, {{5, 7, 2, PixelType::kU8}}), Errc::kInvalidArgument);
}

TEST(ResizeValidate, RejectsTypes) {
  EXPECT_EQ(run_shapes({{10, 10, 3, PixelType::kU8}}, {{5, 7, 3, PixelType::kF32}}), Errc::kInvalidArgument);
  EXPECT_EQ(run_shapes({{10, 10, 3, PixelType::kF16}}, {{5, 7, 3, PixelType::kF16}}), Errc::kInvalidArgument);
}

TEST(ResizeValidate, RejectsLayoutMismatch) {
  EXPECT_EQ(run_shapes({{10, 10, 3, PixelType::kU8}}, {{5, 7, 3, PixelType::kU8, Layout::kCHW}}),
            Errc::kInvalidArgument);
}

TEST(ResizeValidate, RejectsRoisOutsideTheImage) {
  auto in = test::random_batch({{10, 10, 3, PixelType::kU8}}, 1);
  auto out = test::filled_batch({{5, 7, 3, PixelType::kU8}});
  for (const RectI roi : {RectI{-1, 0, 5, 5}, RectI{0, -1, 5, 5}, RectI{6, 0, 5, 5}, RectI{0, 6, 5, 5},
                          RectI{0, 0, 0, 5}, RectI{0, 0, 5, 0}, RectI{0, 0, 11, 10}}) {
    ResizeParams params;
    params.rois = &roi;
    EXPECT_EQ(run(params, in, out), Errc::kInvalidArgument) << roi.x << "," << roi.y << "," << roi.width;
  }
  const RectI whole{0, 0, 10, 10};
  ResizeParams params;
  params.rois = &whole;
  EXPECT_EQ(run(params, in, out), Errc::kOk);
}

TEST(ResizeValidate, RejectsBadEnumsAndNullParams) {
  auto in = test::random_batch({{10, 10, 3, PixelType::kU8}}, 1);
  auto out = test::filled_batch({{5, 7, 3, PixelType::kU8}});
  EXPECT_EQ(run({.interp = static_cast<Interp>(9)}, in, out), Errc::kInvalidArgument);
  EXPECT_EQ(run({.fit = static_cast<ResizeFit>(7)}, in, out), Errc::kInvalidArgument);
  OpCall call{OpKind::kResize, nullptr, in.view(), out.view(), nullptr};
  EXPECT_EQ(op_validate(call).code(), Errc::kInvalidArgument);
  EXPECT_EQ(resize_validate(call).code(), Errc::kInvalidArgument);
}

}  // namespace
}  // namespace kiln
