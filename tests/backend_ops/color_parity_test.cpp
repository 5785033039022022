// The color family on every GPU backend (OpenCL on PoCL here; CUDA where there is a device) against the CPU
// reference, on random var-shape batches: byte-identical (copies move bits; gray is the same integer or float
// operations in the same order on every backend).
#include <gtest/gtest.h>

#include <cstring>
#include <vector>

#include "common/gpu_parity.h"
#include "common/image_ops_util.h"
#include "kiln/image_ops.h"
#include "kiln/ops/color.h"
#include "ops/color.h"

namespace kiln {
namespace {

std::vector<ImageShape> shapes_of(int32_t channels, PixelType type, Layout layout) {
  std::vector<ImageShape> shapes;
  for (auto [w, h] : std::vector<std::pair<int32_t, int32_t>>{{1, 1}, {5, 3}, {31, 17}, {64, 40}, {130, 9}}) {
    shapes.push_back({w, h, channels, type, layout});
  }
  return shapes;
}

using ColorParity = test::GpuParityTest;

TEST_F(ColorParity, GpuMatchesCpuExactly) {
  const struct {
    ColorConversion conversion;
    int32_t in_channels, out_channels;
    Layout in_layout, out_layout;
  } cases[] = {{ColorConversion::kSwapRB, 3, 3, Layout::kHWC, Layout::kHWC},
               {ColorConversion::kSwapRB, 4, 4, Layout::kHWC, Layout::kHWC},
               {ColorConversion::kRgbToGray, 3, 1, Layout::kHWC, Layout::kHWC},
               {ColorConversion::kRgbToGray, 4, 1, Layout::kHWC, Layout::kHWC},
               {ColorConversion::kBgrToGray, 3, 1, Layout::kCHW, Layout::kHWC},
               {ColorConversion::kGrayToRgb, 1, 3, Layout::kHWC, Layout::kHWC},
               {ColorConversion::kHwcToChw, 1, 1, Layout::kHWC, Layout::kCHW},
               {ColorConversion::kHwcToChw, 3, 3, Layout::kHWC, Layout::kCHW},
               {ColorConversion::kChwToHwc, 4, 4, Layout::kCHW, Layout::kHWC}};
  uint32_t seed = 100;
  for (auto& named : m_backends) {
    for (const auto& k : cases) {
      for (PixelType type : {PixelType::kU8, PixelType::kF16, PixelType::kF32}) {
        ColorParams params;
        params.conversion = k.conversion;
        const auto in = test::random_batch(shapes_of(k.in_channels, type, k.in_layout), ++seed);
        const auto want = test::filled_batch(shapes_of(k.out_channels, type, k.out_layout));
        const auto got = test::filled_batch(shapes_of(k.out_channels, type, k.out_layout), 0x5A);
        ASSERT_NO_FATAL_FAILURE(test::parity_run(
            *m_cpu, named, OpCall{OpKind::kColor, &params, in.view(), want.view(), nullptr}, got.view()));
        for (int64_t i = 0; i < in.count(); ++i) {
          EXPECT_EQ(std::memcmp(want[i].data, got[i].data, want[i].packed_bytes()), 0)
              << named.name << " " << color_conversion_name(k.conversion) << " " << pixel_type_name(type)
              << " image " << i << " (" << in[i].width << "x" << in[i].height << "x" << k.in_channels << ")";
        }
      }
    }
  }
}

// Both ways between NV12 and RGB: NVDEC's frames on the device go to RGB, composites for NVENC's device frames come
// back. Every matrix and range, a chroma plane right after the luma and one after padding rows (surfaces taller than
// the picture), odd heights, several frames in one batch. Only the planes' rows of an NV12 output are compared (a
// host batch's rows between them come back from a GPU as whatever its buffer held).
TEST_F(ColorParity, Nv12BothWaysMatchTheCpuExactly) {
  const std::vector<std::pair<int32_t, int32_t>> sizes = {{2, 1}, {6, 5}, {32, 18}, {130, 9}, {64, 48}};
  const int32_t tallest = 48;
  uint32_t seed = 900;
  for (auto& named : m_backends) {
    for (ColorConversion conversion : {ColorConversion::kNv12ToRgb, ColorConversion::kRgbToNv12}) {
      const bool to_nv12 = conversion == ColorConversion::kRgbToNv12;
      for (YuvMatrix matrix : {YuvMatrix::kBt601, YuvMatrix::kBt709, YuvMatrix::kBt2020}) {
        for (bool full : {false, true}) {
          for (int32_t padding : {0, 7}) {
            ColorParams params;
            params.conversion = conversion;
            params.yuv_matrix = matrix;
            params.yuv_full_range = full;
            // One chroma row for the whole batch: each frame's view is cut to end where its chroma plane ends.
            params.nv12_chroma_row = padding > 0 ? tallest + padding : 0;
            std::vector<ImageShape> nv12_shapes, rgb_shapes;
            for (auto [w, h] : sizes) {
              const int32_t chroma_row = padding > 0 ? tallest + padding : h;
              nv12_shapes.push_back({w, chroma_row + (h + 1) / 2, 1, PixelType::kU8, Layout::kHWC});
              rgb_shapes.push_back({w, h, 3, PixelType::kU8, Layout::kHWC});
            }
            const auto in = test::random_batch(to_nv12 ? rgb_shapes : nv12_shapes, ++seed);
            const auto want = test::filled_batch(to_nv12 ? nv12_shapes : rgb_shapes, 0x33);
            const auto got = test::filled_batch(to_nv12 ? nv12_shapes : rgb_shapes, 0x44);
            ASSERT_NO_FATAL_FAILURE(test::parity_run(
                *m_cpu, named, OpCall{OpKind::kColor, &params, in.view(), want.view(), nullptr}, got.view()));
            for (int64_t i = 0; i < in.count(); ++i) {
              const auto* w = static_cast<const uint8_t*>(want[i].data);
              const auto* g = static_cast<const uint8_t*>(got[i].data);
              const int32_t h = sizes[static_cast<size_t>(i)].second, width = want[i].width;
              const size_t luma = static_cast<size_t>(width) * h, chroma = static_cast<size_t>(width) * ((h + 1) / 2);
              const size_t from = static_cast<size_t>(width) * (padding > 0 ? tallest + padding : h);
              const bool same = to_nv12 ? std::memcmp(w, g, luma) == 0 && std::memcmp(w + from, g + from, chroma) == 0
                                        : std::memcmp(w, g, want[i].packed_bytes()) == 0;
              EXPECT_TRUE(same) << named.name << " " << color_conversion_name(conversion) << " "
                                << enum_name(kYuvMatrixNames, matrix) << (full ? " full" : " limited") << " padding "
                                << padding << " image " << i << " (" << width << "x" << h << ")";
            }
          }
        }
      }
    }
  }
}

}  // namespace
}  // namespace kiln
