// mask: bad shapes, types and parameters give InvalidArgument (through op_run, before any backend); names.
#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "common/image_ops_util.h"
#include "kiln/image_ops.h"
#include "kiln/ops/mask.h"
#include "ops/mask.h"

namespace kiln {
namespace {

struct Call {
  VarShapeBatch in;
  VarShapeBatch out;
};

Call make_call(int32_t channels, PixelType in_type = PixelType::kF32, Layout layout = Layout::kCHW,
               int32_t out_channels = 1, PixelType out_type = PixelType::kU8, int32_t out_width = 16) {
  Call c;
  c.in = test::random_batch({{16, 8, channels, in_type, layout}, {9, 5, channels, in_type, layout}}, 3, -2.0f, 2.0f);
  c.out = test::filled_batch({{out_width, 8, out_channels, out_type, Layout::kHWC}, {9, 5, out_channels, out_type}});
  return c;
}

Errc run(const MaskParams& params, const Call& c) {
  return mask_postprocess(params, c.in.view(), c.out.view(), test::cpu_exec()).code();
}

TEST(MaskValidate, AcceptsGoodCalls) {
  EXPECT_EQ(run(MaskParams{}, make_call(3)), Errc::kOk);
  EXPECT_EQ(run(MaskParams{}, make_call(1)), Errc::kOk);
  EXPECT_EQ(run(MaskParams{}, make_call(1, PixelType::kF32, Layout::kHWC)), Errc::kOk);  // 1 channel: same memory
  EXPECT_EQ(run(MaskParams{}, make_call(4, PixelType::kF16)), Errc::kOk);
  MaskParams p;
  p.target_class = 2;
  p.smoothing = MaskSmoothing::kClose;
  p.radius = kMaskMaxRadius;
  p.largest_component = true;
  EXPECT_EQ(run(p, make_call(3)), Errc::kOk);
}

TEST(MaskValidate, RejectsBadTypesAndShapes) {
  EXPECT_EQ(run(MaskParams{}, make_call(3, PixelType::kU8)), Errc::kInvalidArgument);             // u8 logits
  EXPECT_EQ(run(MaskParams{}, make_call(3, PixelType::kF32, Layout::kHWC)), Errc::kInvalidArgument);  // not planar
  EXPECT_EQ(run(MaskParams{}, make_call(3, PixelType::kF32, Layout::kCHW, 2)), Errc::kInvalidArgument);  // out C 2
  EXPECT_EQ(run(MaskParams{}, make_call(3, PixelType::kF32, Layout::kCHW, 3)), Errc::kInvalidArgument);
  EXPECT_EQ(run(MaskParams{}, make_call(3, PixelType::kF32, Layout::kCHW, 1, PixelType::kF32)),
            Errc::kInvalidArgument);  // float output
  EXPECT_EQ(run(MaskParams{}, make_call(3, PixelType::kF32, Layout::kCHW, 1, PixelType::kU8, 15)),
            Errc::kInvalidArgument);  // size mismatch

  // Count mismatch.
  Call c = make_call(3);
  const VarShapeBatch one_out = VarShapeBatch::wrap({c.out[0]});
  EXPECT_EQ(mask_postprocess(MaskParams{}, c.in.view(), one_out.view()).code(), Errc::kInvalidArgument);
  // Mixed channel counts.
  const VarShapeBatch mixed =
      test::random_batch({{16, 8, 3, PixelType::kF32, Layout::kCHW}, {9, 5, 2, PixelType::kF32, Layout::kCHW}}, 1);
  EXPECT_EQ(mask_postprocess(MaskParams{}, mixed.view(), c.out.view()).code(), Errc::kInvalidArgument);
  // Too many channels.
  Call wide;
  wide.in = test::random_batch({{4, 4, kMaskMaxChannels + 1, PixelType::kF32, Layout::kCHW}}, 1);
  wide.out = test::filled_batch({{4, 4, 1, PixelType::kU8}});
  EXPECT_EQ(run(MaskParams{}, wide), Errc::kInvalidArgument);
  // Results pointer instead of an output.
  int dummy = 0;
  MaskParams p;
  const OpCall bad{OpKind::kMask, &p, c.in.view(), c.out.view(), &dummy};
  EXPECT_EQ(op_validate(bad).code(), Errc::kInvalidArgument);
}

TEST(MaskValidate, RejectsBadParameters) {
  const Call c3 = make_call(3);
  const Call c1 = make_call(1);
  for (float t : {0.0f, 1.0f, -0.5f, 1.5f, NAN}) {
    MaskParams p;
    p.threshold = t;
    EXPECT_EQ(run(p, c3), Errc::kInvalidArgument) << t;
    EXPECT_EQ(run(p, c1), Errc::kInvalidArgument) << t;
  }
  for (int32_t r : {-1, kMaskMaxRadius + 1}) {
    MaskParams p;
    p.smoothing = MaskSmoothing::kMedian;
    p.radius = r;
    EXPECT_EQ(run(p, c3), Errc::kInvalidArgument) << r;
  }
  {
    MaskParams p;
    p.radius = -1;  // invalid even without smoothing
    EXPECT_EQ(run(p, c3), Errc::kInvalidArgument);
  }
  for (int32_t target : {3, 4, -2}) {
    MaskParams p;
    p.target_class = target;
    EXPECT_EQ(run(p, c3), Errc::kInvalidArgument) << target;
  }
  {
    MaskParams p;
    p.target_class = 1;
    EXPECT_EQ(run(p, c1), Errc::kInvalidArgument);  // target_class >= C (1)
  }
  {
    MaskParams p;
    p.activation = MaskActivation::kSoftmax;
    EXPECT_EQ(run(p, c1), Errc::kInvalidArgument);  // softmax of one channel
  }
  {
    MaskParams p;
    p.foreground = 0;
    EXPECT_EQ(run(p, c3), Errc::kInvalidArgument);
  }
  {
    MaskParams p;
    p.smoothing = static_cast<MaskSmoothing>(9);
    EXPECT_EQ(run(p, c3), Errc::kInvalidArgument);
    p = MaskParams{};
    p.activation = static_cast<MaskActivation>(9);
    EXPECT_EQ(run(p, c3), Errc::kInvalidArgument);
  }
  const OpCall no_params{OpKind::kMask, nullptr, c3.in.view(), c3.out.view(), nullptr};
  EXPECT_EQ(op_validate(no_params).code(), Errc::kInvalidArgument);
}

TEST(MaskValidate, NamesRoundTrip) {
  for (MaskSmoothing s : {MaskSmoothing::kNone, MaskSmoothing::kMedian, MaskSmoothing::kOpen, MaskSmoothing::kClose}) {
    auto parsed = mask_smoothing_parse(mask_smoothing_name(s));
    ASSERT_TRUE(parsed.is_ok());
    EXPECT_EQ(parsed.value(), s);
  }
  for (MaskActivation a :
       {MaskActivation::kAuto, MaskActivation::kSoftmax, MaskActivation::kSigmoid, MaskActivation::kNone}) {
    auto parsed = mask_activation_parse(mask_activation_name(a));
    ASSERT_TRUE(parsed.is_ok());
    EXPECT_EQ(parsed.value(), a);
  }
  EXPECT_EQ(mask_smoothing_parse("gaussian").status().code(), Errc::kInvalidArgument);
  EXPECT_EQ(mask_activation_parse("relu").status().code(), Errc::kInvalidArgument);
}

}  // namespace
}  // namespace kiln
