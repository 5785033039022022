// Preprocess negative tests: bad shapes, types and parameters give InvalidArgument before any backend runs.
#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "common/image_ops_util.h"
#include "kiln/image_ops.h"
#include "kiln/ops/preprocess.h"
#include "ops/preprocess.h"

namespace kiln {
namespace {

Errc run(const PreprocessParams& params, const VarShapeBatch& in, const VarShapeBatch& out) {
  return preprocess(params, in.view(), out.view(), test::cpu_exec()).code();
}

// A random input batch and a filled output batch of these shapes.
Errc run_shapes(const std::vector<ImageShape>& in, const std::vector<ImageShape>& out,
                const PreprocessParams& params = {}) {
  return run(params, test::random_batch(in, 1), test::filled_batch(out));
}

TEST(PreprocessValidate, AcceptsGoodCalls) {
  EXPECT_EQ(run_shapes({{10, 10, 3, PixelType::kU8}}, {{5, 7, 3, PixelType::kF32, Layout::kCHW}}), Errc::kOk);
  EXPECT_EQ(run_shapes({{10, 10, 3, PixelType::kU8}}, {{5, 7, 3, PixelType::kF16}}), Errc::kOk);
}

TEST(PreprocessValidate, RejectsTypesAndLayouts) {
  EXPECT_EQ(run_shapes({{10, 10, 3, PixelType::kF32}}, {{5, 7, 3, PixelType::kF32}}), Errc::kInvalidArgument);
  EXPECT_EQ(run_shapes({{10, 10, 3, PixelType::kU8}}, {{5, 7, 3, PixelType::kU8}}), Errc::kInvalidArgument);
  EXPECT_EQ(run_shapes({{10, 10, 3, PixelType::kU8, Layout::kCHW}}, {{5, 7, 3, PixelType::kF32}}),
            Errc::kInvalidArgument);
}

TEST(PreprocessValidate, RejectsChannelsAndCounts) {
  EXPECT_EQ(run_shapes({{10, 10, 3, PixelType::kU8}}, {{5, 7, 1, PixelType::kF32}}), Errc::kInvalidArgument);
  EXPECT_EQ(run_shapes({{10, 10, 3, PixelType::kU8}}, {{5, 7, 3, PixelType::kF32}, {5, 7, 3, PixelType::kF32}}),
            Errc::kInvalidArgument);
  EXPECT_EQ(run_shapes({{10, 10, 1, PixelType::kU8}}, {{5, 7, 1, PixelType::kF32}}, {.swap_rb = true}),
            Errc::kInvalidArgument);
  EXPECT_EQ(run_shapes({{10, 10, 1, PixelType::kU8}}, {{5, 7, 1, PixelType::kF32}}), Errc::kOk);
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
  EXPECT_EQ(run({.scale = INFINITY}, in, out), Errc::kInvalidArgument);
  EXPECT_EQ(run({.interp = static_cast<Interp>(42)}, in, out), Errc::kInvalidArgument);
  OpCall call{OpKind::kPreprocess, nullptr, in.view(), out.view(), nullptr};
  EXPECT_EQ(preprocess_validate(call).code(), Errc::kInvalidArgument);
}

// NV12 views (PreprocessParams::nv12): luma rows then half as many chroma rows (rounded up), an even width, 3 output
// channels; a view whose rows cannot be split that way is refused, not read past its end.
TEST(PreprocessValidate, Nv12ViewsMustHoldBothPlanes) {
  const PreprocessParams nv12{.nv12 = true};
  const ImageShape out{5, 7, 3, PixelType::kF32, Layout::kCHW};
  EXPECT_EQ(run_shapes({{10, 15, 1, PixelType::kU8}}, {out}, nv12), Errc::kOk);  // 10 x 10
  EXPECT_EQ(run_shapes({{10, 14, 1, PixelType::kU8}}, {out}, nv12), Errc::kOk);  // 10 x 9
  EXPECT_EQ(run_shapes({{2, 2, 1, PixelType::kU8}}, {out}, nv12), Errc::kOk);    // 2 x 1
  EXPECT_EQ(run_shapes({{10, 13, 1, PixelType::kU8}}, {out}, nv12), Errc::kInvalidArgument);
  EXPECT_EQ(run_shapes({{10, 1, 1, PixelType::kU8}}, {out}, nv12), Errc::kInvalidArgument);
  EXPECT_EQ(run_shapes({{9, 15, 1, PixelType::kU8}}, {out}, nv12), Errc::kInvalidArgument);
  EXPECT_EQ(run_shapes({{10, 15, 3, PixelType::kU8}}, {out}, nv12), Errc::kInvalidArgument);
  EXPECT_EQ(run_shapes({{10, 15, 1, PixelType::kU8}}, {{5, 7, 1, PixelType::kF32}}, nv12), Errc::kInvalidArgument);
  EXPECT_EQ(run_shapes({{10, 15, 1, PixelType::kU8}}, {{5, 7, 3, PixelType::kU8}}, nv12), Errc::kInvalidArgument);
  EXPECT_EQ(run_shapes({{10, 15, 1, PixelType::kU8}}, {out}, {.nv12 = true, .yuv_matrix = static_cast<YuvMatrix>(9)}),
            Errc::kInvalidArgument);
}

}  // namespace
}  // namespace kiln
