// Resize negative tests: bad shapes, types, ROIs and parameters give InvalidArgument before any backend runs.
#include <gtest/gtest.h>

#include "common/image_ops_util.h"
#include "kiln/image_ops.h"
#include "kiln/ops/resize.h"
#include "ops/resize.h"

namespace kiln {
namespace {

Errc run(const ResizeParams& params, const VarShapeBatch& in, const VarShapeBatch& out) {
  ExecOptions exec;
  exec.mode = ExecMode::kCpu;
  return resize(params, in.view(), out.view(), exec).code();
}

TEST(ResizeValidate, AcceptsAGoodCall) {
  auto in = test::random_batch({{10, 10, 3, PixelType::kU8}}, 1);
  auto out = test::filled_batch({{5, 7, 3, PixelType::kU8}});
  EXPECT_EQ(run(ResizeParams{}, in, out), Errc::kOk);
}

TEST(ResizeValidate, RejectsMismatchedCounts) {
  auto in = test::random_batch({{10, 10, 3, PixelType::kU8}, {10, 10, 3, PixelType::kU8}}, 1);
  auto out = test::filled_batch({{5, 7, 3, PixelType::kU8}});
  EXPECT_EQ(run(ResizeParams{}, in, out), Errc::kInvalidArgument);
}

TEST(ResizeValidate, RejectsChannelMismatchAndTwoChannels) {
  auto in = test::random_batch({{10, 10, 3, PixelType::kU8}}, 1);
  auto out = test::filled_batch({{5, 7, 1, PixelType::kU8}});
  EXPECT_EQ(run(ResizeParams{}, in, out), Errc::kInvalidArgument);
  auto in2 = test::random_batch({{10, 10, 2, PixelType::kU8}}, 1);
  auto out2 = test::filled_batch({{5, 7, 2, PixelType::kU8}});
  EXPECT_EQ(run(ResizeParams{}, in2, out2), Errc::kInvalidArgument);
}

TEST(ResizeValidate, RejectsTypes) {
  auto in = test::random_batch({{10, 10, 3, PixelType::kU8}}, 1);
  auto out = test::filled_batch({{5, 7, 3, PixelType::kF32}});
  EXPECT_EQ(run(ResizeParams{}, in, out), Errc::kInvalidArgument);
  auto in16 = test::random_batch({{10, 10, 3, PixelType::kF16}}, 1);
  auto out16 = test::filled_batch({{5, 7, 3, PixelType::kF16}});
  EXPECT_EQ(run(ResizeParams{}, in16, out16), Errc::kInvalidArgument);
}

TEST(ResizeValidate, RejectsLayoutMismatch) {
  auto in = test::random_batch({{10, 10, 3, PixelType::kU8}}, 1);
  auto out = test::filled_batch({{5, 7, 3, PixelType::kU8, Layout::kCHW}});
  EXPECT_EQ(run(ResizeParams{}, in, out), Errc::kInvalidArgument);
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
  ResizeParams params;
  params.interp = static_cast<Interp>(9);
  EXPECT_EQ(run(params, in, out), Errc::kInvalidArgument);
  params = ResizeParams{};
  params.fit = static_cast<ResizeFit>(7);
  EXPECT_EQ(run(params, in, out), Errc::kInvalidArgument);
  OpCall call{OpKind::kResize, nullptr, in.view(), out.view(), nullptr};
  EXPECT_EQ(op_validate(call).code(), Errc::kInvalidArgument);
  EXPECT_EQ(resize_validate(call).code(), Errc::kInvalidArgument);
}

}  // namespace
}  // namespace kiln
