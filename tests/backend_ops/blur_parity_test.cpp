// blur: every GPU backend (OpenCL on PoCL here; CUDA where a device exists) against the CPU reference: var-shape
// batches of every channel count, images smaller than the factor, the largest parameters, and on CUDA device
// batches blurred in place (kiln segment's NVDEC frames). Tolerance 0: the per-pixel math is blur_px.h on every
// backend (integer sums, the host's 1 / (2r + 1), no FMA contraction), and the CPU's running sums equal it
// (tests/ops/blur_reference_test.cpp).
#include <gtest/gtest.h>

#include <vector>

#include "common/gpu_parity.h"
#include "common/image_ops_util.h"
#include "core/backend_block.h"
#include "kiln/image_ops.h"

namespace kiln {
namespace {

using BlurParity = test::GpuParityTest;

TEST_F(BlurParity, GpuMatchesCpu) {
  struct Case {
    BlurParams params;
    std::vector<ImageShape> shapes;
  };
  const std::vector<Case> cases = {
      {blur_params_for_radius(25),
       {{1280, 720, 3, PixelType::kU8, Layout::kHWC}, {97, 61, 3, PixelType::kU8, Layout::kHWC}}},
      {{1, 1, 1}, {{64, 48, 1, PixelType::kU8, Layout::kHWC}, {33, 17, 4, PixelType::kU8, Layout::kHWC}}},
      {{8, 3, 2}, {{5, 3, 3, PixelType::kU8, Layout::kHWC}, {250, 7, 1, PixelType::kU8, Layout::kHWC}}},
      {{16, 64, 4}, {{300, 200, 4, PixelType::kU8, Layout::kHWC}}},
  };
  uint32_t seed = 90;
  for (auto& named : m_backends) {
    for (const Case& c : cases) {
      SCOPED_TRACE(testing::Message() << named.name << " factor " << c.params.factor << " radius " << c.params.radius
                                      << " passes " << c.params.passes);
      // Inputs whose rows are padded past the picture: the row stride is honoured.
      std::vector<ImageShape> padded_shapes = c.shapes;
      for (ImageShape& s : padded_shapes) s.width += 5;
      const auto padded = test::random_batch(padded_shapes, seed++);
      std::vector<ImageView> crops;
      for (size_t i = 0; i < c.shapes.size(); ++i) {
        crops.push_back(padded[static_cast<int64_t>(i)].crop(0, 0, c.shapes[i].width, c.shapes[i].height));
      }
      const VarShapeBatch in = VarShapeBatch::wrap(crops);
      const auto want = test::filled_batch(c.shapes, 0xCD);
      const auto got = test::filled_batch(c.shapes, 0xAB);
      ASSERT_NO_FATAL_FAILURE(
          test::parity_run(*m_cpu, named, OpCall{OpKind::kBlur, &c.params, in.view(), want.view(), nullptr},
                           got.view()));
      for (int64_t i = 0; i < in.count(); ++i) {
        const test::ImageDiff d = test::image_diff(want[i], got[i]);
        EXPECT_EQ(d.over, 0) << "image " << i << ": " << d.over << " values differ, first " << d.first;
      }
    }
  }
}

// kiln segment's blurred background of a frame NVDEC left on the device: blurred there, in place.
TEST_F(BlurParity, CudaBlursDeviceFramesInPlace) {
  int64_t ran = 0;
  for (auto& named : m_backends) {
    if (named.name != "cuda") continue;
    Backend& cuda = *named.backend;
    const BlurParams p = blur_params_for_radius(25);
    const std::vector<ImageShape> shapes = {{1920, 1080, 3, PixelType::kU8, Layout::kHWC},
                                            {640, 360, 3, PixelType::kU8, Layout::kHWC}};
    const auto in = test::random_batch(shapes, 123);
    const auto want = test::filled_batch(shapes);
    ASSERT_NO_FATAL_FAILURE(
        test::cpu_reference_run(*m_cpu, OpCall{OpKind::kBlur, &p, in.view(), want.view(), nullptr}));
    std::vector<DeviceBlock> blocks;
    std::vector<ImageView> views;
    for (int64_t i = 0; i < in.count(); ++i) {
      auto block = DeviceBlock::acquire(cuda, in[i].packed_bytes());
      ASSERT_TRUE(block.is_ok());
      views.push_back(image_view_packed(block.value().data(), in[i].width, in[i].height, 3, PixelType::kU8));
      blocks.push_back(std::move(block).value());
    }
    const VarShapeBatch device = VarShapeBatch::wrap(views, MemorySpace::kDevice);
    ASSERT_TRUE(cuda.images_upload(in.view(), device.view()).is_ok());
    ASSERT_NO_FATAL_FAILURE(
        test::gpu_run(named, OpCall{OpKind::kBlur, &p, device.view(), device.view(), nullptr}));
    const auto got = test::filled_batch(shapes, 0x11);
    for (int64_t i = 0; i < in.count(); ++i) {
      ASSERT_TRUE(cuda.device_download(views[i].data, got[i].data, got[i].packed_bytes()).is_ok());
      const test::ImageDiff d = test::image_diff(want[i], got[i]);
      EXPECT_EQ(d.over, 0) << "device image " << i << ": " << d.over << " values differ, first " << d.first;
    }
    ++ran;
  }
  if (ran == 0) KILN_GPU_SKIP("no CUDA device here: the device-batch case runs on the lent GPU");
}

}  // namespace
}  // namespace kiln
