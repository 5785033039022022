// mask: activation, argmax and probability thresholds against a naive double-precision reference, the
// deterministic exp against libm, and CPU threaded vs single-threaded.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <vector>

#include "common/image_ops_util.h"
#include "core/thread_pool.h"
#include "ops/cpu/mask_loops.h"
#include "ops/image_desc.h"
#include "ops/mask.h"
#include "ops/mask_test_util.h"

namespace kiln {
namespace {

using test::logits_batch;
using test::masks_for;
using test::run_cpu;

// The probability of class k at (x, y) in double precision.
double probability(const ImageView& in, int32_t x, int32_t y, int32_t k, MaskActivation act) {
  const int32_t c_count = in.channels;
  if (act == MaskActivation::kAuto) act = c_count == 1 ? MaskActivation::kSigmoid : MaskActivation::kSoftmax;
  const double l = test::pixel_value(in, x, y, k);
  if (act == MaskActivation::kNone) return l;
  if (act == MaskActivation::kSigmoid) return 1.0 / (1.0 + std::exp(-l));
  double mx = -INFINITY;
  for (int32_t c = 0; c < c_count; ++c) mx = std::max(mx, static_cast<double>(test::pixel_value(in, x, y, c)));
  double sum = 0;
  for (int32_t c = 0; c < c_count; ++c) sum += std::exp(test::pixel_value(in, x, y, c) - mx);
  return std::exp(l - mx) / sum;
}

struct ThresholdCase {
  int32_t channels;
  PixelType type;
  MaskActivation activation;
  int32_t target;
  float threshold;
  double band;  // decisions within this distance of the threshold are not compared (float vs double rounding)
};

TEST(MaskReference, ThresholdOnTheProbability) {
  // softmax: kiln's float sum of exp differences (~1-2 ulp each) vs double: |p - t| < 1e-5 is left out.
  // sigmoid: the threshold is an exact logit bound (computed in double), so only ~1e-12 is left out.
  const std::vector<ThresholdCase> cases = {
      {1, PixelType::kF32, MaskActivation::kAuto, -1, 0.5f, 1e-12},
      {1, PixelType::kF32, MaskActivation::kSigmoid, 0, 0.83f, 1e-12},
      {1, PixelType::kF16, MaskActivation::kAuto, 0, 0.2f, 1e-12},
      {3, PixelType::kF32, MaskActivation::kSigmoid, 2, 0.7f, 1e-12},
      {3, PixelType::kF32, MaskActivation::kAuto, 1, 0.4f, 1e-5},
      {4, PixelType::kF16, MaskActivation::kSoftmax, 3, 0.25f, 1e-5},
      {21, PixelType::kF32, MaskActivation::kSoftmax, 7, 0.1f, 1e-5},
      {2, PixelType::kF32, MaskActivation::kNone, 1, 0.5f, 0.0},
  };
  uint32_t seed = 10;
  for (const auto& c : cases) {
    SCOPED_TRACE(testing::Message() << "C=" << c.channels << " target=" << c.target << " t=" << c.threshold);
    const bool none = c.activation == MaskActivation::kNone;
    const auto in = logits_batch({{37, 23}, {64, 64}, {5, 1}}, c.channels, c.type, seed++, none ? 0.0f : -4.0f,
                                 none ? 1.0f : 4.0f);
    const auto out = masks_for(in);
    MaskParams params;
    params.activation = c.activation;
    params.target_class = c.target;
    params.threshold = c.threshold;
    params.foreground = 200;
    ASSERT_TRUE(run_cpu(params, in, out).is_ok());
    int64_t compared = 0;
    int64_t on = 0;
    for (int64_t i = 0; i < in.count(); ++i) {
      for (int32_t y = 0; y < in[i].height; ++y) {
        for (int32_t x = 0; x < in[i].width; ++x) {
          const double p = probability(in[i], x, y, c.target < 0 ? 0 : c.target, c.activation);
          const uint8_t got = out[i].row<uint8_t>(y)[x];
          ASSERT_TRUE(got == 0 || got == 200) << int(got);
          if (std::fabs(p - c.threshold) <= c.band) continue;
          ++compared;
          on += got != 0;
          ASSERT_EQ(got != 0, p >= c.threshold) << "image " << i << " at " << x << "," << y << " p=" << p;
        }
      }
    }
    EXPECT_GT(compared, 2000);
    EXPECT_GT(on, 0);
    EXPECT_LT(on, compared);
  }
}

TEST(MaskReference, ArgmaxIsTheClassOfHighestProbability) {
  for (int32_t channels : {2, 3, 4, 21}) {
    for (PixelType type : {PixelType::kF32, PixelType::kF16}) {
      const auto in = logits_batch({{31, 17}, {8, 40}}, channels, type, 100 + channels);
      const auto out = masks_for(in);
      ASSERT_TRUE(run_cpu(MaskParams{}, in, out).is_ok());
      for (int64_t i = 0; i < in.count(); ++i) {
        for (int32_t y = 0; y < in[i].height; ++y) {
          for (int32_t x = 0; x < in[i].width; ++x) {
            int32_t best = 0;
            for (int32_t c = 1; c < channels; ++c) {
              if (probability(in[i], x, y, c, MaskActivation::kSoftmax) >
                  probability(in[i], x, y, best, MaskActivation::kSoftmax)) {
                best = c;
              }
            }
            ASSERT_EQ(out[i].row<uint8_t>(y)[x], best) << channels << " channels, " << x << "," << y;
          }
        }
      }
    }
  }
}

TEST(MaskReference, ArgmaxTiesGoToTheLowestClass) {
  auto in = logits_batch({{4, 1}}, 3, PixelType::kF32, 1);
  const float values[3][4] = {{1, 2, 3, NAN}, {1, 5, 3, 0}, {0, 5, 3, NAN}};
  for (int c = 0; c < 3; ++c) std::memcpy(in[0].row<float>(0, c), values[c], sizeof(values[c]));
  const auto out = masks_for(in);
  ASSERT_TRUE(run_cpu(MaskParams{}, in, out).is_ok());
  const uint8_t* row = out[0].row<uint8_t>(0);
  EXPECT_EQ(row[0], 0);  // 1, 1, 0
  EXPECT_EQ(row[1], 1);  // 2, 5, 5
  EXPECT_EQ(row[2], 0);  // 3, 3, 3
  EXPECT_EQ(row[3], 1);  // NaN, 0, NaN: NaN never wins
}

// The CPU's row-wise argmax (generic and AVX2 variants, whole vectors and tails) against the per-pixel decision
// every backend shares, on logits full of ties and NaNs.
TEST(MaskReference, ArgmaxRowsEqualThePerPixelDecision) {
  auto in = logits_batch({{37, 6}}, 21, PixelType::kF32, 7);
  uint32_t state = 1;
  for (int32_t c = 0; c < 21; ++c) {
    for (int32_t y = 0; y < 6; ++y) {
      float* row = in[0].row<float>(y, c);
      for (int32_t x = 0; x < 37; ++x) {
        state = state * 1664525u + 1013904223u;
        const uint32_t pick = state >> 28;
        if (pick < 5) row[x] = static_cast<float>(pick);  // many equal values across classes
        if (pick == 5) row[x] = NAN;
      }
    }
  }
  const KilnImageDesc d = image_desc(in[0]);
  const auto* base = static_cast<const uint8_t*>(in[0].data);
  const KilnMaskParams p = mask_params_resolve(MaskParams{}, 21);
  const auto out = masks_for(in);
  ASSERT_TRUE(run_cpu(MaskParams{}, in, out).is_ok());
  std::vector<float> best(37);
  std::vector<int32_t> id(37);
  std::vector<uint8_t> generic_row(37), avx2_row(37);
  const bool avx2 = __builtin_cpu_supports("avx2");
  for (int32_t y = 0; y < 6; ++y) {
    generic::mask_argmax_row(base, d, y, generic_row.data(), best.data(), id.data());
    if (avx2) avx2::mask_argmax_row(base, d, y, avx2_row.data(), best.data(), id.data());
    for (int32_t x = 0; x < 37; ++x) {
      const uint8_t expected = kiln_mask_decide(base, d, x, y, p);
      ASSERT_EQ(out[0].row<uint8_t>(y)[x], expected) << x << "," << y;
      ASSERT_EQ(generic_row[static_cast<size_t>(x)], expected) << x << "," << y;
      if (avx2) {
        ASSERT_EQ(avx2_row[static_cast<size_t>(x)], expected) << x << "," << y;
      }
    }
  }
}

TEST(MaskReference, SigmoidThresholdIsExactAtTheBoundary) {
  for (float t : {0.5f, 0.3f, 0.9f, 0.01f, 0.999f}) {
    const float bound = mask_logit_threshold(t);
    const float below = std::nextafter(bound, -INFINITY);
    // In exact arithmetic sigmoid(l) >= t <=> l >= log(t / (1 - t)); checked on the logit side in long double
    // (sigmoid itself rounds to t next to the boundary).
    const long double td = t;
    const long double logit = std::log(td / (1.0L - td));
    EXPECT_GE(static_cast<long double>(bound), logit) << t;
    EXPECT_LT(static_cast<long double>(below), logit) << t;
    auto in = logits_batch({{2, 1}}, 1, PixelType::kF32, 2);
    in[0].row<float>(0)[0] = bound;
    in[0].row<float>(0)[1] = below;
    const auto out = masks_for(in);
    MaskParams params;
    params.threshold = t;
    ASSERT_TRUE(run_cpu(params, in, out).is_ok());
    EXPECT_EQ(out[0].row<uint8_t>(0)[0], 255) << t;
    EXPECT_EQ(out[0].row<uint8_t>(0)[1], 0) << t;
  }
}

TEST(MaskReference, DeterministicExpIsAccurate) {
  double worst = 0;
  for (int64_t k = 0; k <= 2000000; ++k) {
    const float x = -87.0f + static_cast<float>(k) * (88.72f + 87.0f) / 2000000.0f;
    const double want = std::exp(static_cast<double>(x));
    const double got = kiln_expf(x);
    worst = std::max(worst, std::fabs(got - want) / want);
  }
  EXPECT_LT(worst, 3.0e-7) << "relative error (2.5 ulp)";
  EXPECT_EQ(kiln_expf(0.0f), 1.0f);
  EXPECT_EQ(kiln_expf(-100.0f), 0.0f);
  EXPECT_TRUE(std::isinf(kiln_expf(89.0f)));
  EXPECT_TRUE(std::isnan(kiln_expf(NAN)));
}

TEST(MaskReference, ThreadedMatchesSingleThreaded) {
  ThreadPool pool(2);
  for (MaskSmoothing smoothing : {MaskSmoothing::kNone, MaskSmoothing::kMedian, MaskSmoothing::kOpen,
                                  MaskSmoothing::kClose}) {
    for (int32_t channels : {1, 3}) {
      const auto in = logits_batch({{61, 33}, {7, 90}, {128, 3}}, channels, PixelType::kF32, 7 + channels);
      const auto a = masks_for(in);
      const auto b = masks_for(in);
      MaskParams params;
      params.smoothing = smoothing;
      params.radius = 2;
      params.largest_component = channels == 1;
      const OpCall call_a{OpKind::kMask, &params, in.view(), a.view(), nullptr};
      const OpCall call_b{OpKind::kMask, &params, in.view(), b.view(), nullptr};
      ASSERT_TRUE(op_validate(call_a).is_ok());
      ASSERT_TRUE(mask_cpu(call_a, nullptr).is_ok());
      ASSERT_TRUE(mask_cpu(call_b, &pool).is_ok());
      for (int64_t i = 0; i < a.count(); ++i) {
        EXPECT_EQ(test::image_diff(a[i], b[i]).over, 0) << mask_smoothing_name(smoothing) << " image " << i;
      }
    }
  }
}

TEST(MaskReference, StridedViewsAndEmptyBatch) {
  // A crop of a larger logits image (row stride > width) into a strided output gives the packed result.
  const auto big = logits_batch({{40, 30}}, 3, PixelType::kF32, 77);
  ImageView crop = big[0].crop(5, 4, 20, 10);
  const VarShapeBatch in_crop = VarShapeBatch::wrap({crop});
  auto packed_in = logits_batch({{20, 10}}, 3, PixelType::kF32, 1);
  for (int32_t c = 0; c < 3; ++c) {
    for (int32_t y = 0; y < 10; ++y) std::memcpy(packed_in[0].row<float>(y, c), crop.row<float>(y, c), 20 * 4);
  }
  std::vector<uint8_t> wide(32 * 10, 0xCD);
  ImageView strided = image_view_packed(wide.data(), 20, 10, 1, PixelType::kU8);
  strided.row_stride = 32;
  const VarShapeBatch out_strided = VarShapeBatch::wrap({strided});
  const auto out_packed = masks_for(packed_in);
  MaskParams params;
  params.smoothing = MaskSmoothing::kMedian;
  ASSERT_TRUE(run_cpu(params, in_crop, out_strided).is_ok());
  ASSERT_TRUE(run_cpu(params, packed_in, out_packed).is_ok());
  EXPECT_EQ(test::image_diff(out_strided[0], out_packed[0]).over, 0);
  EXPECT_EQ(wide[25], 0xCD);  // padding untouched
  EXPECT_TRUE(run_cpu(params, VarShapeBatch(), VarShapeBatch()).is_ok());
}

}  // namespace
}  // namespace kiln
