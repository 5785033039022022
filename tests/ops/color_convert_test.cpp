// The color family on the CPU: cv::cvtColor (exact for u8), cv::split / cv::merge for layouts, f16 against a
// float reference, threaded vs single-threaded, names, and the negative suite.
#include <gtest/gtest.h>

#include <opencv2/core.hpp>
#include <opencv2/imgproc.hpp>

#include <cstring>
#include <vector>

#include "common/image_ops_util.h"
#include "core/thread_pool.h"
#include "kiln/image_ops.h"
#include "kiln/ops/color.h"
#include "ops/color.h"
#include "ops/image_px.h"

namespace kiln {
namespace {

using test::assert_same_bytes;
using test::cv_view;
using test::filled_batch;
using test::image_diff;
using test::pixel_value;
using test::random_batch;

const std::vector<std::pair<int32_t, int32_t>> kSizes = {{1, 1}, {7, 5}, {33, 17}, {64, 48}, {129, 3}};

std::vector<ImageShape> shapes_of(int32_t channels, PixelType type, Layout layout = Layout::kHWC) {
  std::vector<ImageShape> shapes;
  for (auto [w, h] : kSizes) shapes.push_back({w, h, channels, type, layout});
  return shapes;
}

Status run_cpu(ColorConversion conversion, const VarShapeBatch& in, const VarShapeBatch& out,
               ThreadPool* pool = nullptr) {
  ColorParams params;
  params.conversion = conversion;
  return color_convert(params, in.view(), out.view(), test::cpu_exec(pool));
}

void expect_equal(const ImageView& a, const ImageView& b, double tolerance, const char* what) {
  const auto diff = image_diff(a, b, tolerance);
  EXPECT_EQ(diff.over, 0) << what << ": max " << diff.max_abs << " at " << diff.first;
}

// Each image of `out` equals cv::cvtColor of the same image of `in` with `code`, within `tolerance`.
void expect_cv_color(const VarShapeBatch& in, const VarShapeBatch& out, int code, double tolerance, const char* what) {
  for (int64_t i = 0; i < in.count(); ++i) {
    cv::Mat want;
    cv::cvtColor(cv_view(in[i]), want, code);
    expect_equal(out[i], test::kiln_view(want), tolerance, what);
  }
}

TEST(ColorConvert, SwapRbMatchesOpenCvExactly) {
  for (PixelType type : {PixelType::kU8, PixelType::kF32}) {
    for (int32_t channels : {3, 4}) {
      const auto in = random_batch(shapes_of(channels, type), 11);
      const auto out = filled_batch(shapes_of(channels, type));
      ASSERT_TRUE(run_cpu(ColorConversion::kSwapRB, in, out).is_ok());
      expect_cv_color(in, out, channels == 3 ? cv::COLOR_RGB2BGR : cv::COLOR_RGBA2BGRA, 0.0, "swap_rb");
    }
  }
}

TEST(ColorConvert, GrayU8MatchesOpenCvExactly) {
  for (int32_t channels : {3, 4}) {
    for (ColorConversion conversion : {ColorConversion::kRgbToGray, ColorConversion::kBgrToGray}) {
      const auto in = random_batch(shapes_of(channels, PixelType::kU8), 12);
      const auto out = filled_batch(shapes_of(1, PixelType::kU8));
      ASSERT_TRUE(run_cpu(conversion, in, out).is_ok());
      const bool rgb = conversion == ColorConversion::kRgbToGray;
      const int code = channels == 3 ? (rgb ? cv::COLOR_RGB2GRAY : cv::COLOR_BGR2GRAY)
                                     : (rgb ? cv::COLOR_RGBA2GRAY : cv::COLOR_BGRA2GRAY);
      expect_cv_color(in, out, code, 0.0, color_conversion_name(conversion));
    }
  }
}

// A million random pixels (every rounding edge is hit many times) against OpenCV, both orders.
TEST(ColorConvert, GrayU8ManyPixels) {
  const auto in = random_batch({{1000, 1000, 3, PixelType::kU8}}, 19);
  const auto out = filled_batch({{1000, 1000, 1, PixelType::kU8}});
  for (ColorConversion conversion : {ColorConversion::kRgbToGray, ColorConversion::kBgrToGray}) {
    ASSERT_TRUE(run_cpu(conversion, in, out).is_ok());
    expect_cv_color(in, out, conversion == ColorConversion::kRgbToGray ? cv::COLOR_RGB2GRAY : cv::COLOR_BGR2GRAY, 0.0,
                    color_conversion_name(conversion));
  }
}

// Float gray: OpenCV's SIMD path may fuse multiply-adds; kiln rounds each product. Values 0-255: a few ulp.
TEST(ColorConvert, GrayF32MatchesOpenCv) {
  for (int32_t channels : {3, 4}) {
    const auto in = random_batch(shapes_of(channels, PixelType::kF32), 13);
    const auto out = filled_batch(shapes_of(1, PixelType::kF32));
    ASSERT_TRUE(run_cpu(ColorConversion::kRgbToGray, in, out).is_ok());
    expect_cv_color(in, out, channels == 3 ? cv::COLOR_RGB2GRAY : cv::COLOR_RGBA2GRAY, 1e-4, "rgb_to_gray f32");
  }
}

// OpenCV has no f16 cvtColor: f16 gray is the float formula on the f16 values, rounded to f16 (exact).
TEST(ColorConvert, GrayF16MatchesFloatFormula) {
  const auto in = random_batch(shapes_of(3, PixelType::kF16), 14, 0.0f, 1.0f);
  const auto out = filled_batch(shapes_of(1, PixelType::kF16));
  ASSERT_TRUE(run_cpu(ColorConversion::kBgrToGray, in, out).is_ok());
  for (int64_t i = 0; i < in.count(); ++i) {
    for (int32_t y = 0; y < in[i].height; ++y) {
      for (int32_t x = 0; x < in[i].width; ++x) {
        const float b = pixel_value(in[i], x, y, 0);
        const float g = pixel_value(in[i], x, y, 1);
        const float r = pixel_value(in[i], x, y, 2);
        const float want = kiln_half_to_float(kiln_float_to_half((b * 0.114f + g * 0.587f) + r * 0.299f));
        ASSERT_EQ(pixel_value(out[i], x, y, 0), want) << x << "," << y;
      }
    }
  }
}

TEST(ColorConvert, GrayToRgbMatchesOpenCv) {
  for (PixelType type : {PixelType::kU8, PixelType::kF32}) {
    const auto in = random_batch(shapes_of(1, type), 15);
    const auto out = filled_batch(shapes_of(3, type));
    ASSERT_TRUE(run_cpu(ColorConversion::kGrayToRgb, in, out).is_ok());
    expect_cv_color(in, out, cv::COLOR_GRAY2RGB, 0.0, "gray_to_rgb");
  }
}

TEST(ColorConvert, HwcToChwMatchesSplitAndBack) {
  for (PixelType type : {PixelType::kU8, PixelType::kF16, PixelType::kF32}) {
    for (int32_t channels : {1, 3, 4}) {
      const auto in = random_batch(shapes_of(channels, type), 16);
      const auto planar = filled_batch(shapes_of(channels, type, Layout::kCHW));
      const auto back = filled_batch(shapes_of(channels, type));
      ASSERT_TRUE(run_cpu(ColorConversion::kHwcToChw, in, planar).is_ok());
      ASSERT_TRUE(run_cpu(ColorConversion::kChwToHwc, planar, back).is_ok());
      for (int64_t i = 0; i < in.count(); ++i) {
        std::vector<cv::Mat> split;
        cv::split(cv_view(in[i]), split);
        for (int32_t c = 0; c < channels; ++c) {
          const ImageView& p = planar[i];
          ImageView plane = p;
          plane.data = static_cast<uint8_t*>(p.data) + c * p.plane_stride;
          plane.channels = 1;
          plane.layout = Layout::kHWC;
          ASSERT_EQ(std::memcmp(plane.data, split[static_cast<size_t>(c)].data, p.plane_stride), 0)
              << "plane " << c << " of image " << i;
        }
        cv::Mat merged;
        cv::merge(split, merged);
        ASSERT_EQ(std::memcmp(back[i].data, merged.data, back[i].packed_bytes()), 0) << "image " << i;
      }
    }
  }
}

TEST(ColorConvert, SwapRbInPlace) {
  const auto in = random_batch(shapes_of(4, PixelType::kF32), 17);
  const auto copy = random_batch(shapes_of(4, PixelType::kF32), 17);
  ASSERT_TRUE(run_cpu(ColorConversion::kSwapRB, in, in).is_ok());
  expect_cv_color(copy, in, cv::COLOR_RGBA2BGRA, 0.0, "swap_rb in place");
}

TEST(ColorConvert, ThreadedMatchesSingleThreaded) {
  ThreadPool pool(2);
  const struct {
    ColorConversion conversion;
    int32_t in_channels, out_channels;
    Layout in_layout, out_layout;
  } cases[] = {{ColorConversion::kSwapRB, 3, 3, Layout::kHWC, Layout::kHWC},
               {ColorConversion::kRgbToGray, 4, 1, Layout::kHWC, Layout::kHWC},
               {ColorConversion::kBgrToGray, 3, 1, Layout::kCHW, Layout::kHWC},
               {ColorConversion::kGrayToRgb, 1, 3, Layout::kHWC, Layout::kCHW},
               {ColorConversion::kHwcToChw, 3, 3, Layout::kHWC, Layout::kCHW},
               {ColorConversion::kChwToHwc, 4, 4, Layout::kCHW, Layout::kHWC}};
  for (const auto& k : cases) {
    for (PixelType type : {PixelType::kU8, PixelType::kF16, PixelType::kF32}) {
      const auto in = random_batch(shapes_of(k.in_channels, type, k.in_layout), 18);
      const auto a = filled_batch(shapes_of(k.out_channels, type, k.out_layout));
      const auto b = filled_batch(shapes_of(k.out_channels, type, k.out_layout), 0x11);
      ASSERT_TRUE(run_cpu(k.conversion, in, a).is_ok());
      ASSERT_TRUE(run_cpu(k.conversion, in, b, &pool).is_ok());
      ASSERT_NO_FATAL_FAILURE(assert_same_bytes(a, b)) << color_conversion_name(k.conversion);
    }
  }
}

TEST(ColorConvert, NamesRoundTrip) {
  for (int i = 0; i < 6; ++i) {
    const auto conversion = static_cast<ColorConversion>(i);
    auto parsed = color_conversion_parse(color_conversion_name(conversion));
    ASSERT_TRUE(parsed.is_ok());
    EXPECT_EQ(parsed.value(), conversion);
  }
  EXPECT_EQ(color_conversion_parse("rgb2gray").status().code(), Errc::kInvalidArgument);
}

TEST(ColorConvert, RejectsBadCalls) {
  auto expect_invalid = [](ColorConversion conversion, const VarShapeBatch& in, const VarShapeBatch& out) {
    EXPECT_EQ(run_cpu(conversion, in, out).code(), Errc::kInvalidArgument) << color_conversion_name(conversion);
  };
  const auto rgb = random_batch({{8, 8, 3, PixelType::kU8}}, 1);
  const auto gray = random_batch({{8, 8, 1, PixelType::kU8}}, 1);
  const auto rgb_f32 = random_batch({{8, 8, 3, PixelType::kF32}}, 1);
  const auto rgb_small = random_batch({{8, 7, 3, PixelType::kU8}}, 1);
  const auto two = random_batch({{8, 8, 2, PixelType::kU8}}, 1);
  const auto planar = random_batch({{8, 8, 3, PixelType::kU8, Layout::kCHW}}, 1);
  const auto pair = random_batch({{8, 8, 3, PixelType::kU8}, {8, 8, 3, PixelType::kU8}}, 1);
  expect_invalid(ColorConversion::kSwapRB, rgb, rgb_f32);     // types differ
  expect_invalid(ColorConversion::kSwapRB, rgb, rgb_small);   // sizes differ
  expect_invalid(ColorConversion::kSwapRB, two, two);         // 2 channels
  expect_invalid(ColorConversion::kSwapRB, rgb, pair);        // counts differ
  expect_invalid(ColorConversion::kRgbToGray, rgb, rgb);      // output not 1 channel
  expect_invalid(ColorConversion::kRgbToGray, gray, gray);    // input not 3/4 channels
  expect_invalid(ColorConversion::kGrayToRgb, rgb, rgb);      // input not 1 channel
  expect_invalid(ColorConversion::kGrayToRgb, gray, gray);    // output not 3 channels
  expect_invalid(ColorConversion::kHwcToChw, rgb, rgb);       // output not CHW
  expect_invalid(ColorConversion::kHwcToChw, planar, planar); // input not HWC
  expect_invalid(ColorConversion::kChwToHwc, rgb, planar);    // reversed layouts
  expect_invalid(static_cast<ColorConversion>(42), rgb, rgb);
  ColorParams params;
  EXPECT_EQ(op_validate(OpCall{OpKind::kColor, nullptr, rgb.view(), rgb.view(), nullptr}).code(),
            Errc::kInvalidArgument);
  EXPECT_TRUE(op_validate(OpCall{OpKind::kColor, &params, rgb.view(), rgb.view(), nullptr}).is_ok());
}

}  // namespace
}  // namespace kiln
