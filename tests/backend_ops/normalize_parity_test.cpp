// The normalize family on every GPU backend against the CPU reference on random var-shape f32 NCHW batches:
// bit-identical (one subtraction and one correctly rounded division per value on every backend).
#include <gtest/gtest.h>

#include <cstring>
#include <vector>

#include "common/gpu_parity.h"
#include "common/image_ops_util.h"
#include "kiln/image_ops.h"
#include "kiln/ops/normalize.h"
#include "ops/normalize.h"

namespace kiln {
namespace {

using NormalizeParity = test::GpuParityTest;

TEST_F(NormalizeParity, GpuMatchesCpuExactly) {
  uint32_t seed = 200;
  for (auto& named : m_backends) {
    for (int32_t channels : {1, 3, 4}) {
      NormalizeParams params;
      for (int32_t c = 0; c < channels; ++c) {
        params.mean.push_back(0.4f + 0.03f * static_cast<float>(c));
        params.std.push_back(0.22f + 0.007f * static_cast<float>(c));
      }
      std::vector<ImageShape> shapes;
      for (auto [w, h] : std::vector<std::pair<int32_t, int32_t>>{{1, 1}, {5, 3}, {31, 17}, {64, 40}, {130, 9}}) {
        shapes.push_back({w, h, channels, PixelType::kF32, Layout::kCHW});
      }
      const auto in = test::random_batch(shapes, ++seed, -2.0f, 2.0f);
      const auto want = test::filled_batch(shapes);
      const auto got = test::filled_batch(shapes, 0x5A);
      ASSERT_NO_FATAL_FAILURE(test::parity_run(
          *m_cpu, named, OpCall{OpKind::kNormalize, &params, in.view(), want.view(), nullptr}, got.view()));
      for (int64_t i = 0; i < in.count(); ++i) {
        EXPECT_EQ(std::memcmp(want[i].data, got[i].data, want[i].packed_bytes()), 0)
            << named.name << " channels " << channels << " image " << i;
      }
      // In place through the GPU: the output batch is the input batch.
      const auto inplace = test::random_batch(shapes, seed, -2.0f, 2.0f);
      const OpCall inplace_call{OpKind::kNormalize, &params, inplace.view(), inplace.view(), nullptr};
      ASSERT_TRUE(named.backend->run(inplace_call, {}).is_ok());
      for (int64_t i = 0; i < in.count(); ++i) {
        EXPECT_EQ(std::memcmp(want[i].data, inplace[i].data, want[i].packed_bytes()), 0) << named.name << " in place";
      }
    }
  }
}

}  // namespace
}  // namespace kiln
