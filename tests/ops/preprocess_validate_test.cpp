// Preprocess negative tests: bad shapes, types and parameters give InvalidArgument before any backend runs.
#include <gtest/gtest.h>

#include <cmath>

#include "common/image_ops_util.h"
#include "kiln/image_ops.h"
#include "kiln/ops/preprocess.h"
#include "ops/preprocess.h"

namespace kiln {
namespace {

Errc run(const PreprocessParams& params, const VarShapeBatch& in, const VarShapeBatch& out) {
  ExecOptions exec;
  exec.mode = ExecMode::kCpu;
  return preprocess(params, in.view(), out.view(), exec).code();
}

TEST(PreprocessValidate, AcceptsGoodCalls) {
  auto in = test::random_batch({{10, 10, 3, PixelType::kU8}}, 1);
  auto out = test::filled_batch({{5, 7, 3, PixelType::kF32, Layout::kCHW}});
  EXPECT_EQ(run(PreprocessParams{}, in, out), Errc::kOk);
  auto out16 = test::filled_batch({{5, 7, 3, PixelType::kF16}});
  EXPECT_EQ(run(PreprocessParams{}, in, out16), Errc::kOk);
}

TEST(PreprocessValidate, RejectsTypesAndLayouts) {
  auto in_f = test::random_batch({{10, 10, 3, PixelType::kF32}}, 1);
  auto out = test::filled_batch({{5, 7, 3, PixelType::kF32}});
  EXPECT_EQ(run(PreprocessParams{}, in_f, out), Errc::kInvalidArgument);
  auto in = test::random_batch({{10, 10, 3, PixelType::kU8}}, 1);
  auto out_u8 = test::filled_batch({{5, 7, 3, PixelType::kU8}});
  EXPECT_EQ(run(PreprocessParams{}, in, out_u8), Errc::kInvalidArgument);
  auto in_chw = test::random_batch({{10, 10, 3, PixelType::kU8, Layout::kCHW}}, 1);
  EXPECT_EQ(run(PreprocessParams{}, in_chw, out), Errc::kInvalidArgument);
}

TEST(PreprocessValidate, RejectsChannelsAndCounts) {
  auto in = test::random_batch({{10, 10, 3, PixelType::kU8}}, 1);
  auto out1 = test::filled_batch({{5, 7, 1, PixelType::kF32}});
  EXPECT_EQ(run(PreprocessParams{}, in, out1), Errc::kInvalidArgument);
  auto out2 = test::filled_batch({{5, 7, 3, PixelType::kF32}, {5, 7, 3, PixelType::kF32}});
  EXPECT_EQ(run(PreprocessParams{}, in, out2), Errc::kInvalidArgument);
  auto in_gray = test::random_batch({{10, 10, 1, PixelType::kU8}}, 1);
  PreprocessParams swap;
  swap.swap_rb = true;
  EXPECT_EQ(run(swap, in_gray, out1), Errc::kInvalidArgument);
  EXPECT_EQ(run(PreprocessParams{}, in_gray, out1), Errc::kOk);
}

TEST(PreprocessValidate, RejectsBadParams) {
  auto in = test::random_batch({{10, 10, 3, PixelType::kU8}}, 1);
  auto out = test::filled_batch({{5, 7, 3, PixelType::kF32}});
  PreprocessParams p;
  p.std[1] = 0.0f;
  EXPECT_EQ(run(p, in, out), Errc::kInvalidArgument);
  p = PreprocessParams{};
  p.mean[0] = NAN;
  EXPECT_EQ(run(p, in, out), Errc::kInvalidArgument);
  p = PreprocessParams{};
  p.scale = INFINITY;
  EXPECT_EQ(run(p, in, out), Errc::kInvalidArgument);
  p = PreprocessParams{};
  p.interp = static_cast<Interp>(42);
  EXPECT_EQ(run(p, in, out), Errc::kInvalidArgument);
  OpCall call{OpKind::kPreprocess, nullptr, in.view(), out.view(), nullptr};
  EXPECT_EQ(preprocess_validate(call).code(), Errc::kInvalidArgument);
}

}  // namespace
}  // namespace kiln
