// Images taller than CUDA's grid y allows (65,535 blocks of 8 rows: 524,280 rows) against the CPU reference (issue
// 58.7): kernels launched with grid y capped loop their rows. One 2 x 540,000 image each through a per-pixel kernel
// (color), mask (decision and median smoothing), matte (with person counts) and probability, on CUDA (skipped
// visibly without a device) and on OpenCL (PoCL here), whose global sizes have no such limit.
#include <gtest/gtest.h>

#include <memory>
#include <vector>

#include "backend_ops/test_backends.h"
#include "common/image_ops_util.h"
#include "core/cpu_isa.h"
#include "kiln/ops/color.h"
#include "kiln/ops/mask.h"
#include "kiln/ops/matte.h"
#include "kiln/ops/probability.h"

namespace kiln {
namespace {

constexpr int32_t kTallWidth = 2;
constexpr int32_t kTallRows = 540000;  // grid y's 65,535 blocks of 8 rows, and 15,720 rows more

ImageShape tall_shape(int32_t channels, PixelType type, Layout layout = Layout::kHWC) {
  return {kTallWidth, kTallRows, channels, type, layout};
}

// `call` on the CPU reference, then on `gpu` writing `got` in place of call.out; `results` (person counts) likewise.
void tall_run(Backend& cpu, Backend& gpu, const OpCall& call, const VarShapeBatchView& got, void* got_results) {
  ASSERT_TRUE(op_validate(call).is_ok()) << op_kind_name(call.op);
  ASSERT_TRUE(cpu.run(call, {}).is_ok()) << op_kind_name(call.op);
  OpCall gpu_call = call;
  gpu_call.out = got;
  gpu_call.results = got_results;
  ASSERT_TRUE(gpu.supports(gpu_call)) << op_kind_name(call.op);
  const Status status = gpu.run(gpu_call, {});
  ASSERT_TRUE(status.is_ok()) << op_kind_name(call.op) << ": " << status.to_string();
}

void expect_same(const VarShapeBatch& want, const VarShapeBatch& got, const char* what) {
  const test::ImageDiff d = test::image_diff(want[0], got[0]);
  EXPECT_EQ(d.over, 0) << what << ": " << d.over << " pixels differ, first " << d.first;
}

void tall_parity(Backend& cpu, Backend& gpu) {
  {
    SCOPED_TRACE("color gray to rgb, u8");
    const auto in = test::random_batch({tall_shape(1, PixelType::kU8)}, 58);
    const auto want = test::filled_batch({tall_shape(3, PixelType::kU8)}, 0xCD);
    const auto got = test::filled_batch({tall_shape(3, PixelType::kU8)}, 0xAB);
    ColorParams params;
    params.conversion = ColorConversion::kGrayToRgb;
    ASSERT_NO_FATAL_FAILURE(
        tall_run(cpu, gpu, OpCall{OpKind::kColor, &params, in.view(), want.view(), nullptr}, got.view(), nullptr));
    expect_same(want, got, "color");
  }
  {
    SCOPED_TRACE("mask, sigmoid and a median");
    const auto in = test::random_batch({tall_shape(1, PixelType::kF32, Layout::kCHW)}, 59, -6.0f, 6.0f);
    const auto want = test::filled_batch({tall_shape(1, PixelType::kU8)}, 0xCD);
    const auto got = test::filled_batch({tall_shape(1, PixelType::kU8)}, 0xAB);
    MaskParams params;
    params.activation = MaskActivation::kSigmoid;
    params.target_class = 0;
    params.smoothing = MaskSmoothing::kMedian;
    params.radius = 1;
    ASSERT_NO_FATAL_FAILURE(
        tall_run(cpu, gpu, OpCall{OpKind::kMask, &params, in.view(), want.view(), nullptr}, got.view(), nullptr));
    expect_same(want, got, "mask");
  }
  {
    SCOPED_TRACE("matte mask with person counts");
    const auto in = test::random_batch({tall_shape(1, PixelType::kF32)}, 60, 0.0f, 1.0f);
    const auto want = test::filled_batch({tall_shape(1, PixelType::kU8)}, 0xCD);
    const auto got = test::filled_batch({tall_shape(1, PixelType::kU8)}, 0xAB);
    MatteParams params;
    params.output = MatteOutput::kMask;
    std::vector<int64_t> want_counts(1, -1), got_counts(1, -2);
    ASSERT_NO_FATAL_FAILURE(tall_run(cpu, gpu,
                                     OpCall{OpKind::kMatte, &params, in.view(), want.view(), want_counts.data()},
                                     got.view(), got_counts.data()));
    expect_same(want, got, "matte");
    EXPECT_EQ(got_counts, want_counts) << "person pixels";
    EXPECT_GT(want_counts[0], 0);
  }
  {
    SCOPED_TRACE("probability, sigmoid");
    const auto in = test::random_batch({tall_shape(1, PixelType::kF32, Layout::kCHW)}, 61, -6.0f, 6.0f);
    const auto want = test::filled_batch({tall_shape(1, PixelType::kF32)}, 0xCD);
    const auto got = test::filled_batch({tall_shape(1, PixelType::kF32)}, 0xAB);
    ProbabilityParams params;
    ASSERT_NO_FATAL_FAILURE(tall_run(
        cpu, gpu, OpCall{OpKind::kProbability, &params, in.view(), want.view(), nullptr}, got.view(), nullptr));
    expect_same(want, got, "probability");
  }
}

// A GPU backend of kind `kKind` (skipped where none can be made) and the CPU reference in its scalar mode.
template <BackendKind kKind>
class TallImage : public test::GpuBackendTest<kKind> {
 protected:
  void SetUp() override {
    test::GpuBackendTest<kKind>::SetUp();
    if (this->IsSkipped() || this->HasFatalFailure()) return;
    cpu_isa_set(CpuIsa::kScalar);
    m_cpu = cpu_backend_create();
  }
  void TearDown() override {
    cpu_isa_set(m_saved_isa);
    test::GpuBackendTest<kKind>::TearDown();
  }

  std::unique_ptr<Backend> m_cpu;
  CpuIsa m_saved_isa = cpu_isa_active();
};

using TallImageOnCuda = TallImage<BackendKind::kCuda>;
using TallImageOnOpenCL = TallImage<BackendKind::kOpenCL>;

TEST_F(TallImageOnCuda, RowsPastGridYsLimitMatchTheCpu) { tall_parity(*m_cpu, backend()); }

TEST_F(TallImageOnOpenCL, RowsPastGridYsLimitMatchTheCpu) { tall_parity(*m_cpu, backend()); }

}  // namespace
}  // namespace kiln
