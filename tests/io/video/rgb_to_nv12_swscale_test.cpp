// kiln's RGB -> NV12 (the color op's rgb_to_nv12: NVENC's device frames of composites) against swscale's conversion
// of the same picture with the writer's flags (what VideoWriter::write gives the encoder for host frames): the two
// paths of one output encode nearly the same picture. swscale filters chroma over more than the 2x2 block, so a
// smooth picture is compared (a photograph's edges differ more in chroma, by design on both sides).
#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "common/image_ops_util.h"
#include "io/video/ffmpeg_util.h"
#include "kiln/image_ops.h"
#include "kiln/ops/color.h"

namespace kiln {
namespace {

constexpr int32_t kPicWidth = 320, kPicHeight = 240;

TEST(RgbToNv12, IsSwscalesConversionWithinALevel) {
  std::vector<uint8_t> rgb(static_cast<size_t>(kPicWidth) * kPicHeight * 3);
  for (int32_t y = 0; y < kPicHeight; ++y) {
    for (int32_t x = 0; x < kPicWidth; ++x) {
      uint8_t* p = &rgb[(static_cast<size_t>(y) * kPicWidth + x) * 3];
      p[0] = static_cast<uint8_t>(30 + x * 190 / kPicWidth);
      p[1] = static_cast<uint8_t>(220 - y * 180 / kPicHeight);
      p[2] = static_cast<uint8_t>(90 + (x + y) * 100 / (kPicWidth + kPicHeight));
    }
  }
  const ImageView in = image_view_packed(rgb.data(), kPicWidth, kPicHeight, 3, PixelType::kU8);
  std::vector<uint8_t> kiln_nv12(static_cast<size_t>(kPicWidth) * kPicHeight * 3 / 2);
  const ImageView out = image_view_packed(kiln_nv12.data(), kPicWidth, kPicHeight * 3 / 2, 1, PixelType::kU8);
  ColorParams params;
  params.conversion = ColorConversion::kRgbToNv12;
  params.yuv_matrix = YuvMatrix::kBt601;  // an untagged output's, as the writer's scaler has it
  ASSERT_TRUE(color_convert(params, VarShapeBatchView{&in, 1}, VarShapeBatchView{&out, 1}, test::cpu_exec()).is_ok());

  SwsContextPtr scaler(sws_getContext(kPicWidth, kPicHeight, AV_PIX_FMT_RGB24, kPicWidth, kPicHeight, AV_PIX_FMT_NV12,
                                      SWS_BILINEAR | SWS_ACCURATE_RND, nullptr, nullptr, nullptr));
  ASSERT_TRUE(scaler);
  std::vector<uint8_t> sws_nv12(kiln_nv12.size());
  const uint8_t* src[4] = {rgb.data(), nullptr, nullptr, nullptr};
  const int src_stride[4] = {kPicWidth * 3, 0, 0, 0};
  uint8_t* dst[4] = {sws_nv12.data(), sws_nv12.data() + static_cast<size_t>(kPicWidth) * kPicHeight, nullptr, nullptr};
  const int dst_stride[4] = {kPicWidth, kPicWidth, 0, 0};
  sws_scale(scaler.get(), src, src_stride, 0, kPicHeight, dst, dst_stride);

  const size_t luma = static_cast<size_t>(kPicWidth) * kPicHeight;
  int worst_luma = 0, worst_chroma = 0;
  double sum_chroma = 0;
  for (size_t i = 0; i < kiln_nv12.size(); ++i) {
    const int d = std::abs(int(kiln_nv12[i]) - int(sws_nv12[i]));
    if (i < luma) {
      worst_luma = std::max(worst_luma, d);
    } else {
      worst_chroma = std::max(worst_chroma, d);
      sum_chroma += d;
    }
  }
  EXPECT_LE(worst_luma, 1);
  EXPECT_LE(worst_chroma, 1);
  EXPECT_LT(sum_chroma / static_cast<double>(kiln_nv12.size() - luma), 0.5);
}

}  // namespace
}  // namespace kiln
