// The warp family on every GPU backend against the CPU reference on random var-shape batches (u8/f32, 1/3/4
// channels, every border mode, forward and inverse matrices): byte-identical, since every backend evaluates the
// same float operations of warp_px.h in the same order without contraction.
#include <gtest/gtest.h>

#include <array>
#include <cmath>
#include <cstring>
#include <random>
#include <vector>

#include "common/gpu_parity.h"
#include "common/image_ops_util.h"
#include "kiln/image_ops.h"
#include "kiln/ops/warp.h"
#include "ops/warp.h"

namespace kiln {
namespace {

using WarpParity = test::GpuParityTest;

TEST_F(WarpParity, GpuMatchesCpuExactly) {
  std::mt19937 rng(300);
  std::uniform_real_distribution<float> angle(-3.14159f, 3.14159f), scale(0.4f, 2.5f), shift(-20.0f, 40.0f);
  const std::vector<std::pair<int32_t, int32_t>> in_sizes = {{1, 1}, {5, 3}, {31, 17}, {64, 40}, {130, 9}};
  const std::vector<std::pair<int32_t, int32_t>> out_sizes = {{3, 2}, {7, 9}, {40, 33}, {64, 64}, {17, 120}};
  for (auto& named : m_backends) {
    for (PixelType type : {PixelType::kU8, PixelType::kF32}) {
      for (int32_t channels : {1, 3, 4}) {
        for (int border = 0; border < 4; ++border) {
          for (bool inverse : {false, true}) {
            std::vector<ImageShape> in_shapes, out_shapes;
            std::vector<std::array<float, 6>> matrices;
            for (size_t i = 0; i < in_sizes.size(); ++i) {
              in_shapes.push_back({in_sizes[i].first, in_sizes[i].second, channels, type});
              out_shapes.push_back({out_sizes[i].first, out_sizes[i].second, channels, type});
              const float a = angle(rng), s = scale(rng);
              matrices.push_back({s * std::cos(a), -s * std::sin(a), shift(rng), s * std::sin(a), s * std::cos(a),
                                  shift(rng)});
            }
            WarpParams params;
            params.matrices = reinterpret_cast<const float(*)[6]>(matrices.data());
            params.inverse_map = inverse;
            params.border = static_cast<BorderMode>(border);
            params.border_value[0] = 12.5f;
            params.border_value[1] = 250.0f;
            params.border_value[2] = -3.0f;
            params.border_value[3] = 128.0f;
            const auto in = test::random_batch(in_shapes, rng());
            const auto want = test::filled_batch(out_shapes);
            const auto got = test::filled_batch(out_shapes, 0x5A);
            ASSERT_NO_FATAL_FAILURE(test::parity_run(
                *m_cpu, named, OpCall{OpKind::kWarp, &params, in.view(), want.view(), nullptr}, got.view()));
            for (int64_t i = 0; i < in.count(); ++i) {
              const auto diff = test::image_diff(want[i], got[i], 0.0);
              EXPECT_EQ(diff.over, 0) << named.name << " " << pixel_type_name(type) << " channels " << channels
                                      << " border " << border_mode_name(params.border) << " inverse " << inverse
                                      << " image " << i << ": " << diff.first;
            }
          }
        }
      }
    }
  }
}

}  // namespace
}  // namespace kiln
