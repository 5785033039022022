// The u8 warp loops of the ISA variants (src/ops/cpu/warp_loops.h: generic, and avx2 where the CPU has it) against
// the reference mode (KILN_CPU_ISA=scalar: kiln_warp_pixel's expressions) on the same inputs: random u8 images of
// 1, 3 and 4 channels, sizes from 1x1 to 640x480, outputs with and without an 8-pixel tail, random similarity and
// affine matrices that map partly or wholly outside the source, half-pixel ties, every border mode, strided
// views, batches split over threads, and a source that ends right before an unreadable page (the gathers must not
// read past the image).
// Tolerance: at most 1 u8 level apart and at least 99 % of the values equal, the contract for a fast u8 warp (it may
// use fixed point). Today's loops evaluate the reference's float expressions lane by lane, so the suite also
// expects every value equal; a fixed-point variant would drop that line and keep the two above.
#include <gtest/gtest.h>
#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "common/image_ops_util.h"
#include "core/cpu_isa.h"
#include "core/thread_pool.h"
#include "kiln/image_ops.h"
#include "kiln/ops/warp.h"

namespace kiln {
namespace {

using Matrix = std::array<float, 6>;

constexpr double kMaxLevels = 1.0;
constexpr double kMinEqualFraction = 0.99;

const BorderMode kBorders[] = {BorderMode::kConstant, BorderMode::kReplicate, BorderMode::kReflect,
                               BorderMode::kReflect101};

class WarpFastPath : public ::testing::Test {
 protected:
  void SetUp() override {
    m_saved = cpu_isa_active();
    m_fast.push_back(CpuIsa::kGeneric);
    if (cpu_isa_best() == CpuIsa::kAvx2) m_fast.push_back(CpuIsa::kAvx2);
  }
  void TearDown() override {
    cpu_isa_set(m_saved);
    if (m_values > 0) {
      std::printf("[ measured ] %lld values, %lld unequal, max %.0f\n", static_cast<long long>(m_values),
                  static_cast<long long>(m_unequal), m_max);
    }
    EXPECT_EQ(m_unequal, 0) << "the variants are bit-exact today (warp_loops.h)";
  }

  // Runs `params` on in -> expected in the reference mode and in -> actual in each fast variant (actual is
  // refilled with `fill` first), and checks the tolerance. `pool` serves the fast runs.
  void check(const WarpParams& params, const VarShapeBatch& in, const VarShapeBatch& expected,
             const VarShapeBatch& actual, const std::string& what, ThreadPool* pool = nullptr) {
    cpu_isa_set(CpuIsa::kScalar);
    ASSERT_TRUE(warp_affine(params, in.view(), expected.view(), test::cpu_exec()).is_ok()) << what;
    for (CpuIsa isa : m_fast) {
      for (int64_t i = 0; i < actual.count(); ++i) {
        for (int32_t y = 0; y < actual[i].height; ++y) {
          std::memset(actual[i].row<uint8_t>(y), 0xCD, actual[i].pixel_size() * static_cast<size_t>(actual[i].width));
        }
      }
      cpu_isa_set(isa);
      ASSERT_TRUE(warp_affine(params, in.view(), actual.view(), test::cpu_exec(pool)).is_ok()) << what;
      for (int64_t i = 0; i < actual.count(); ++i) {
        const auto diff = test::image_diff(actual[i], expected[i], 0.0);
        const auto values = static_cast<int64_t>(actual[i].width) * actual[i].height * actual[i].channels;
        const std::string at = what + " " + cpu_isa_name(isa) + " image " + std::to_string(i);
        EXPECT_LE(diff.max_abs, kMaxLevels) << at << ": " << diff.first;
        EXPECT_GE(1.0 - static_cast<double>(diff.over) / static_cast<double>(values), kMinEqualFraction) << at;
        m_values += values;
        m_unequal += diff.over;
        m_max = std::max(m_max, diff.max_abs);
      }
    }
  }

  CpuIsa m_saved = CpuIsa::kScalar;
  std::vector<CpuIsa> m_fast;
  int64_t m_values = 0;
  int64_t m_unequal = 0;
  double m_max = 0;
};

// A destination -> source matrix: output pixel (ox/2, oy/2) lands on source point (cx, cy); the 2x2 part is a
// similarity (scale s source pixels per output pixel, any angle) or a random affine map.
Matrix random_matrix(std::mt19937& rng, int32_t in_w, int32_t in_h, int32_t out_w, int32_t out_h, bool similarity) {
  std::uniform_real_distribution<float> unit(0.0f, 1.0f);
  float a, b, c, d;
  if (similarity) {
    const float angle = (unit(rng) * 2.0f - 1.0f) * 3.14159265f;
    const float scale = std::exp(std::log(0.2f) + unit(rng) * std::log(25.0f));  // 0.2 .. 5
    a = scale * std::cos(angle);
    b = -scale * std::sin(angle);
    c = -b;
    d = a;
  } else {
    do {
      a = unit(rng) * 6.0f - 3.0f;
      b = unit(rng) * 6.0f - 3.0f;
      c = unit(rng) * 6.0f - 3.0f;
      d = unit(rng) * 6.0f - 3.0f;
    } while (std::fabs(a * d - b * c) < 0.05f);
  }
  // centres from 30 % outside to 30 % beyond the far edge: often partly, sometimes wholly outside
  const float cx = (unit(rng) * 1.6f - 0.3f) * static_cast<float>(in_w);
  const float cy = (unit(rng) * 1.6f - 0.3f) * static_cast<float>(in_h);
  const float ox = 0.5f * static_cast<float>(out_w);
  const float oy = 0.5f * static_cast<float>(out_h);
  return {a, b, cx - (a * ox + b * oy), c, d, cy - (c * ox + d * oy)};
}

// Matrices that put coordinates on exact halves (ties for the rounding), integers and the last inside pixel pair.
std::vector<Matrix> special_matrices(int32_t in_w, int32_t in_h) {
  const auto w = static_cast<float>(in_w);
  const auto h = static_cast<float>(in_h);
  return {
      {1, 0, 0, 0, 1, 0},                                // identity
      {0.5f, 0, 0.25f, 0, 0.5f, 0.25f},                  // 2x up, fractions 0.25 and 0.75
      {1, 0, 0.5f, 0, 1, 0.5f},                          // every fraction 0.5 (ties)
      {2, 0, 0.5f, 0, 2, -0.5f},                         // 2x down, halves
      {1, 0, -3, 0, 1, 2},                               // integer shift
      {0.05f, 0, w - 2.0f, 0, 0.07f, h - 2.0f},          // zoom into the bottom-right pixel quad
      {-1, 0, w - 1.0f, 0, -1, h - 1.0f},                // 180 degrees, exact
  };
}

TEST_F(WarpFastPath, U8MatchesTheReferenceWithinOneLevel) {
  struct Size {
    int32_t w, h;
  };
  const Size in_sizes[] = {{640, 480}, {37, 29}, {8, 8}, {2, 2}, {1, 1}, {1, 5}};
  const Size out_sizes[] = {{112, 112}, {33, 17}, {7, 3}, {1, 1}, {64, 9}};
  std::mt19937 rng(2024);
  std::uniform_real_distribution<float> level(0.0f, 255.0f);
  ThreadPool pool(3);
  uint32_t seed = 900;
  int runs = 0;
  for (int32_t channels : {1, 3, 4}) {
    for (const Size& is : in_sizes) {
      const auto in = test::random_batch({{is.w, is.h, channels, PixelType::kU8}}, seed++);
      for (const Size& os : out_sizes) {
        const auto expected = test::filled_batch({{os.w, os.h, channels, PixelType::kU8}});
        const auto actual = test::filled_batch({{os.w, os.h, channels, PixelType::kU8}});
        std::vector<Matrix> matrices = special_matrices(is.w, is.h);
        for (int k = 0; k < 6; ++k) matrices.push_back(random_matrix(rng, is.w, is.h, os.w, os.h, k % 2 == 0));
        for (size_t k = 0; k < matrices.size(); ++k) {
          for (BorderMode border : kBorders) {
            WarpParams params;
            params.matrices = reinterpret_cast<const float(*)[6]>(&matrices[k]);
            params.inverse_map = true;
            params.border = border;
            for (float& v : params.border_value) v = level(rng);
            params.border_value[1] = 76.5f;  // a tie: the reference rounds it to even (76)
            const std::string what = std::to_string(channels) + "ch " + std::to_string(is.w) + "x" +
                                     std::to_string(is.h) + "->" + std::to_string(os.w) + "x" + std::to_string(os.h) +
                                     " matrix " + std::to_string(k) + " " + border_mode_name(border);
            check(params, in, expected, actual, what, (runs++ % 3) == 0 ? &pool : nullptr);
            if (HasFatalFailure()) return;
          }
        }
      }
    }
  }
}

// Source -> destination matrices (inverted like cv::invertAffineTransform), a batch of three shapes in one call on
// a pool, so that the pool's row ranges start and end inside images.
TEST_F(WarpFastPath, BatchesOnAPoolMatchTheReference) {
  const std::vector<ImageShape> in_shapes = {{640, 480, 3, PixelType::kU8}, {50, 40, 3, PixelType::kU8},
                                             {97, 61, 3, PixelType::kU8}};
  const std::vector<ImageShape> out_shapes = {{112, 112, 3, PixelType::kU8}, {17, 93, 3, PixelType::kU8},
                                              {130, 7, 3, PixelType::kU8}};
  const auto in = test::random_batch(in_shapes, 41);
  const auto expected = test::filled_batch(out_shapes);
  const auto actual = test::filled_batch(out_shapes);
  // forward similarities (the face-alignment case: 200 px around a point onto 112x112, rotated)
  const std::vector<Matrix> forward = {{0.5478f, -0.1164f, -97.98f, 0.1164f, 0.5478f, -108.4f},
                                       {0.3f, 0.1f, 2.0f, -0.1f, 0.3f, 60.0f},
                                       {1.4f, -0.5f, 3.0f, 0.5f, 1.4f, -30.0f}};
  for (int threads : {1, 2, 5}) {
    ThreadPool pool(threads);
    for (BorderMode border : kBorders) {
      WarpParams params;
      params.matrices = reinterpret_cast<const float(*)[6]>(forward.data());
      params.border = border;
      params.border_value[0] = 12;
      params.border_value[2] = 250;
      check(params, in, expected, actual, std::string(border_mode_name(border)) + " threads " + std::to_string(threads),
            &pool);
      if (HasFatalFailure()) return;
    }
  }
}

// Views into bigger buffers: row padding and offsets on both sides; the bytes around the output are left alone.
TEST_F(WarpFastPath, StridedViewsMatchTheReference) {
  std::mt19937 rng(7);
  for (int32_t channels : {1, 3, 4}) {
    const auto in_parent = test::random_batch({{300, 200, channels, PixelType::kU8}}, 60 + channels);
    const auto expected_parent = test::filled_batch({{140, 130, channels, PixelType::kU8}});
    const auto actual_parent = test::filled_batch({{140, 130, channels, PixelType::kU8}});
    const auto in = VarShapeBatch::wrap({in_parent[0].crop(13, 7, 251, 180)});
    const auto expected = VarShapeBatch::wrap({expected_parent[0].crop(5, 9, 113, 111)});
    const auto actual = VarShapeBatch::wrap({actual_parent[0].crop(5, 9, 113, 111)});
    for (int k = 0; k < 8; ++k) {
      const Matrix m = random_matrix(rng, 251, 180, 113, 111, k % 2 == 0);
      for (BorderMode border : kBorders) {
        WarpParams params;
        params.matrices = reinterpret_cast<const float(*)[6]>(&m);
        params.inverse_map = true;
        params.border = border;
        check(params, in, expected, actual, std::to_string(channels) + "ch matrix " + std::to_string(k));
        if (HasFatalFailure()) return;
      }
    }
    const auto outside = test::image_diff(actual_parent[0], expected_parent[0], 0.0);
    EXPECT_EQ(outside.over, 0) << "padding written? " << outside.first;
    const ImageView& p = actual_parent[0];
    EXPECT_EQ(p.row<uint8_t>(0)[0], 0xCD);
    EXPECT_EQ(p.row<uint8_t>(p.height - 1)[p.width * channels - 1], 0xCD);
  }
}

// A packed source whose last byte sits right before a PROT_NONE page: a read past the image faults.
TEST_F(WarpFastPath, ReadsStayInsideTheSource) {
  const auto page = static_cast<size_t>(sysconf(_SC_PAGESIZE));
  std::mt19937 rng(11);
  std::uniform_int_distribution<int> byte(0, 255);
  for (int32_t channels : {1, 3, 4}) {
    for (int32_t width : {9, 16, 21}) {
      const int32_t height = 6;
      const size_t bytes = static_cast<size_t>(width) * height * channels;
      const size_t span = (bytes + page - 1) / page * page + page;
      void* map = mmap(nullptr, span, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
      ASSERT_NE(map, MAP_FAILED);
      ASSERT_EQ(mprotect(static_cast<uint8_t*>(map) + span - page, page, PROT_NONE), 0);
      uint8_t* data = static_cast<uint8_t*>(map) + (span - page - bytes);
      for (size_t i = 0; i < bytes; ++i) data[i] = static_cast<uint8_t>(byte(rng));
      const auto in = VarShapeBatch::wrap({image_view_packed(data, width, height, channels, PixelType::kU8)});
      const auto expected = test::filled_batch({{40, 24, channels, PixelType::kU8}});
      const auto actual = test::filled_batch({{40, 24, channels, PixelType::kU8}});
      std::vector<Matrix> matrices = special_matrices(width, height);
      // sweeps along the last row and the last column, right up to the last pixel pair
      matrices.push_back({0.3f, 0, 0, 0, 0.01f, static_cast<float>(height) - 1.6f});
      matrices.push_back({0.01f, 0, static_cast<float>(width) - 1.6f, 0, 0.3f, 0});
      for (int k = 0; k < 4; ++k) matrices.push_back(random_matrix(rng, width, height, 40, 24, k % 2 == 0));
      for (size_t k = 0; k < matrices.size(); ++k) {
        WarpParams params;
        params.matrices = reinterpret_cast<const float(*)[6]>(&matrices[k]);
        params.inverse_map = true;
        params.border = kBorders[k % 4];
        check(params, in, expected, actual, std::to_string(channels) + "ch width " + std::to_string(width) +
                                                " matrix " + std::to_string(k));
      }
      munmap(map, span);
      if (HasFatalFailure()) return;
    }
  }
}

}  // namespace
}  // namespace kiln
