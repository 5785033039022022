// blur on the CPU (the reference): its running sums and tap tables against blur_px.h's per-pixel functions applied
// pixel by pixel, on odd sizes, images smaller than the factor, padded rows and every channel count, threaded, in
// every ISA variant and in place; what a blur must do (a flat image stays flat, a stripe pattern goes, the mean level stays); validation.
#include <gtest/gtest.h>

#include <cstdlib>
#include <vector>

#include "common/image_ops_util.h"
#include "core/cpu_isa.h"
#include "core/thread_pool.h"
#include "kiln/image_ops.h"
#include "ops/blur.h"

namespace kiln {
namespace {

ExecOptions blur_cpu_exec(ThreadPool* pool = nullptr) {
  ExecOptions o;
  o.mode = ExecMode::kCpu;
  o.pool = pool;
  return o;
}

// A packed u8 image as its blur_px.h descriptor.
KilnImageDesc blur_small_desc(int32_t w, int32_t h, int32_t ch) {
  KilnImageDesc d{};
  d.width = w;
  d.height = h;
  d.channels = ch;
  d.row_stride = w * ch;
  return d;
}

// blur_px.h's functions, one pixel at a time: the definition the CPU's loops must equal.
std::vector<uint8_t> blur_by_pixel(const ImageView& in, const BlurParams& params) {
  const KilnBlurArgs a = blur_args_resolve(params);
  const int32_t ch = in.channels;
  const int32_t sw = kiln_blur_small_size(in.width, a.factor), sh = kiln_blur_small_size(in.height, a.factor);
  KilnImageDesc src{};
  src.width = in.width;
  src.height = in.height;
  src.channels = ch;
  src.row_stride = static_cast<int32_t>(in.row_stride);
  const auto* in_base = static_cast<const uint8_t*>(in.data);
  const KilnImageDesc small = blur_small_desc(sw, sh, ch);
  std::vector<uint8_t> s(static_cast<size_t>(sw) * sh * ch), t(s.size());
  for (int32_t y = 0; y < sh; ++y) {
    for (int32_t x = 0; x < sw; ++x) {
      for (int32_t c = 0; c < ch; ++c) s[(y * sw + x) * ch + c] = kiln_blur_shrink_px(in_base, src, a.factor, x, y, c);
    }
  }
  for (int32_t pass = 0; pass < params.passes; ++pass) {
    for (const int32_t horizontal : {1, 0}) {
      for (int32_t y = 0; y < sh; ++y) {
        for (int32_t x = 0; x < sw; ++x) {
          for (int32_t c = 0; c < ch; ++c) {
            t[(y * sw + x) * ch + c] = kiln_blur_box_px(s.data(), small, a, horizontal, x, y, c);
          }
        }
      }
      s.swap(t);
    }
  }
  std::vector<uint8_t> out(static_cast<size_t>(in.width) * in.height * ch);
  for (int32_t y = 0; y < in.height; ++y) {
    for (int32_t x = 0; x < in.width; ++x) {
      for (int32_t c = 0; c < ch; ++c) {
        out[(static_cast<size_t>(y) * in.width + x) * ch + c] =
            kiln_blur_enlarge_px(s.data(), small, in.width, in.height, x, y, c);
      }
    }
  }
  return out;
}

TEST(BlurCpu, EqualsThePerPixelFunctions) {
  ThreadPool pool(3);
  struct Case {
    int32_t width, height, channels;
    BlurParams params;
  };
  const std::vector<Case> cases = {
      {320, 180, 3, {}},               {97, 61, 3, {6, 2, 2}},  {64, 48, 1, {1, 1, 1}}, {33, 17, 4, {8, 5, 3}},
      {5, 3, 3, {8, 3, 2}},            // smaller than the factor: one small pixel per axis
      {250, 7, 3, {16, 64, 4}},        // the largest parameters, a radius far wider than the small image
      {1280, 720, 3, blur_params_for_radius(25)},
  };
  uint32_t seed = 40;
  for (const Case& c : cases) {
    SCOPED_TRACE(testing::Message() << c.width << "x" << c.height << "x" << c.channels << " factor "
                                    << c.params.factor << " radius " << c.params.radius << " passes "
                                    << c.params.passes);
    // Rows padded past the picture: the stride is honoured.
    const auto padded =
        test::random_batch({{c.width + 3, c.height, c.channels, PixelType::kU8, Layout::kHWC}}, seed++);
    const ImageView in = padded[0].crop(0, 0, c.width, c.height);
    const std::vector<uint8_t> want = blur_by_pixel(in, c.params);
    const CpuIsa saved = cpu_isa_active();
    for (const CpuIsa isa : {CpuIsa::kScalar, CpuIsa::kGeneric, CpuIsa::kAvx2}) {  // every variant of the loops
      if (isa == CpuIsa::kAvx2 && cpu_isa_best() != CpuIsa::kAvx2) continue;
      cpu_isa_set(isa);
      for (ThreadPool* p : {static_cast<ThreadPool*>(nullptr), &pool}) {
        std::vector<uint8_t> got(want.size(), 0xCD);
        const VarShapeBatch ib = VarShapeBatch::wrap({in});
        const VarShapeBatch ob = VarShapeBatch::wrap(
            {image_view_packed(got.data(), c.width, c.height, c.channels, PixelType::kU8)});
        ASSERT_TRUE(blur(c.params, ib.view(), ob.view(), blur_cpu_exec(p)).is_ok());
        int64_t differ = 0;
        for (size_t k = 0; k < want.size(); ++k) differ += want[k] != got[k];
        EXPECT_EQ(differ, 0) << cpu_isa_name(isa) << (p != nullptr ? ", threaded" : ", one thread");
      }
    }
    cpu_isa_set(saved);
  }
}

TEST(BlurCpu, InPlaceAndInBatches) {
  const std::vector<ImageShape> shapes = {{80, 60, 3, PixelType::kU8, Layout::kHWC},
                                          {31, 90, 1, PixelType::kU8, Layout::kHWC}};
  const BlurParams p{3, 2, 2};
  const auto in = test::random_batch(shapes, 7);
  const auto apart = test::filled_batch(shapes);
  ASSERT_TRUE(blur(p, in.view(), apart.view(), blur_cpu_exec()).is_ok());
  for (int64_t i = 0; i < in.count(); ++i) {
    const std::vector<uint8_t> want = blur_by_pixel(in[i], p);
    EXPECT_EQ(std::vector<uint8_t>(apart[i].row<uint8_t>(0), apart[i].row<uint8_t>(0) + want.size()), want) << i;
  }
  ASSERT_TRUE(blur(p, in.view(), in.view(), blur_cpu_exec()).is_ok());  // the output is the input
  for (int64_t i = 0; i < in.count(); ++i) EXPECT_EQ(test::image_diff(apart[i], in[i]).over, 0) << i;
}

TEST(BlurCpu, FlattensStripesAndKeepsFlatAreasAndTheMean) {
  constexpr int32_t kW = 128, kH = 64;
  std::vector<uint8_t> img(static_cast<size_t>(kW) * kH * 3), out(img.size());
  for (int32_t y = 0; y < kH; ++y) {
    for (int32_t x = 0; x < kW; ++x) {
      uint8_t* px = &img[(static_cast<size_t>(y) * kW + x) * 3];
      px[0] = (x / 2) % 2 == 0 ? 255 : 0;  // two-pixel stripes in red
      px[1] = 77;                          // flat green
      px[2] = static_cast<uint8_t>(x * 2); // a ramp in blue
    }
  }
  const VarShapeBatch ib = VarShapeBatch::wrap({image_view_packed(img.data(), kW, kH, 3, PixelType::kU8)});
  const VarShapeBatch ob = VarShapeBatch::wrap({image_view_packed(out.data(), kW, kH, 3, PixelType::kU8)});
  ASSERT_TRUE(blur(blur_params_for_radius(16), ib.view(), ob.view(), blur_cpu_exec()).is_ok());
  int64_t red = 0;
  for (int32_t y = 0; y < kH; ++y) {
    for (int32_t x = 0; x < kW; ++x) {
      const uint8_t* px = &out[(static_cast<size_t>(y) * kW + x) * 3];
      EXPECT_NEAR(px[0], 128, 2) << x << "," << y;  // the stripes are gone
      EXPECT_EQ(px[1], 77);
      red += px[0];
    }
  }
  EXPECT_NEAR(static_cast<double>(red) / (kW * kH), 127.5, 1.0);
  const uint8_t* mid = &out[(static_cast<size_t>(kH / 2) * kW + kW / 2) * 3];
  EXPECT_NEAR(mid[2], kW, 4);  // a ramp stays a ramp in the middle
}

TEST(BlurValidate, RefusesWhatItCannotBlur) {
  std::vector<uint8_t> a(64 * 64 * 4), b(a.size());
  std::vector<float> f(64 * 64 * 3);
  const auto refused = [](const BlurParams& p, const ImageView& in, const ImageView& out, const char* says) {
    const VarShapeBatch ib = VarShapeBatch::wrap({in}), ob = VarShapeBatch::wrap({out});
    const Status st = op_validate(OpCall{OpKind::kBlur, &p, ib.view(), ob.view(), nullptr});
    EXPECT_EQ(st.code(), Errc::kInvalidArgument) << says;
    EXPECT_NE(st.message().find(says), std::string::npos) << st.message();
  };
  const ImageView rgb = image_view_packed(a.data(), 64, 64, 3, PixelType::kU8);
  const ImageView rgb_out = image_view_packed(b.data(), 64, 64, 3, PixelType::kU8);
  refused({0, 3, 2}, rgb, rgb_out, "factor 0");
  refused({17, 3, 2}, rgb, rgb_out, "factor 17");
  refused({4, 0, 2}, rgb, rgb_out, "radius 0");
  refused({4, 65, 2}, rgb, rgb_out, "radius 65");
  refused({4, 3, 0}, rgb, rgb_out, "passes 0");
  refused({4, 3, 5}, rgb, rgb_out, "passes 5");
  refused({}, image_view_packed(f.data(), 64, 64, 3, PixelType::kF32), rgb_out, "uint8");
  refused({}, image_view_packed(a.data(), 64, 64, 2, PixelType::kU8),
          image_view_packed(b.data(), 64, 64, 2, PixelType::kU8), "1, 3 or 4 channels");
  refused({}, rgb, image_view_packed(b.data(), 63, 64, 3, PixelType::kU8), "the input's size and channels");
  refused({}, rgb, image_view_packed(b.data(), 64, 64, 4, PixelType::kU8), "the input's size and channels");
  const BlurParams p;
  const VarShapeBatch two = VarShapeBatch::wrap({rgb, rgb}), one = VarShapeBatch::wrap({rgb_out});
  EXPECT_EQ(op_validate(OpCall{OpKind::kBlur, &p, two.view(), one.view(), nullptr}).code(), Errc::kInvalidArgument);
}

}  // namespace
}  // namespace kiln
