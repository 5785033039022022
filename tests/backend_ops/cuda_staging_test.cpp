// Host batches on CUDA: pageable ones go up and down through the backend's pinned staging slots
// (src/ops/cuda/pinned_staging.h), batches in host_acquire() blocks are copied directly. Both must give the CPU's
// bytes, for packed, strided and planar images, from many threads at once, and the staging's page-locked memory
// stays within its slots. Without a CUDA device the CUDA tests are SKIPPED (and fail under KILN_REQUIRE_GPU=1); the
// same checks run on OpenCL (PoCL here). Backend::images_upload (host images into device images, once, through the
// same slots) is checked on CUDA; the backends without device pointers refuse it.
#include <gtest/gtest.h>

#include <cstring>
#include <thread>
#include <vector>

#include "backend_ops/test_backends.h"
#include "common/image_ops_util.h"
#include "core/backend_block.h"
#include "core/buffer_pool.h"
#include "core/cpu_isa.h"
#include "kiln/image_ops.h"
#include "kiln/ops/preprocess.h"
#include "kiln/ops/resize.h"
#if KILN_HAS_CUDA
#include "ops/cuda/pinned_staging.h"
#else
inline constexpr int64_t kPinnedStagingSlots = 0;  // never read: every test here skips without the CUDA backend
#endif

namespace kiln {
namespace {

// The CPU reference runs the per-pixel _px.h math (KILN_CPU_ISA=scalar), as in the parity tests: its AVX2 paths may
// differ by a level.
template <BackendKind kKind>
class HostBatchTest : public test::GpuBackendTest<kKind> {
 protected:
  void SetUp() override {
    m_saved_isa = cpu_isa_active();
    cpu_isa_set(CpuIsa::kScalar);
    test::GpuBackendTest<kKind>::SetUp();
  }
  void TearDown() override {
    cpu_isa_set(m_saved_isa);
    test::GpuBackendTest<kKind>::TearDown();
  }
  CpuIsa m_saved_isa = CpuIsa::kScalar;
};

using CudaStaging = HostBatchTest<BackendKind::kCuda>;

bool same_pixels(const VarShapeBatch& a, const VarShapeBatch& b) {
  for (int64_t i = 0; i < a.count(); ++i) {
    const ImageView& x = a[i];
    const ImageView& y = b[i];
    for (int32_t p = 0; p < (x.layout == Layout::kCHW ? x.channels : 1); ++p) {
      for (int32_t r = 0; r < x.height; ++r) {
        if (std::memcmp(x.row<uint8_t>(r, p), y.row<uint8_t>(r, p), x.pixel_size() * x.width) != 0) return false;
      }
    }
  }
  return true;
}

// Copies of `batch`'s images packed into one block of `backend`'s host_acquire() (pinned on CUDA).
struct PinnedCopy {
  Backend* backend = nullptr;
  PoolBlock block;
  VarShapeBatch batch;
  ~PinnedCopy() {
    if (backend != nullptr) backend->host_release(block);
  }
};

void pinned_copy(Backend& backend, const VarShapeBatch& from, PinnedCopy* to) {
  size_t total = 0;
  for (const ImageView& v : from.images()) total += (v.packed_bytes() + 255) / 256 * 256;
  auto block = backend.host_acquire(total);
  ASSERT_TRUE(block.is_ok()) << block.status().to_string();
  to->backend = &backend;
  to->block = block.value();
  std::vector<ImageView> views;
  auto* at = reinterpret_cast<uint8_t*>(to->block.handle);
  for (const ImageView& v : from.images()) {
    ImageView packed = image_view_packed(at, v.width, v.height, v.channels, v.type, v.layout);
    for (int32_t p = 0; p < (v.layout == Layout::kCHW ? v.channels : 1); ++p) {
      for (int32_t r = 0; r < v.height; ++r) {
        std::memcpy(packed.row<uint8_t>(r, p), v.row<uint8_t>(r, p), v.pixel_size() * v.width);
      }
    }
    views.push_back(packed);
    at += (v.packed_bytes() + 255) / 256 * 256;
  }
  to->batch = VarShapeBatch::wrap(std::move(views));
}

// Both checks run on OpenCL too (PoCL here): the test's own logic runs on every machine, and OpenCL's mapped host
// blocks take the same two paths.
void pageable_and_pinned_check(Backend& backend) {
  const std::vector<ImageShape> in_shapes = {{1920, 1080, 3}, {641, 479, 3}, {37, 29, 1}, {300, 300, 4}};
  const std::vector<ImageShape> out_shapes = {{512, 512, 3}, {320, 240, 3}, {64, 48, 1}, {150, 150, 4}};
  const VarShapeBatch in = test::random_batch(in_shapes, 7);
  ResizeParams params;
  params.interp = Interp::kBilinear;
  auto cpu = cpu_backend_create();
  VarShapeBatch expected = test::filled_batch(out_shapes);
  ASSERT_TRUE(cpu->run(OpCall{OpKind::kResize, &params, in.view(), expected.view(), nullptr}, {}).is_ok());

  VarShapeBatch staged = test::filled_batch(out_shapes);
  const Status st = backend.run(OpCall{OpKind::kResize, &params, in.view(), staged.view(), nullptr}, {});
  ASSERT_TRUE(st.is_ok()) << st.to_string();
  EXPECT_TRUE(same_pixels(staged, expected)) << "pageable batch";

  PinnedCopy pinned_in, pinned_out;
  ASSERT_NO_FATAL_FAILURE(pinned_copy(backend, in, &pinned_in));
  ASSERT_NO_FATAL_FAILURE(pinned_copy(backend, test::filled_batch(out_shapes), &pinned_out));
  const Status direct =
      backend.run(OpCall{OpKind::kResize, &params, pinned_in.batch.view(), pinned_out.batch.view(), nullptr}, {});
  ASSERT_TRUE(direct.is_ok()) << direct.to_string();
  EXPECT_TRUE(same_pixels(pinned_out.batch, expected)) << "batch in host_acquire() blocks";
}

void strided_and_planar_check(Backend& backend) {
  // Inputs: crops of larger images (row stride > row bytes); outputs: float CHW planes, also inside larger images.
  const VarShapeBatch big = test::random_batch({{800, 600, 3}, {401, 333, 3}}, 11);
  VarShapeBatch in = VarShapeBatch::wrap({big[0].crop(13, 7, 640, 480), big[1].crop(1, 2, 399, 330)});
  const std::vector<ImageShape> out_shapes = {{224, 224, 3, PixelType::kF32, Layout::kCHW},
                                              {224, 224, 3, PixelType::kF32, Layout::kCHW}};
  PreprocessParams params;
  params.interp = Interp::kBilinear;
  auto cpu = cpu_backend_create();
  VarShapeBatch expected = test::filled_batch(out_shapes);
  ASSERT_TRUE(cpu->run(OpCall{OpKind::kPreprocess, &params, in.view(), expected.view(), nullptr}, {}).is_ok());
  const VarShapeBatch out_big = test::filled_batch({{230, 230, 3, PixelType::kF32, Layout::kCHW},
                                                    {230, 230, 3, PixelType::kF32, Layout::kCHW}});
  VarShapeBatch out = VarShapeBatch::wrap({out_big[0].crop(3, 2, 224, 224), out_big[1].crop(0, 6, 224, 224)});
  const Status st = backend.run(OpCall{OpKind::kPreprocess, &params, in.view(), out.view(), nullptr}, {});
  ASSERT_TRUE(st.is_ok()) << st.to_string();
  EXPECT_TRUE(same_pixels(out, expected));
}

TEST_F(CudaStaging, PageableAndPinnedBatchesBothGiveTheCpusBytes) {
  ASSERT_NO_FATAL_FAILURE(pageable_and_pinned_check(backend()));
}

TEST_F(CudaStaging, PageableBatchesGoThroughTheSlotsAndPinnedOnesDoNot) {
  const std::vector<ImageShape> in_shapes = {{640, 480, 3}};
  const std::vector<ImageShape> out_shapes = {{320, 240, 3}};
  const VarShapeBatch in = test::random_batch(in_shapes, 3);
  ResizeParams params;
  VarShapeBatch out = test::filled_batch(out_shapes);
  ASSERT_TRUE(backend().run(OpCall{OpKind::kResize, &params, in.view(), out.view(), nullptr}, {}).is_ok());
  EXPECT_EQ(backend().host_memory_stats().held_bytes, BufferPool::size_class(640u * 480 * 3))
      << "one slot, holding the input";

  PinnedCopy pinned_in, pinned_out;
  ASSERT_NO_FATAL_FAILURE(pinned_copy(backend(), in, &pinned_in));
  ASSERT_NO_FATAL_FAILURE(pinned_copy(backend(), test::filled_batch(out_shapes), &pinned_out));
  const PoolStats before = backend().host_memory_stats();
  ASSERT_TRUE(backend()
                  .run(OpCall{OpKind::kResize, &params, pinned_in.batch.view(), pinned_out.batch.view(), nullptr}, {})
                  .is_ok());
  const PoolStats after = backend().host_memory_stats();
  EXPECT_EQ(after.allocations, before.allocations) << "a pinned batch was staged";
  EXPECT_EQ(after.reuses, before.reuses) << "a pinned batch was staged";
}

TEST_F(CudaStaging, StridedAndPlanarImagesArePackedAndUnpackedRowByRow) {
  ASSERT_NO_FATAL_FAILURE(strided_and_planar_check(backend()));
}

// Pageable, pinned and strided host images (and planar floats) into device images that are themselves strided: each
// comes back byte for byte, and a pageable batch borrows exactly one staging slot; then from those device images into
// packed device images (a device-to-device copy).
TEST_F(CudaStaging, ImagesGoUpOnceIntoDeviceImagesOfAnyStride) {
  const VarShapeBatch big = test::random_batch({{800, 600, 3}, {37, 29, 1}}, 5);
  const VarShapeBatch planar = test::random_batch({{64, 48, 3, PixelType::kF32, Layout::kCHW}}, 6);
  const VarShapeBatch host = VarShapeBatch::wrap({big[0].crop(13, 7, 640, 480), big[1], planar[0]});
  // Device images: rows 64 bytes longer than the image's, planes one row apart more.
  std::vector<ImageView> device_views;
  std::vector<DeviceBlock> blocks;
  for (const ImageView& h : host.images()) {
    ImageView d = h;
    d.row_stride = static_cast<int64_t>(h.pixel_size()) * h.width + 64;
    d.plane_stride = d.row_stride * (h.height + 1);
    const size_t bytes = static_cast<size_t>(d.layout == Layout::kCHW ? d.plane_stride * d.channels
                                                                       : d.row_stride * d.height);
    auto block = DeviceBlock::acquire(backend(), bytes);
    ASSERT_TRUE(block.is_ok()) << block.status().to_string();
    d.data = block.value().data();
    device_views.push_back(d);
    blocks.push_back(std::move(block).value());
  }
  const VarShapeBatch device = VarShapeBatch::wrap(device_views, MemorySpace::kDevice);
  const auto check_back = [&](const char* what) {
    for (int64_t i = 0; i < host.count(); ++i) {
      const ImageView& d = device[i];
      const size_t bytes = blocks[static_cast<size_t>(i)].bytes();
      std::vector<uint8_t> raw(bytes);
      ASSERT_TRUE(backend().device_download(d.data, raw.data(), bytes).is_ok());
      ImageView back = d;
      back.data = raw.data();
      EXPECT_TRUE(same_pixels(VarShapeBatch::wrap({back}), VarShapeBatch::wrap({host[i]}))) << what << " image " << i;
    }
  };

  const PoolStats before = backend().host_memory_stats();
  const Status st = backend().images_upload(host.view(), device.view());
  ASSERT_TRUE(st.is_ok()) << st.to_string();
  ASSERT_NO_FATAL_FAILURE(check_back("pageable"));
  const PoolStats after = backend().host_memory_stats();
  EXPECT_EQ(after.allocations + after.reuses, before.allocations + before.reuses + 1) << "one staging slot";

  PinnedCopy pinned;
  ASSERT_NO_FATAL_FAILURE(pinned_copy(backend(), host, &pinned));
  const PoolStats pinned_before = backend().host_memory_stats();
  ASSERT_TRUE(backend().images_upload(pinned.batch.view(), device.view()).is_ok());
  ASSERT_NO_FATAL_FAILURE(check_back("pinned"));
  EXPECT_EQ(backend().host_memory_stats().allocations, pinned_before.allocations) << "a pinned batch was staged";

  // From those strided device images into packed ones on the device (kiln.SegmentPipeline's CUDA frames).
  std::vector<ImageView> packed_views;
  std::vector<DeviceBlock> packed_blocks;
  for (const ImageView& h : host.images()) {
    auto block = DeviceBlock::acquire(backend(), h.packed_bytes());
    ASSERT_TRUE(block.is_ok()) << block.status().to_string();
    packed_views.push_back(image_view_packed(block.value().data(), h.width, h.height, h.channels, h.type, h.layout));
    packed_blocks.push_back(std::move(block).value());
  }
  const VarShapeBatch packed = VarShapeBatch::wrap(packed_views, MemorySpace::kDevice);
  ASSERT_TRUE(backend().images_upload(device.view(), packed.view()).is_ok());
  for (int64_t i = 0; i < host.count(); ++i) {
    std::vector<uint8_t> raw(packed[i].packed_bytes());
    ASSERT_TRUE(backend().device_download(packed[i].data, raw.data(), raw.size()).is_ok());
    ImageView back = packed[i];
    back.data = raw.data();
    EXPECT_TRUE(same_pixels(VarShapeBatch::wrap({back}), VarShapeBatch::wrap({host[i]}))) << "device copy " << i;
  }

  const VarShapeBatch wrong =
      test::random_batch({{10, 10, 3}, {37, 29, 1}, {64, 48, 3, PixelType::kF32, Layout::kCHW}}, 1);
  EXPECT_EQ(backend().images_upload(wrong.view(), device.view()).code(), Errc::kInvalidArgument);
}

TEST(ImagesUpload, BackendsWithoutDevicePointersRefuseIt) {
  const VarShapeBatch host = test::random_batch({{8, 8, 3}}, 1);
  auto cpu = cpu_backend_create();
  EXPECT_EQ(cpu->images_upload(host.view(), host.view()).code(), Errc::kNotImplemented);
  auto opencl = test::gpu_backend_for_test(BackendKind::kOpenCL);
  if (opencl.is_ok()) {
    EXPECT_EQ(opencl.value()->images_upload(host.view(), host.view()).code(), Errc::kNotImplemented);
  }
}

using OpenClHostBatches = HostBatchTest<BackendKind::kOpenCL>;

TEST_F(OpenClHostBatches, PageableAndMappedBatchesBothGiveTheCpusBytes) {
  ASSERT_NO_FATAL_FAILURE(pageable_and_pinned_check(this->backend()));
  ASSERT_NO_FATAL_FAILURE(strided_and_planar_check(backend()));
}

TEST_F(CudaStaging, ManyThreadsShareBoundedSlotsAndEachGetsItsOwnResult) {
  constexpr int kThreads = 8;
  const std::vector<ImageShape> in_shapes(4, ImageShape{640, 480, 3});
  const std::vector<ImageShape> out_shapes(4, ImageShape{320, 240, 3});
  ResizeParams params;
  params.interp = Interp::kArea;
  auto cpu = cpu_backend_create();
  std::vector<VarShapeBatch> inputs, expected;
  for (int t = 0; t < kThreads; ++t) {
    inputs.push_back(test::random_batch(in_shapes, 100 + t));
    expected.push_back(test::filled_batch(out_shapes));
    ASSERT_TRUE(cpu->run(OpCall{OpKind::kResize, &params, inputs[t].view(), expected[t].view(), nullptr}, {}).is_ok());
  }
  std::vector<int> mismatches(kThreads, 0), failures(kThreads, 0);
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      for (int round = 0; round < 10; ++round) {
        VarShapeBatch out = test::filled_batch(out_shapes);
        if (!backend().run(OpCall{OpKind::kResize, &params, inputs[t].view(), out.view(), nullptr}, {}).is_ok()) {
          ++failures[t];
        } else if (!same_pixels(out, expected[t])) {
          ++mismatches[t];
        }
      }
    });
  }
  for (std::thread& t : threads) t.join();
  for (int t = 0; t < kThreads; ++t) {
    EXPECT_EQ(failures[t], 0) << "thread " << t;
    EXPECT_EQ(mismatches[t], 0) << "thread " << t;
  }
  // Each slot holds one packed input batch (4 x 640x480x3, 256-aligned) in the pool's size class, and at most one
  // output-sized block it outgrew (a slot made for a download, later grown for an upload), kept in the pool's cache.
  const size_t in_bytes = BufferPool::size_class(4 * ((640 * 480 * 3 + 255) / 256 * 256));
  const size_t out_bytes = BufferPool::size_class(4 * ((320 * 240 * 3 + 255) / 256 * 256));
  EXPECT_LE(backend().host_memory_stats().peak_held_bytes, kPinnedStagingSlots * (in_bytes + out_bytes));
}

}  // namespace
}  // namespace kiln
