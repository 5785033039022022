// matte on the CPU (the reference): hand-computed values, the run-by-run mask rows against matte_px.h's per-pixel
// function on maps with long runs, noise and values on the threshold, the person counts, threading, and validation.
#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <vector>

#include "common/image_ops_util.h"
#include "core/thread_pool.h"
#include "kiln/image_ops.h"
#include "ops/image_desc.h"
#include "ops/matte.h"

namespace kiln {
namespace {

ExecOptions cpu_exec() {
  ExecOptions o;
  o.mode = ExecMode::kCpu;
  return o;
}

std::vector<uint8_t> matte_of(const std::vector<float>& map, int32_t mw, int32_t mh, int32_t w, int32_t h,
                              const MatteParams& p) {
  std::vector<float> in = map;
  std::vector<uint8_t> out(static_cast<size_t>(w) * h, 0xCD);
  const ImageView iv = image_view_packed(in.data(), mw, mh, 1, PixelType::kF32);
  const ImageView ov = image_view_packed(out.data(), w, h, 1, PixelType::kU8);
  const VarShapeBatch ib = VarShapeBatch::wrap({iv}), ob = VarShapeBatch::wrap({ov});
  const Status st = matte_render(p, ib.view(), ob.view(), cpu_exec());
  EXPECT_TRUE(st.is_ok()) << st.to_string();
  return out;
}

TEST(MatteCpu, HandComputedValues) {
  // Map [0, 1] to four columns: sample positions -0.25, 0.25, 0.75, 1.25 clamp to 0, 0.25, 0.75, 1.
  MatteParams mask;
  EXPECT_EQ(matte_of({0.0f, 1.0f}, 2, 1, 4, 1, mask), (std::vector<uint8_t>{0, 0, 255, 255}));
  mask.foreground = 1;
  mask.threshold = 0.25f;  // p >= threshold, so the 0.25 sample is in
  EXPECT_EQ(matte_of({0.0f, 1.0f}, 2, 1, 4, 1, mask), (std::vector<uint8_t>{0, 1, 1, 1}));
  mask.foreground = 235;  // an encoder's limited-range white and black luma
  mask.background = 16;
  EXPECT_EQ(matte_of({0.0f, 1.0f}, 2, 1, 4, 1, mask), (std::vector<uint8_t>{16, 235, 235, 235}));
  MatteParams alpha;
  alpha.output = MatteOutput::kAlpha;
  alpha.feather = 1.0f;  // the ramp is p itself: round(p * 255)
  EXPECT_EQ(matte_of({0.0f, 1.0f}, 2, 1, 4, 1, alpha), (std::vector<uint8_t>{0, 64, 191, 255}));
  alpha.feather = 0.1f;  // (p - 0.45) * 10, clamped
  EXPECT_EQ(matte_of({0.0f, 1.0f}, 2, 1, 4, 1, alpha), (std::vector<uint8_t>{0, 0, 255, 255}));
  // A region: the right column only, stretched over the output; a NaN probability is background.
  MatteParams right;
  right.region = {1, 0, 1, 1};
  EXPECT_EQ(matte_of({0.0f, 1.0f}, 2, 1, 3, 2, right), (std::vector<uint8_t>(6, 255)));
  EXPECT_EQ(matte_of({NAN, NAN}, 2, 1, 2, 1, alpha), (std::vector<uint8_t>{0, 0}));
}

// A smooth blob (long runs, as a person's map gives), noise, and quantized values that hit the threshold exactly.
std::vector<float> map_make(int32_t w, int32_t h, int kind, uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> u(0.0f, 1.0f);
  std::vector<float> m(static_cast<size_t>(w) * h);
  for (int32_t y = 0; y < h; ++y) {
    for (int32_t x = 0; x < w; ++x) {
      float v = u(rng);
      if (kind == 0) {
        const float dx = (x - w * 0.5f) / (w * 0.3f), dy = (y - h * 0.4f) / (h * 0.35f);
        v = 1.0f / (1.0f + std::exp(4.0f * (dx * dx + dy * dy - 1.0f)));
      } else if (kind == 2) {
        v = std::round(v * 4.0f) / 8.0f + 0.25f;  // 0.25, 0.375, 0.5, 0.625, 0.75
      }
      m[static_cast<size_t>(y) * w + x] = v;
    }
  }
  return m;
}

TEST(MatteCpu, EqualsThePerPixelFunction) {
  ThreadPool pool(3);
  const struct Size {
    int32_t mw, mh, w, h;
  } sizes[] = {{256, 256, 1280, 720}, {17, 9, 131, 67}, {1, 1, 5, 3}, {64, 48, 32, 20}, {5, 40, 301, 1}};
  const MatteRegion regions[] = {{}, {0, 32, 256, 192}, {0.5f, 1.25f, 3.0f, 2.5f}};
  uint32_t seed = 7;
  int64_t compared = 0;
  for (const Size& s : sizes) {
    for (int kind = 0; kind < 3; ++kind) {
      const std::vector<float> map = map_make(s.mw, s.mh, kind, seed++);
      for (const MatteRegion& r : regions) {
        if (r.x + r.width > static_cast<float>(s.mw) || r.y + r.height > static_cast<float>(s.mh)) continue;
        for (const MatteOutput output : {MatteOutput::kMask, MatteOutput::kAlpha}) {
          MatteParams p;
          p.output = output;
          p.region = r;
          p.threshold = kind == 2 ? 0.5f : 0.37f;
          p.foreground = 200;
          p.background = kind == 1 ? 16 : 0;  // an encoder's black luma
          SCOPED_TRACE(testing::Message() << s.mw << "x" << s.mh << " -> " << s.w << "x" << s.h << " kind " << kind
                                          << " region " << r.x << "," << r.y << " " << r.width << "x" << r.height
                                          << " " << matte_output_name(output));
          std::vector<float> in = map;
          std::vector<uint8_t> serial(static_cast<size_t>(s.w) * s.h), threaded(serial.size());
          const ImageView iv = image_view_packed(in.data(), s.mw, s.mh, 1, PixelType::kF32);
          const VarShapeBatch ib = VarShapeBatch::wrap({iv});
          const auto view = [&](std::vector<uint8_t>& out) {
            return VarShapeBatch::wrap({image_view_packed(out.data(), s.w, s.h, 1, PixelType::kU8)});
          };
          const VarShapeBatch a = view(serial), b = view(threaded);
          int64_t counted[2] = {-1, -1};
          ASSERT_TRUE(matte_cpu(OpCall{OpKind::kMatte, &p, ib.view(), a.view(), &counted[0]}, nullptr).is_ok());
          ASSERT_TRUE(matte_cpu(OpCall{OpKind::kMatte, &p, ib.view(), b.view(), &counted[1]}, &pool).is_ok());
          EXPECT_EQ(serial, threaded);
          EXPECT_EQ(counted[0], counted[1]);
          const KilnMatteParams kp = matte_params_resolve(p);
          const KilnImageDesc d = image_desc(iv);
          int64_t differ = 0, on = 0;
          for (int32_t y = 0; y < s.h; ++y) {
            for (int32_t x = 0; x < s.w; ++x) {
              const uint8_t want = kiln_matte_at(reinterpret_cast<const uint8_t*>(in.data()), d, s.w, s.h, x, y, kp);
              differ += serial[static_cast<size_t>(y) * s.w + x] != want;
              on += output == MatteOutput::kMask ? want == p.foreground : want >= 128;
            }
          }
          EXPECT_EQ(differ, 0);
          EXPECT_EQ(counted[0], on) << "person pixels";
          if (kind == 0 && r.width == 0 && s.mw >= 8) {
            EXPECT_GT(on, 0);  // the blob is there
          }
          ++compared;
        }
      }
    }
  }
  EXPECT_EQ(compared, 60);
}

TEST(MatteCpu, StridedViewsAndBatches) {
  // Maps that are crops of larger buffers and outputs with padded rows, two images of different sizes in one call.
  const std::vector<float> a = map_make(40, 30, 0, 1), b = map_make(12, 12, 1, 2);
  std::vector<float> big(60 * 50, 0.9f);
  for (int32_t y = 0; y < 30; ++y) std::copy(&a[y * 40], &a[y * 40] + 40, &big[(y + 5) * 60 + 7]);
  ImageView crop = image_view_packed(big.data(), 60, 50, 1, PixelType::kF32).crop(7, 5, 40, 30);
  std::vector<float> bcopy = b;
  std::vector<uint8_t> out_a(100 * 70, 0xCD), out_b(33 * 20);
  ImageView oa = image_view_packed(out_a.data(), 100, 70, 1, PixelType::kU8).crop(0, 0, 90, 70);
  const ImageView ob = image_view_packed(out_b.data(), 33, 20, 1, PixelType::kU8);
  MatteParams p;
  const VarShapeBatch in = VarShapeBatch::wrap({crop, image_view_packed(bcopy.data(), 12, 12, 1, PixelType::kF32)});
  const VarShapeBatch out = VarShapeBatch::wrap({oa, ob});
  ASSERT_TRUE(matte_render(p, in.view(), out.view(), cpu_exec()).is_ok());
  EXPECT_EQ(std::vector<uint8_t>(out_b.begin(), out_b.end()), matte_of(b, 12, 12, 33, 20, p));
  const std::vector<uint8_t> alone = matte_of(a, 40, 30, 90, 70, p);
  for (int32_t y = 0; y < 70; ++y) {
    ASSERT_TRUE(std::equal(alone.begin() + y * 90, alone.begin() + (y + 1) * 90, out_a.begin() + y * 100)) << y;
    ASSERT_EQ(out_a[static_cast<size_t>(y) * 100 + 95], 0xCD) << "wrote past the row";
  }
}

// A composite is the alpha op's bytes blending the frame over the background (round(b + (f - b) * a / 255)), the
// person pixels those alphas of 128 or more; batches split by image across threads (the frames and backgrounds
// sliced with them) give the same bytes as one thread.
TEST(MatteCpu, CompositeBlendsTheFrameOverTheBackgroundByTheAlpha) {
  EXPECT_EQ(kiln_matte_blend(200, 10, 0), 10);
  EXPECT_EQ(kiln_matte_blend(200, 10, 255), 200);
  EXPECT_EQ(kiln_matte_blend(200, 10, 128), 105);  // 10 + 190 * 128 / 255 = 105.37
  EXPECT_EQ(kiln_matte_blend(10, 200, 128), 105);  // 200 - 190 * 128 / 255 = 104.63
  ThreadPool pool(2);
  constexpr int32_t kCount = 3, kMap = 32;
  const int32_t widths[kCount] = {96, 41, 64}, heights[kCount] = {54, 23, 64};
  std::vector<std::vector<float>> maps;
  std::vector<ImageView> map_views, frame_views, back_views;
  std::vector<ImageShape> rgb, gray;
  for (int32_t i = 0; i < kCount; ++i) {
    maps.push_back(map_make(kMap, kMap, 0, 20 + i));
    rgb.push_back({widths[i], heights[i], 3, PixelType::kU8, Layout::kHWC});
    gray.push_back({widths[i], heights[i], 1, PixelType::kU8, Layout::kHWC});
  }
  const auto frames = test::random_batch(rgb, 11), backs = test::random_batch(rgb, 12);
  for (int32_t i = 0; i < kCount; ++i) {
    map_views.push_back(image_view_packed(maps[i].data(), kMap, kMap, 1, PixelType::kF32));
    frame_views.push_back(frames[i]);
    back_views.push_back(backs[i]);
  }
  MatteParams p;
  p.output = MatteOutput::kComposite;
  p.feather = 0.3f;
  p.frames = frame_views.data();
  p.backgrounds = back_views.data();
  const VarShapeBatch in = VarShapeBatch::wrap(map_views);
  const auto serial = test::filled_batch(rgb), threaded = test::filled_batch(rgb), alphas = test::filled_batch(gray);
  std::vector<int64_t> serial_counts(kCount, -1), threaded_counts(kCount, -1);
  ASSERT_TRUE(matte_render(p, in.view(), serial.view(), cpu_exec(), nullptr, serial_counts.data()).is_ok());
  ExecOptions with_pool = cpu_exec();
  with_pool.pool = &pool;
  ASSERT_TRUE(matte_render(p, in.view(), threaded.view(), with_pool, nullptr, threaded_counts.data()).is_ok());
  MatteParams alpha = p;
  alpha.output = MatteOutput::kAlpha;
  ASSERT_TRUE(matte_render(alpha, in.view(), alphas.view(), cpu_exec()).is_ok());
  for (int32_t i = 0; i < kCount; ++i) {
    int64_t differ = 0, person = 0;
    for (int32_t y = 0; y < heights[i]; ++y) {
      for (int32_t x = 0; x < widths[i]; ++x) {
        const uint8_t a = alphas[i].row<uint8_t>(y)[x];
        person += a >= 128;
        for (int32_t c = 0; c < 3; ++c) {
          const uint8_t want =
              kiln_matte_blend(frames[i].row<uint8_t>(y)[3 * x + c], backs[i].row<uint8_t>(y)[3 * x + c], a);
          differ += serial[i].row<uint8_t>(y)[3 * x + c] != want;
          differ += threaded[i].row<uint8_t>(y)[3 * x + c] != want;
        }
      }
    }
    EXPECT_EQ(differ, 0) << "image " << i;
    EXPECT_GT(person, 0) << "image " << i;
    EXPECT_EQ(serial_counts[i], person) << "image " << i;
    EXPECT_EQ(threaded_counts[i], person) << "image " << i;
  }
}

TEST(MatteValidate, RefusesWrongCalls) {
  std::vector<float> map(16 * 16, 0.5f);
  std::vector<uint8_t> out8(32 * 32), out_rgb(32 * 32 * 3);
  std::vector<float> outf(32 * 32);
  const ImageView m = image_view_packed(map.data(), 16, 16, 1, PixelType::kF32);
  const ImageView o = image_view_packed(out8.data(), 32, 32, 1, PixelType::kU8);
  const auto check = [](const MatteParams& p, const ImageView& in, const ImageView& out, const char* words) {
    const VarShapeBatch ib = VarShapeBatch::wrap({in}), ob = VarShapeBatch::wrap({out});
    const Status st = op_validate(OpCall{OpKind::kMatte, &p, ib.view(), ob.view(), nullptr});
    EXPECT_EQ(st.code(), Errc::kInvalidArgument) << words;
    EXPECT_NE(st.message().find(words), std::string::npos) << st.message();
  };
  MatteParams ok;
  const VarShapeBatch ib = VarShapeBatch::wrap({m}), ob = VarShapeBatch::wrap({o});
  EXPECT_TRUE(op_validate(OpCall{OpKind::kMatte, &ok, ib.view(), ob.view(), nullptr}).is_ok());
  check(ok, image_view_packed(out8.data(), 16, 16, 1, PixelType::kU8), o, "float32");
  check(ok, image_view_packed(map.data(), 8, 8, 3, PixelType::kF32), o, "1 channel");
  check(ok, m, image_view_packed(out_rgb.data(), 32, 32, 3, PixelType::kU8), "uint8, 1 channel");
  check(ok, m, image_view_packed(outf.data(), 32, 32, 1, PixelType::kF32), "uint8, 1 channel");
  MatteParams bad = ok;
  bad.threshold = 1.0f;
  check(bad, m, o, "threshold");
  bad = ok;
  bad.feather = -0.1f;
  check(bad, m, o, "feather");
  bad = ok;
  bad.foreground = 0;
  check(bad, m, o, "foreground and background are both 0");
  bad.background = 235;
  EXPECT_TRUE(op_validate(OpCall{OpKind::kMatte, &bad, ib.view(), ob.view(), nullptr}).is_ok());
  bad = ok;
  bad.region = {4, 0, 13, 16};
  check(bad, m, o, "outside the 16x16 map");
  bad.region = {-1, 0, 4, 4};
  check(bad, m, o, "non-negative");
  bad.region = {0, 0, NAN, 4};
  check(bad, m, o, "finite");
  std::vector<uint8_t> frame(32 * 32 * 3), small(16 * 16 * 3);
  const ImageView rgb = image_view_packed(out_rgb.data(), 32, 32, 3, PixelType::kU8);
  const ImageView frame_view = image_view_packed(frame.data(), 32, 32, 3, PixelType::kU8);
  const ImageView small_view = image_view_packed(small.data(), 16, 16, 3, PixelType::kU8);
  MatteParams composite = ok;
  composite.output = MatteOutput::kComposite;
  check(composite, m, rgb, "needs its frames and backgrounds");
  composite.frames = &frame_view;
  composite.backgrounds = &small_view;
  check(composite, m, rgb, "the background must be uint8 RGB HWC of the output's 32x32");
  composite.backgrounds = &frame_view;
  check(composite, m, o, "output must be uint8, RGB HWC");
  {
    const VarShapeBatch rgb_batch = VarShapeBatch::wrap({rgb});
    EXPECT_TRUE(op_validate(OpCall{OpKind::kMatte, &composite, ib.view(), rgb_batch.view(), nullptr}).is_ok());
  }
  const VarShapeBatch two = VarShapeBatch::wrap({o, o});
  const Status st = op_validate(OpCall{OpKind::kMatte, &ok, ib.view(), two.view(), nullptr});
  EXPECT_NE(st.message().find("1 inputs but 2 outputs"), std::string::npos) << st.message();
}

}  // namespace
}  // namespace kiln
