// matte: every GPU backend (OpenCL on PoCL here; CUDA where a device exists) against the CPU reference: random and
// smooth probability maps, up- and downsampling, whole maps and letterbox regions, masks, alphas and composites,
// var-shape batches, and the person counts of each. Tolerance 0: the per-pixel math is matte_px.h on every backend,
// with no FMA contraction and IEEE division anywhere, and the CPU's run-by-run mask rows equal that function
// (tests/ops/matte_reference_test.cpp).
#include <gtest/gtest.h>

#include <vector>

#include "common/gpu_parity.h"
#include "common/image_ops_util.h"
#include "core/backend_block.h"
#include "kiln/image_ops.h"
#include "kiln/ops/matte.h"

namespace kiln {
namespace {

using MatteParity = test::GpuParityTest;

TEST_F(MatteParity, GpuMatchesCpu) {
  struct Case {
    MatteParams params;
    std::vector<std::pair<int32_t, int32_t>> maps, outs;
  };
  std::vector<Case> cases;
  for (const MatteOutput output : {MatteOutput::kMask, MatteOutput::kAlpha}) {
    MatteParams p;
    p.output = output;
    cases.push_back({p, {{256, 256}, {17, 9}, {1, 1}}, {{1280, 720}, {131, 67}, {5, 3}}});
    p.threshold = 0.3f;
    p.feather = 0.25f;
    p.foreground = 77;
    p.background = 16;
    cases.push_back({p, {{64, 48}, {40, 40}}, {{32, 20}, {41, 39}}});
    p.region = {0.0f, 32.0f, 40.0f, 8.0f};  // a letterbox band of a 40 x 48 or larger map
    cases.push_back({p, {{40, 48}, {64, 48}}, {{320, 64}, {333, 65}}});
    p.region = {0.5f, 1.25f, 3.0f, 2.5f};
    cases.push_back({p, {{4, 4}, {7, 5}}, {{97, 61}, {8, 8}}});
  }
  uint32_t seed = 300;
  for (auto& named : m_backends) {
    int64_t ran = 0;
    for (const Case& c : cases) {
      SCOPED_TRACE(testing::Message() << named.name << " " << matte_output_name(c.params.output) << " region "
                                      << c.params.region.width << "x" << c.params.region.height);
      std::vector<ImageShape> in_shapes, out_shapes;
      for (size_t i = 0; i < c.maps.size(); ++i) {
        in_shapes.push_back({c.maps[i].first, c.maps[i].second, 1, PixelType::kF32, Layout::kHWC});
        out_shapes.push_back({c.outs[i].first, c.outs[i].second, 1, PixelType::kU8, Layout::kHWC});
      }
      const auto in = test::random_batch(in_shapes, seed++, 0.0f, 1.0f);
      const auto want = test::filled_batch(out_shapes, 0xCD);
      const auto got = test::filled_batch(out_shapes, 0xAB);
      std::vector<int64_t> want_counts(c.maps.size(), -1), got_counts(c.maps.size(), -2);
      ASSERT_NO_FATAL_FAILURE(test::cpu_reference_run(
          *m_cpu, OpCall{OpKind::kMatte, &c.params, in.view(), want.view(), want_counts.data()}));
      ASSERT_NO_FATAL_FAILURE(
          test::gpu_run(named, OpCall{OpKind::kMatte, &c.params, in.view(), got.view(), got_counts.data()}));
      for (int64_t i = 0; i < in.count(); ++i) {
        const test::ImageDiff d = test::image_diff(want[i], got[i]);
        EXPECT_EQ(d.over, 0) << "image " << i << " (" << got[i].width << "x" << got[i].height << "): " << d.over
                             << " pixels differ, first " << d.first;
      }
      EXPECT_EQ(got_counts, want_counts) << "person pixels";
      ++ran;
    }
    EXPECT_EQ(ran, static_cast<int64_t>(cases.size())) << named.name;
  }
}

// Composites: the frame blended over the background by the alpha, host batches (OpenCL here; CUDA on a GPU) and,
// on CUDA, maps, frames, backgrounds and outputs all in device memory (kiln segment's NVDEC frames).
TEST_F(MatteParity, CompositesMatchTheCpu) {
  MatteParams p;
  p.output = MatteOutput::kComposite;
  p.threshold = 0.45f;
  p.feather = 0.3f;
  p.region = {0.0f, 4.0f, 40.0f, 30.0f};
  const std::vector<ImageShape> maps = {{40, 40, 1, PixelType::kF32, Layout::kHWC},
                                        {48, 38, 1, PixelType::kF32, Layout::kHWC}};
  const std::vector<ImageShape> rgb = {{320, 240, 3, PixelType::kU8, Layout::kHWC},
                                       {97, 61, 3, PixelType::kU8, Layout::kHWC}};
  const auto in = test::random_batch(maps, 500, 0.0f, 1.0f);
  const auto frames = test::random_batch(rgb, 501), backs = test::random_batch(rgb, 502);
  const std::vector<ImageView> frame_views = {frames[0], frames[1]}, back_views = {backs[0], backs[1]};
  p.frames = frame_views.data();
  p.backgrounds = back_views.data();
  const auto want = test::filled_batch(rgb, 0xCD);
  std::vector<int64_t> want_counts(2, -1);
  ASSERT_NO_FATAL_FAILURE(
      test::cpu_reference_run(*m_cpu, OpCall{OpKind::kMatte, &p, in.view(), want.view(), want_counts.data()}));
  EXPECT_GT(want_counts[0], 0);
  for (auto& named : m_backends) {
    SCOPED_TRACE(named.name);
    const auto got = test::filled_batch(rgb, 0xAB);
    std::vector<int64_t> got_counts(2, -2);
    ASSERT_NO_FATAL_FAILURE(
        test::gpu_run(named, OpCall{OpKind::kMatte, &p, in.view(), got.view(), got_counts.data()}));
    for (int64_t i = 0; i < 2; ++i) {
      const test::ImageDiff d = test::image_diff(want[i], got[i]);
      EXPECT_EQ(d.over, 0) << "image " << i << ": " << d.over << " values differ, first " << d.first;
    }
    EXPECT_EQ(got_counts, want_counts) << "person pixels";
    if (named.name != "cuda") continue;
    Backend& cuda = *named.backend;  // everything in device memory
    std::vector<DeviceBlock> blocks;
    const auto on_device = [&](const VarShapeBatch& host) {
      std::vector<ImageView> views;
      for (int64_t i = 0; i < host.count(); ++i) {
        auto block = DeviceBlock::acquire(cuda, host[i].packed_bytes());
        EXPECT_TRUE(block.is_ok());
        views.push_back(image_view_packed(block.value().data(), host[i].width, host[i].height, host[i].channels,
                                          host[i].type));
        blocks.push_back(std::move(block).value());
      }
      VarShapeBatch device = VarShapeBatch::wrap(views, MemorySpace::kDevice);
      EXPECT_TRUE(cuda.images_upload(host.view(), device.view()).is_ok());
      return device;
    };
    const VarShapeBatch in_dev = on_device(in), frames_dev = on_device(frames), backs_dev = on_device(backs);
    const VarShapeBatch out_dev = on_device(got);
    const std::vector<ImageView> device_frames = {frames_dev[0], frames_dev[1]};
    const std::vector<ImageView> device_backs = {backs_dev[0], backs_dev[1]};
    MatteParams on = p;
    on.frames = device_frames.data();
    on.backgrounds = device_backs.data();
    std::vector<int64_t> device_counts(2, -3);
    ASSERT_NO_FATAL_FAILURE(
        test::gpu_run(named, OpCall{OpKind::kMatte, &on, in_dev.view(), out_dev.view(), device_counts.data()}));
    const auto down = test::filled_batch(rgb, 0x11);
    for (int64_t i = 0; i < 2; ++i) {
      ASSERT_TRUE(cuda.device_download(out_dev[i].data, down[i].data, down[i].packed_bytes()).is_ok());
      const test::ImageDiff d = test::image_diff(want[i], down[i]);
      EXPECT_EQ(d.over, 0) << "device image " << i << ": " << d.over << " values differ, first " << d.first;
    }
    EXPECT_EQ(device_counts, want_counts) << "person pixels of device composites";
  }
}

// The NVENC path of kiln segment: a map the model left on the device becomes the luma rows of an encoder's frame
// (a pitch wider than the picture, limited-range black and white), and its person pixels are counted on the device.
TEST_F(MatteParity, CudaWritesDeviceMattesAtAPitchAndCountsThem) {
  int64_t ran = 0;
  for (auto& named : m_backends) {
    if (named.name != "cuda") continue;
    Backend& cuda = *named.backend;
    constexpr int32_t kWidth = 1280, kHeight = 720, kPitch = 1536;
    MatteParams p;
    p.foreground = 235;
    p.background = 16;
    p.region = {0.0f, 32.0f, 256.0f, 192.0f};
    const ImageShape map_shape{256, 256, 1, PixelType::kF32, Layout::kHWC};
    const ImageShape frame_shape{kWidth, kHeight, 1, PixelType::kU8, Layout::kHWC};
    const ImageShape surface_shape{kPitch, kHeight, 1, PixelType::kU8, Layout::kHWC};
    const auto map = test::random_batch({map_shape}, 77, 0.0f, 1.0f);
    auto map_block = DeviceBlock::acquire(cuda, map[0].packed_bytes());
    auto surface_block = DeviceBlock::acquire(cuda, static_cast<size_t>(kPitch) * kHeight);
    ASSERT_TRUE(map_block.is_ok() && surface_block.is_ok());
    const VarShapeBatch map_dev = VarShapeBatch::wrap(
        {image_view_packed(map_block.value().data(), 256, 256, 1, PixelType::kF32)}, MemorySpace::kDevice);
    const ImageView surface = image_view_packed(surface_block.value().data(), kPitch, kHeight, 1, PixelType::kU8);
    const VarShapeBatch surface_dev = VarShapeBatch::wrap({surface}, MemorySpace::kDevice);
    const VarShapeBatch luma_dev = VarShapeBatch::wrap({surface.crop(0, 0, kWidth, kHeight)}, MemorySpace::kDevice);
    const auto padding = test::filled_batch({surface_shape}, 0xAB);
    ASSERT_TRUE(cuda.images_upload(map.view(), map_dev.view()).is_ok());
    ASSERT_TRUE(cuda.images_upload(padding.view(), surface_dev.view()).is_ok());
    const auto want = test::filled_batch({frame_shape});
    int64_t want_count = -1, got_count = -2;
    ASSERT_NO_FATAL_FAILURE(
        test::cpu_reference_run(*m_cpu, OpCall{OpKind::kMatte, &p, map.view(), want.view(), &want_count}));
    ASSERT_NO_FATAL_FAILURE(
        test::gpu_run(named, OpCall{OpKind::kMatte, &p, map_dev.view(), luma_dev.view(), &got_count}));
    auto got = test::filled_batch({surface_shape});
    ASSERT_TRUE(cuda.device_download(surface.data, got[0].data, got[0].packed_bytes()).is_ok());
    const test::ImageDiff d = test::image_diff(want[0], got[0].crop(0, 0, kWidth, kHeight));
    EXPECT_EQ(d.over, 0) << d.over << " pixels differ, first " << d.first;
    int64_t padding_kept = 0;
    for (int32_t y = 0; y < kHeight; ++y) {
      for (int32_t x = kWidth; x < kPitch; ++x) padding_kept += got[0].row<uint8_t>(y)[x] == 0xAB;
    }
    EXPECT_EQ(padding_kept, static_cast<int64_t>(kPitch - kWidth) * kHeight) << "wrote past the picture's rows";
    EXPECT_GT(want_count, 0);
    EXPECT_EQ(got_count, want_count) << "person pixels counted on the device";
    ++ran;
  }
  if (ran == 0) KILN_GPU_SKIP("no CUDA device here: the device-batch case runs on the lent GPU");
}

}  // namespace
}  // namespace kiln
