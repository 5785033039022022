// The normalize family on the CPU: against a naive loop (bit for bit), in place, threaded vs single-threaded,
// strided views, and the negative suite.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <vector>

#include "common/image_ops_util.h"
#include "core/thread_pool.h"
#include "kiln/image_ops.h"
#include "kiln/ops/normalize.h"
#include "ops/normalize.h"

namespace kiln {
namespace {

std::vector<ImageShape> shapes_of(int32_t channels, PixelType type = PixelType::kF32, Layout layout = Layout::kCHW) {
  std::vector<ImageShape> shapes;
  for (auto [w, h] : std::vector<std::pair<int32_t, int32_t>>{{1, 1}, {7, 5}, {33, 17}, {224, 224}, {3, 129}}) {
    shapes.push_back({w, h, channels, type, layout});
  }
  return shapes;
}

NormalizeParams imagenet(int32_t channels) {
  NormalizeParams p;
  const float mean[] = {0.485f, 0.456f, 0.406f, 0.5f};
  const float std_dev[] = {0.229f, 0.224f, 0.225f, 0.25f};
  for (int32_t c = 0; c < channels; ++c) {
    p.mean.push_back(mean[c]);
    p.std.push_back(std_dev[c]);
  }
  return p;
}

Status run_cpu(const NormalizeParams& params, const VarShapeBatch& in, const VarShapeBatch& out,
               ThreadPool* pool = nullptr) {
  return normalize(params, in.view(), out.view(), test::cpu_exec(pool));
}

void expect_naive(const NormalizeParams& params, const VarShapeBatch& in, const VarShapeBatch& out) {
  for (int64_t i = 0; i < in.count(); ++i) {
    for (int32_t c = 0; c < in[i].channels; ++c) {
      for (int32_t y = 0; y < in[i].height; ++y) {
        const float* src = in[i].row<const float>(y, c);
        const float* dst = out[i].row<const float>(y, c);
        for (int32_t x = 0; x < in[i].width; ++x) {
          const float want = (src[x] - params.mean[static_cast<size_t>(c)]) / params.std[static_cast<size_t>(c)];
          ASSERT_EQ(std::memcmp(&want, &dst[x], 4), 0) << "image " << i << " " << x << "," << y << "," << c;
        }
      }
    }
  }
}

TEST(Normalize, MatchesNaiveLoopExactly) {
  for (int32_t channels : {1, 3, 4}) {
    const auto params = imagenet(channels);
    const auto in = test::random_batch(shapes_of(channels), 21, 0.0f, 1.0f);
    const auto out = test::filled_batch(shapes_of(channels));
    ASSERT_TRUE(run_cpu(params, in, out).is_ok());
    expect_naive(params, in, out);
  }
}

TEST(Normalize, InPlace) {
  const auto params = imagenet(3);
  const auto in = test::random_batch(shapes_of(3), 22, -10.0f, 300.0f);
  const auto copy = test::random_batch(shapes_of(3), 22, -10.0f, 300.0f);
  ASSERT_TRUE(run_cpu(params, in, in).is_ok());
  expect_naive(params, copy, in);
}

TEST(Normalize, StridedViews) {
  // Rows 40 floats apart and planes 2000 floats apart inside a larger buffer.
  std::vector<float> src(3 * 2000 + 64), dst(3 * 2000 + 64, -1.0f);
  for (size_t k = 0; k < src.size(); ++k) src[k] = static_cast<float>(k % 251) * 0.01f;
  ImageView in{src.data(), 33, 17, 3, 40 * 4, PixelType::kF32, Layout::kCHW, 2000 * 4};
  ImageView out{dst.data(), 33, 17, 3, 40 * 4, PixelType::kF32, Layout::kCHW, 2000 * 4};
  const auto params = imagenet(3);
  const auto ib = VarShapeBatch::wrap({in});
  const auto ob = VarShapeBatch::wrap({out});
  ASSERT_TRUE(run_cpu(params, ib, ob).is_ok());
  expect_naive(params, ib, ob);
  EXPECT_EQ(dst[33], -1.0f);  // padding between rows untouched
}

// In place is the output being the input; one that overlaps it otherwise would be written while rows of it are
// still to be read (by other threads on the CPU, other work items on a GPU): refused before any backend runs.
TEST(Normalize, AnOutputOverlappingTheInputOtherThanInPlaceIsRefused) {
  std::vector<float> buffer(3 * 2000 + 700, 0.5f);
  const ImageView in{buffer.data(), 33, 17, 3, 40 * 4, PixelType::kF32, Layout::kCHW, 2000 * 4};
  ImageView shifted = in;  // one row further
  shifted.data = buffer.data() + 40;
  ImageView planes = in;  // the same first pixel, planes closer together
  planes.plane_stride = 1000 * 4;
  ImageView rows = in;  // the same first pixel, rows closer together
  rows.row_stride = 36 * 4;
  const auto params = imagenet(3);
  for (const ImageView& out : {shifted, planes, rows}) {
    const Status st =
        normalize(params, VarShapeBatchView{&in, 1}, VarShapeBatchView{&out, 1}, test::cpu_exec(nullptr));
    EXPECT_EQ(st.code(), Errc::kInvalidArgument) << st.to_string();
    EXPECT_NE(st.message().find("overlaps the input"), std::string::npos) << st.message();
  }
  EXPECT_TRUE(normalize(params, VarShapeBatchView{&in, 1}, VarShapeBatchView{&in, 1}, test::cpu_exec(nullptr)).is_ok());
  ImageView apart = in;  // the next plane's worth of memory: no overlap
  apart.data = buffer.data() + 3 * 2000;
  apart.channels = 1;
  ImageView one = in;
  one.channels = 1;
  EXPECT_TRUE(normalize(imagenet(1), VarShapeBatchView{&one, 1}, VarShapeBatchView{&apart, 1},
                        test::cpu_exec(nullptr)).is_ok());
}

TEST(Normalize, ThreadedMatchesSingleThreaded) {
  ThreadPool pool(2);
  const auto params = imagenet(3);
  const auto in = test::random_batch(shapes_of(3), 23, 0.0f, 255.0f);
  const auto a = test::filled_batch(shapes_of(3));
  const auto b = test::filled_batch(shapes_of(3), 0x11);
  ASSERT_TRUE(run_cpu(params, in, a).is_ok());
  ASSERT_TRUE(run_cpu(params, in, b, &pool).is_ok());
  ASSERT_NO_FATAL_FAILURE(test::assert_same_bytes(a, b));
}

TEST(Normalize, RejectsBadCalls) {
  const auto chw = test::random_batch({{8, 8, 3, PixelType::kF32, Layout::kCHW}}, 1);
  const auto hwc = test::random_batch({{8, 8, 3, PixelType::kF32, Layout::kHWC}}, 1);
  const auto u8 = test::random_batch({{8, 8, 3, PixelType::kU8, Layout::kCHW}}, 1);
  const auto f16 = test::random_batch({{8, 8, 3, PixelType::kF16, Layout::kCHW}}, 1);
  const auto one = test::random_batch({{8, 8, 1, PixelType::kF32, Layout::kCHW}}, 1);
  const auto small = test::random_batch({{8, 7, 3, PixelType::kF32, Layout::kCHW}}, 1);
  const auto pair = test::random_batch({{8, 8, 3, PixelType::kF32, Layout::kCHW}, {8, 8, 3, PixelType::kF32, Layout::kCHW}}, 1);
  const auto good = imagenet(3);
  EXPECT_TRUE(run_cpu(good, chw, chw).is_ok());
  EXPECT_EQ(run_cpu(good, hwc, hwc).code(), Errc::kInvalidArgument);   // not CHW
  EXPECT_EQ(run_cpu(good, u8, u8).code(), Errc::kInvalidArgument);     // not f32
  EXPECT_EQ(run_cpu(good, f16, f16).code(), Errc::kInvalidArgument);   // not f32
  EXPECT_EQ(run_cpu(good, one, one).code(), Errc::kInvalidArgument);   // channels != mean size
  EXPECT_EQ(run_cpu(good, chw, small).code(), Errc::kInvalidArgument); // sizes differ
  EXPECT_EQ(run_cpu(good, chw, pair).code(), Errc::kInvalidArgument);  // counts differ
  NormalizeParams bad = good;
  bad.std[1] = 0.0f;
  EXPECT_EQ(run_cpu(bad, chw, chw).code(), Errc::kInvalidArgument);    // zero std
  bad = good;
  bad.std.pop_back();
  EXPECT_EQ(run_cpu(bad, chw, chw).code(), Errc::kInvalidArgument);    // sizes differ
  bad = good;
  bad.mean[0] = std::numeric_limits<float>::quiet_NaN();
  EXPECT_EQ(run_cpu(bad, chw, chw).code(), Errc::kInvalidArgument);    // NaN mean
  bad = NormalizeParams{};
  EXPECT_EQ(run_cpu(bad, chw, chw).code(), Errc::kInvalidArgument);    // empty
}

}  // namespace
}  // namespace kiln
