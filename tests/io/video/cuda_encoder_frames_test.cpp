// NVENC's device frames without NVENC (the lent H100/H200 have none, so this is what runs there): FFmpeg's CUDA
// device opens in the primary context after kiln's kernels made it active (FFmpeg refuses an active primary context
// whose scheduling is not blocking sync, unless kiln sets it), and a pool frame filled on the device the way kiln
// segment fills it (the matte op into its luma rows with the encoder's black and white, the chroma rows copied in)
// holds, once FFmpeg brings it down, the planes the host path writes for the same mask (GrayPlanes). Skipped here;
// failing under KILN_REQUIRE_GPU=1.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <optional>
#include <vector>

#include "common/gpu_required.h"
#include "common/image_ops_util.h"
#include "core/backend_block.h"
#include "io/video/cuda_encoder_frames.h"
#include "io/video/gray_planes.h"
#include "kiln/device.h"
#include "kiln/image_ops.h"
#include "kiln/ops/color.h"

extern "C" {
#include <libavutil/hwcontext.h>
}

namespace kiln {
namespace {

constexpr int32_t kFrameWidth = 320, kFrameHeight = 240, kMapSize = 64;
constexpr int kWriterFlags = SWS_BILINEAR | SWS_ACCURATE_RND;  // the writer's

TEST(CudaEncoderFrames, FfmpegOpensTheDeviceAfterKilnsKernelsMadeItsContextActive) {
  Backend* cuda = BackendRegistry::instance().find(BackendKind::kCuda);
  if (cuda == nullptr) KILN_GPU_SKIP("no CUDA device here");
  auto block = DeviceBlock::acquire(*cuda, 4096);  // the runtime's primary context, active with its own flags
  ASSERT_TRUE(block.is_ok()) << block.status().to_string();
  std::vector<uint8_t> bytes(4096, 7);
  ASSERT_TRUE(cuda->device_upload(bytes.data(), block.value().data(), bytes.size()).is_ok());
  auto device = cuda_hw_device_open(0);
  ASSERT_TRUE(device.is_ok()) << device.status().to_string();
}

// A pool frame of FFmpeg's CUDA device (the primary context kiln's kernels use) to fill, and the ways to check it.
class CudaEncoderFramesFilled : public ::testing::Test {
 protected:
  void SetUp() override {
    m_cuda = BackendRegistry::instance().find(BackendKind::kCuda);
    if (m_cuda == nullptr) KILN_GPU_SKIP("no CUDA device here");
    auto device = cuda_hw_device_open(0);
    ASSERT_TRUE(device.is_ok()) << device.status().to_string();
    m_device = std::move(device).value();
    auto frames = CudaEncoderFrames::make(m_device.get(), kFrameWidth, kFrameHeight);
    ASSERT_TRUE(frames.is_ok()) << frames.status().to_string();
    m_frames.emplace(std::move(frames).value());
    auto next = m_frames->next();
    ASSERT_TRUE(next.is_ok()) << next.status().to_string();
    m_frame = next.value();
    ASSERT_EQ(m_frame.chroma_row, kFrameHeight);
    ASSERT_GE(m_frame.nv12.row_stride, kFrameWidth);
  }

  // The filled frame, brought down by FFmpeg (NV12).
  AvFramePtr frame_down() {
    auto taken = m_frames->take(0);
    EXPECT_TRUE(taken.is_ok());
    AvFramePtr got(av_frame_alloc());
    got->format = AV_PIX_FMT_NV12;
    if (taken.is_ok()) {
      EXPECT_EQ(av_hwframe_transfer_data(got.get(), taken.value(), 0), 0);
    }
    return got;
  }

  // A host NV12 frame of the frame's size.
  static AvFramePtr nv12_frame() {
    AvFramePtr frame(av_frame_alloc());
    frame->format = AV_PIX_FMT_NV12;
    frame->width = kFrameWidth;
    frame->height = kFrameHeight;
    EXPECT_EQ(av_frame_get_buffer(frame.get(), 0), 0);
    return frame;
  }

  // The largest difference of two NV12 frames' visible bytes; `luma_of` counts a's luma bytes of that value.
  static int planes_max_diff(const AVFrame& a, const AVFrame& b, uint8_t luma_of = 0, int64_t* luma_count = nullptr) {
    int worst = 0;
    for (int plane = 0; plane < 2; ++plane) {
      for (int32_t y = 0; y < (plane == 0 ? kFrameHeight : kFrameHeight / 2); ++y) {
        const uint8_t* pa = a.data[plane] + static_cast<ptrdiff_t>(y) * a.linesize[plane];
        const uint8_t* pb = b.data[plane] + static_cast<ptrdiff_t>(y) * b.linesize[plane];
        for (int32_t x = 0; x < kFrameWidth; ++x) {
          worst = std::max(worst, std::abs(int(pa[x]) - int(pb[x])));
          if (luma_count != nullptr && plane == 0 && pa[x] == luma_of) ++*luma_count;
        }
      }
    }
    return worst;
  }

  static ExecOptions on_cuda() {
    ExecOptions gpu;
    gpu.mode = ExecMode::kGpu;
    gpu.gpu_only = BackendKind::kCuda;
    return gpu;
  }

  Backend* m_cuda = nullptr;
  AvBufferPtr m_device;
  std::optional<CudaEncoderFrames> m_frames;
  VideoDeviceFrame m_frame;
};

TEST_F(CudaEncoderFramesFilled, AMaskWrittenThereHoldsTheHostPathsPlanes) {
  auto gray = GrayPlanes::make(AV_PIX_FMT_NV12, kWriterFlags);
  ASSERT_TRUE(gray.is_ok());
  VideoDeviceFrame f = m_frame;
  gray.value().levels_fill(&f);  // as the writer does for gray frames

  // The probability map on the device, its mask written into the frame's luma rows, the chroma copied in.
  const auto map = test::random_batch({{kMapSize, kMapSize, 1, PixelType::kF32, Layout::kHWC}}, 9, 0.0f, 1.0f);
  auto map_block = DeviceBlock::acquire(*m_cuda, map[0].packed_bytes());
  ASSERT_TRUE(map_block.is_ok());
  const VarShapeBatch map_dev = VarShapeBatch::wrap(
      {image_view_packed(map_block.value().data(), kMapSize, kMapSize, 1, PixelType::kF32)}, MemorySpace::kDevice);
  ASSERT_TRUE(m_cuda->images_upload(map.view(), map_dev.view()).is_ok());
  MatteParams params;
  params.foreground = f.white;
  params.background = f.black;
  const VarShapeBatch luma =
      VarShapeBatch::wrap({f.nv12.crop(0, 0, kFrameWidth, kFrameHeight)}, MemorySpace::kDevice);
  ASSERT_TRUE(matte_render(params, map_dev.view(), luma.view(), on_cuda()).is_ok());
  std::vector<uint8_t> pairs(static_cast<size_t>(kFrameWidth) * kFrameHeight / 2);
  for (size_t i = 0; i < pairs.size(); i += 2) {
    pairs[i] = f.u;
    pairs[i + 1] = f.v;
  }
  const VarShapeBatch chroma_host =
      VarShapeBatch::wrap({image_view_packed(pairs.data(), kFrameWidth, kFrameHeight / 2, 1, PixelType::kU8)});
  const VarShapeBatch chroma =
      VarShapeBatch::wrap({f.nv12.crop(0, kFrameHeight, kFrameWidth, kFrameHeight / 2)}, MemorySpace::kDevice);
  ASSERT_TRUE(m_cuda->images_upload(chroma_host.view(), chroma.view()).is_ok());
  const AvFramePtr got = frame_down();

  // The host path: the CPU's mask (0 / 255) through the writer's gray table into an NV12 frame.
  const auto mask = test::filled_batch({{kFrameWidth, kFrameHeight, 1, PixelType::kU8, Layout::kHWC}});
  ExecOptions cpu;
  cpu.mode = ExecMode::kCpu;
  ASSERT_TRUE(matte_render(MatteParams{}, map.view(), mask.view(), cpu).is_ok());
  const AvFramePtr want = nv12_frame();
  gray.value().convert(mask[0], want.get());
  int64_t white = 0;
  EXPECT_EQ(planes_max_diff(*got, *want, f.white, &white), 0) << "the device-filled frame differs from the host's";
  EXPECT_GT(white, 0);
}

// A composite's way into NVENC: RGB in device memory converted by the color op's rgb_to_nv12 straight into a pool
// frame (a pitched device output), brought down by FFmpeg: swscale's NV12 of the same picture, within a level (the
// conversion host frames of the same output get).
TEST_F(CudaEncoderFramesFilled, RgbConvertedThereIsSwscalesNv12WithinALevel) {
  std::vector<uint8_t> rgb(static_cast<size_t>(kFrameWidth) * kFrameHeight * 3);
  for (int32_t y = 0; y < kFrameHeight; ++y) {
    for (int32_t x = 0; x < kFrameWidth; ++x) {
      uint8_t* p = &rgb[(static_cast<size_t>(y) * kFrameWidth + x) * 3];
      p[0] = static_cast<uint8_t>(40 + x / 2);
      p[1] = static_cast<uint8_t>(200 - y / 2);
      p[2] = static_cast<uint8_t>(80 + (x + y) / 4);
    }
  }
  auto rgb_block = DeviceBlock::acquire(*m_cuda, rgb.size());
  ASSERT_TRUE(rgb_block.is_ok());
  const VarShapeBatch rgb_host =
      VarShapeBatch::wrap({image_view_packed(rgb.data(), kFrameWidth, kFrameHeight, 3, PixelType::kU8)});
  const VarShapeBatch rgb_dev = VarShapeBatch::wrap(
      {image_view_packed(rgb_block.value().data(), kFrameWidth, kFrameHeight, 3, PixelType::kU8)},
      MemorySpace::kDevice);
  ASSERT_TRUE(m_cuda->images_upload(rgb_host.view(), rgb_dev.view()).is_ok());
  ColorParams params;
  params.conversion = ColorConversion::kRgbToNv12;
  params.yuv_matrix = m_frame.matrix;  // an untagged output's: BT.601, limited range
  params.yuv_full_range = m_frame.full_range;
  params.nv12_chroma_row = m_frame.chroma_row;
  const VarShapeBatch nv12 = VarShapeBatch::wrap({m_frame.nv12}, MemorySpace::kDevice);
  ASSERT_TRUE(color_convert(params, rgb_dev.view(), nv12.view(), on_cuda()).is_ok());
  const AvFramePtr got = frame_down();

  SwsContextPtr scaler(sws_getContext(kFrameWidth, kFrameHeight, AV_PIX_FMT_RGB24, kFrameWidth, kFrameHeight,
                                      AV_PIX_FMT_NV12, kWriterFlags, nullptr, nullptr, nullptr));
  ASSERT_TRUE(scaler);
  const AvFramePtr want = nv12_frame();
  const uint8_t* src[4] = {rgb.data(), nullptr, nullptr, nullptr};
  const int src_stride[4] = {kFrameWidth * 3, 0, 0, 0};
  sws_scale(scaler.get(), src, src_stride, 0, kFrameHeight, want->data, want->linesize);
  EXPECT_LE(planes_max_diff(*got, *want), 1);
}

}  // namespace
}  // namespace kiln
