// The enhance family on the CPU: the linear step vs cv::Mat::convertTo, gamma vs cv::LUT, the unsharp blur vs
// cv::GaussianBlur, PIL contrast / sharpness / unsharp vs naive reimplementations of Pillow's C code, the fixed step
// order, threads, in-place calls and validation.
#include <gtest/gtest.h>

#include <opencv2/core.hpp>
#include <opencv2/imgproc.hpp>

#include <cstring>
#include <initializer_list>
#include <random>

#include "common/image_ops_util.h"
#include "core/thread_pool.h"
#include "kiln/image_ops.h"
#include "kiln/ops/enhance.h"
#include "ops/enhance.h"

namespace kiln::test {
namespace {

struct RefImage {
  int32_t width = 0, height = 0, channels = 1;
  std::vector<uint8_t> px;
  uint8_t& at(int32_t x, int32_t y, int32_t c) { return px[(static_cast<size_t>(y) * width + x) * channels + c]; }
  uint8_t at(int32_t x, int32_t y, int32_t c) const {
    return px[(static_cast<size_t>(y) * width + x) * channels + c];
  }
};

// Image.blend(im1, im2, alpha) of one value (Blend.c: float arithmetic, truncation, clipping when extrapolating).
inline uint8_t ref_blend(int in1, int in2, float alpha) {
  if (alpha == 0.0f) return static_cast<uint8_t>(in1);
  if (alpha == 1.0f) return static_cast<uint8_t>(in2);
  const float temp = static_cast<float>(in1) + alpha * static_cast<float>(in2 - in1);
  if (alpha >= 0 && alpha <= 1.0f) return static_cast<uint8_t>(temp);
  if (temp <= 0.0f) return 0;
  if (temp >= 255.0f) return 255;
  return static_cast<uint8_t>(temp);
}

// ImageEnhance.Contrast(image).enhance(factor); channels in R,G,B(,A) order; alpha kept.
inline RefImage ref_pil_contrast(const RefImage& im, float factor) {
  double sum = 0;
  for (int32_t y = 0; y < im.height; ++y) {
    for (int32_t x = 0; x < im.width; ++x) {
      int l = im.at(x, y, 0);
      if (im.channels >= 3) l = (im.at(x, y, 0) * 19595 + im.at(x, y, 1) * 38470 + im.at(x, y, 2) * 7471 + 0x8000) >> 16;
      sum += l;
    }
  }
  const int mean = static_cast<int>(sum / (static_cast<double>(im.width) * im.height) + 0.5);
  RefImage out = im;
  for (size_t i = 0; i < im.px.size(); ++i) {
    const bool alpha = im.channels == 4 && i % 4 == 3;
    out.px[i] = alpha ? im.px[i] : ref_blend(mean, im.px[i], factor);
  }
  return out;
}

// image.filter(ImageFilter.SMOOTH): ImagingFilter3x3 with the float kernel k/13, rows summed from y + 1 to y - 1.
inline RefImage ref_pil_smooth(const RefImage& im) {
  RefImage out = im;
  if (im.width < 3 || im.height < 3) return out;
  const float kernel[9] = {1, 1, 1, 1, 5, 1, 1, 1, 1};
  float k[9];
  for (int i = 0; i < 9; ++i) k[i] = static_cast<float>(kernel[i] / 13.0);
  for (int32_t y = 1; y < im.height - 1; ++y) {
    for (int32_t x = 1; x < im.width - 1; ++x) {
      for (int32_t c = 0; c < im.channels; ++c) {
        auto row = [&](int32_t yy, const float* kk) {
          return static_cast<float>(im.at(x - 1, yy, c)) * kk[0] + static_cast<float>(im.at(x, yy, c)) * kk[1] +
                 static_cast<float>(im.at(x + 1, yy, c)) * kk[2];
        };
        float ss = 0.0f;
        ss += 0.5;
        ss += row(y + 1, &k[0]);
        ss += row(y, &k[3]);
        ss += row(y - 1, &k[6]);
        ss = ss < 0.0f ? 0.0f : ss;
        ss = ss > 255.0f ? 255.0f : ss;
        out.at(x, y, c) = static_cast<uint8_t>(ss);
      }
    }
  }
  return out;
}

// ImageEnhance.Sharpness(image).enhance(factor); alpha kept.
inline RefImage ref_pil_sharpness(const RefImage& im, float factor) {
  const RefImage degenerate = ref_pil_smooth(im);
  RefImage out = im;
  for (size_t i = 0; i < im.px.size(); ++i) {
    const bool alpha = im.channels == 4 && i % 4 == 3;
    out.px[i] = alpha ? im.px[i] : ref_blend(degenerate.px[i], im.px[i], factor);
  }
  return out;
}

// UnsharpMask.c's rule over every channel, given the blurred image.
inline RefImage ref_unsharp(const RefImage& im, const RefImage& blurred, int percent, int threshold) {
  RefImage out = im;
  for (size_t i = 0; i < im.px.size(); ++i) {
    const int diff = im.px[i] - blurred.px[i];
    if (std::abs(diff) > threshold) {
      const int v = im.px[i] + diff * percent / 100;
      out.px[i] = static_cast<uint8_t>(v >= 255 ? 255 : (v <= 0 ? 0 : v));
    } else {
      out.px[i] = im.px[i];
    }
  }
  return out;
}

}  // namespace
}  // namespace kiln::test

namespace kiln::test {
namespace {

RefImage ref_of(const ImageView& v) {
  RefImage r;
  r.width = v.width;
  r.height = v.height;
  r.channels = v.channels;
  r.px.resize(static_cast<size_t>(v.width) * v.height * v.channels);
  for (int32_t y = 0; y < v.height; ++y) {
    std::memcpy(&r.px[static_cast<size_t>(y) * v.width * v.channels], v.row<uint8_t>(y),
                static_cast<size_t>(v.width) * v.channels);
  }
  return r;
}

VarShapeBatch batch_of(const RefImage& r) {
  VarShapeBatch b = VarShapeBatch::allocate({{r.width, r.height, r.channels}});
  for (int32_t y = 0; y < r.height; ++y) {
    std::memcpy(b[0].row<uint8_t>(y), &r.px[static_cast<size_t>(y) * r.width * r.channels],
                static_cast<size_t>(r.width) * r.channels);
  }
  return b;
}

// Values that differ between a kiln image and a reference, with the first one.
int64_t count_diff(const ImageView& v, const RefImage& r, int tolerance, std::string* first) {
  int64_t n = 0;
  for (int32_t y = 0; y < v.height; ++y) {
    for (int32_t x = 0; x < v.width; ++x) {
      for (int32_t c = 0; c < v.channels; ++c) {
        const int a = v.row<uint8_t>(y)[x * v.channels + c];
        const int b = r.at(x, y, c);
        if (std::abs(a - b) > tolerance) {
          if (n == 0 && first != nullptr) {
            *first = std::to_string(x) + "," + std::to_string(y) + "," + std::to_string(c) + ": " +
                     std::to_string(a) + " vs " + std::to_string(b);
          }
          ++n;
        }
      }
    }
  }
  return n;
}

// The linear and gamma steps keep alpha (channel 3 of 4): the OpenCV result with the input's alpha put back.
cv::Mat keep_alpha(const cv::Mat& expected, const ImageView& in) {
  if (in.channels != 4) return expected;
  cv::Mat out = expected.clone();
  const int from_to[] = {3, 3};
  const cv::Mat src = cv_view(in);
  cv::mixChannels(&src, 1, &out, 1, from_to, 1);
  return out;
}

std::vector<ImageShape> test_shapes() {
  return {{37, 23, 1}, {64, 48, 3}, {17, 31, 4}, {5, 3, 3}, {1, 7, 1}, {3, 1, 4}, {128, 97, 3}, {2, 2, 1}};
}

VarShapeBatch run_cpu(const EnhanceParams& p, const VarShapeBatch& in, ThreadPool* pool = nullptr) {
  std::vector<ImageShape> shapes;
  for (const auto& v : in.images()) shapes.push_back({v.width, v.height, v.channels});
  VarShapeBatch out = filled_batch(shapes);
  const Status s = enhance(p, in.view(), out.view(), cpu_exec(pool));
  EXPECT_TRUE(s.is_ok()) << s.message();
  return out;
}

// For each factor of one PIL step (the params field `factor_of`), the CPU op equals `reference` exactly.
void expect_pil_step(const VarShapeBatch& in, float EnhanceParams::*factor_of,
                     RefImage (*reference)(const RefImage&, float), std::initializer_list<float> factors) {
  for (float factor : factors) {
    EnhanceParams p;
    p.*factor_of = factor;
    const VarShapeBatch out = run_cpu(p, in);
    for (int64_t i = 0; i < in.count(); ++i) {
      std::string first;
      EXPECT_EQ(count_diff(out[i], reference(ref_of(in[i]), factor), 0, &first), 0)
          << "factor " << factor << " image " << i << ": " << first;
    }
  }
}

TEST(EnhanceCpu, LinearMatchesConvertToExactly) {
  const VarShapeBatch in = random_batch(test_shapes(), 11);
  const std::pair<float, float> cases[] = {{1.5f, 10.0f}, {1.15f, -7.3f}, {0.37f, 100.25f}, {-1.0f, 255.0f},
                                           {2.71828f, -128.5f}, {1.0f, 0.5f}, {0.5f, 0.0f}};
  for (const auto& [alpha, beta] : cases) {
    EnhanceParams p;
    p.contrast = alpha;
    p.brightness = beta;
    const VarShapeBatch out = run_cpu(p, in);
    for (int64_t i = 0; i < in.count(); ++i) {
      cv::Mat expected;
      cv_view(in[i]).convertTo(expected, CV_8U, alpha, beta);
      expected = keep_alpha(expected, in[i]);
      const ImageDiff d = image_diff(out[i], kiln_view(expected));
      EXPECT_EQ(d.max_abs, 0.0) << "alpha " << alpha << " beta " << beta << " image " << i << ": " << d.first;
    }
  }
}

TEST(EnhanceCpu, GammaMatchesCvLutWithTheSameTable) {
  const VarShapeBatch in = random_batch(test_shapes(), 12);
  for (float gamma : {0.45f, 2.2f, 1.7f, 0.9f}) {
    EnhanceParams p;
    p.gamma = gamma;
    const VarShapeBatch out = run_cpu(p, in);
    const auto table = enhance_gamma_table(gamma);
    // The table itself: 255 * (x / 255)^(1 / gamma) rounded (gamma > 1 brightens).
    for (int x = 0; x < 256; ++x) {
      EXPECT_EQ(table[static_cast<size_t>(x)], static_cast<int>(std::lround(255.0 * std::pow(x / 255.0, 1.0 / gamma))));
    }
    EXPECT_GT(table[128], gamma > 1 ? 128 : 0);
    cv::Mat lut(1, 256, CV_8U, const_cast<uint8_t*>(table.data()));
    for (int64_t i = 0; i < in.count(); ++i) {
      cv::Mat expected;
      cv::LUT(cv_view(in[i]), lut, expected);
      expected = keep_alpha(expected, in[i]);
      const ImageDiff d = image_diff(out[i], kiln_view(expected));
      EXPECT_EQ(d.max_abs, 0.0) << "gamma " << gamma << " image " << i << ": " << d.first;
    }
  }
}

TEST(EnhanceCpu, LinearThenGammaComposes) {
  const VarShapeBatch in = random_batch(test_shapes(), 13);
  EnhanceParams p;
  p.contrast = 1.2f;
  p.brightness = -20.0f;
  p.gamma = 1.8f;
  const VarShapeBatch out = run_cpu(p, in);
  const auto table = enhance_gamma_table(1.8f);
  cv::Mat lut(1, 256, CV_8U, const_cast<uint8_t*>(table.data()));
  for (int64_t i = 0; i < in.count(); ++i) {
    cv::Mat linear, expected;
    cv_view(in[i]).convertTo(linear, CV_8U, 1.2, -20.0);
    cv::LUT(linear, lut, expected);
    expected = keep_alpha(expected, in[i]);
    EXPECT_EQ(image_diff(out[i], kiln_view(expected)).max_abs, 0.0) << i;
  }
}

TEST(EnhanceCpu, GaussianKernelFollowsOpenCv) {
  EXPECT_EQ(enhance_gaussian_ksize(1.0f), 7);
  EXPECT_EQ(enhance_gaussian_ksize(2.0f), 13);
  EXPECT_EQ(enhance_gaussian_ksize(0.5f), 5);
  EXPECT_EQ(enhance_gaussian_ksize(50.0f), KILN_ENHANCE_MAX_KSIZE);
  for (float sigma : {0.6f, 1.0f, 2.5f}) {
    const std::vector<float> w = enhance_gaussian_weights(sigma);
    const cv::Mat cvw = cv::getGaussianKernel(static_cast<int>(w.size()), sigma, CV_64F);
    for (size_t k = 0; k < w.size(); ++k) EXPECT_NEAR(w[k], cvw.at<double>(static_cast<int>(k)), 1e-7);
  }
}

// OpenCV's u8 GaussianBlur is its bit-exact fixed-point path (kernel and intermediate rows in fixed point), kiln's
// is float with one rounding at the end, so single values may differ by one level (about 1 value in 5 for wide
// kernels, where OpenCV's quantized taps add up the most error).
TEST(EnhanceCpu, BlurWithinOneOfCvGaussianBlur) {
  const VarShapeBatch in = random_batch({{64, 48, 1}, {37, 29, 3}, {20, 31, 4}, {9, 9, 3}}, 14);
  for (float sigma : {0.8f, 1.0f, 2.0f, 3.3f}) {
    for (int64_t i = 0; i < in.count(); ++i) {
      const ImageView& v = in[i];
      VarShapeBatch out = filled_batch({{v.width, v.height, v.channels}});
      ASSERT_TRUE(enhance_gaussian_blur_cpu(v, out[0], sigma).is_ok());
      cv::Mat expected;
      cv::GaussianBlur(cv_view(v), expected, cv::Size(0, 0), sigma, sigma, cv::BORDER_REFLECT_101);
      const ImageDiff d = image_diff(out[0], kiln_view(expected), 1.0);
      EXPECT_LE(d.max_abs, 1.0) << "sigma " << sigma << " image " << i << ": " << d.first;
      EXPECT_LT(d.mean_abs, 0.25) << "sigma " << sigma << " image " << i;
    }
  }
}

TEST(EnhanceCpu, PilContrastMatchesReference) {
  expect_pil_step(random_batch(test_shapes(), 15, 40, 200), &EnhanceParams::pil_contrast, ref_pil_contrast,
                  {1.15f, 0.0f, 0.5f, 1.0f, 2.0f, -0.5f, 3.7f});
}

TEST(EnhanceCpu, PilContrastBgrSwapsTheGrayWeights) {
  VarShapeBatch in = random_batch({{33, 21, 3}}, 16);
  EnhanceParams p;
  p.pil_contrast = 1.6f;
  p.bgr = true;
  const VarShapeBatch out = run_cpu(p, in);
  // The reference on the channel-swapped image, swapped back.
  RefImage r = ref_of(in[0]);
  for (size_t k = 0; k < r.px.size(); k += 3) std::swap(r.px[k], r.px[k + 2]);
  RefImage e = ref_pil_contrast(r, 1.6f);
  for (size_t k = 0; k < e.px.size(); k += 3) std::swap(e.px[k], e.px[k + 2]);
  EXPECT_EQ(count_diff(out[0], e, 0, nullptr), 0);
}

TEST(EnhanceCpu, PilSharpnessMatchesReference) {
  EXPECT_EQ(KILN_ENHANCE_W1, static_cast<float>(1.0 / 13.0));
  EXPECT_EQ(KILN_ENHANCE_W5, static_cast<float>(5.0 / 13.0));
  expect_pil_step(random_batch(test_shapes(), 17), &EnhanceParams::pil_sharpness, ref_pil_sharpness,
                  {1.1f, 0.0f, 0.5f, 2.0f, -1.0f, 4.5f});
}

TEST(EnhanceCpu, UnsharpMatchesPilRule) {
  const VarShapeBatch in = random_batch(test_shapes(), 18);
  struct Case { float radius; int percent; int threshold; };
  for (const Case& k : {Case{1.0f, 120, 3}, Case{2.0f, 150, 3}, Case{0.7f, 300, 0}, Case{3.0f, 50, 10}}) {
    EnhanceParams p;
    p.unsharp_radius = k.radius;
    p.unsharp_percent = k.percent;
    p.unsharp_threshold = k.threshold;
    const VarShapeBatch out = run_cpu(p, in);
    for (int64_t i = 0; i < in.count(); ++i) {
      const ImageView& v = in[i];
      // Exact against the rule applied to kiln's own blur ...
      VarShapeBatch blurred = filled_batch({{v.width, v.height, v.channels}});
      ASSERT_TRUE(enhance_gaussian_blur_cpu(v, blurred[0], k.radius).is_ok());
      std::string first;
      EXPECT_EQ(count_diff(out[i], ref_unsharp(ref_of(v), ref_of(blurred[0]), k.percent, k.threshold), 0, &first), 0)
          << "radius " << k.radius << " image " << i << ": " << first;
      // ... and close to it applied to cv::GaussianBlur's: a one-level blur difference changes a value by at most
      // percent/100 + 1, or flips the threshold test (then by up to |diff| * percent / 100).
      cv::Mat cvb;
      cv::GaussianBlur(cv_view(v), cvb, cv::Size(0, 0), k.radius, k.radius, cv::BORDER_REFLECT_101);
      const RefImage cv_ref = ref_unsharp(ref_of(v), ref_of(kiln_view(cvb)), k.percent, k.threshold);
      const int64_t far = count_diff(out[i], cv_ref, k.percent / 100 + 1, nullptr);
      EXPECT_LE(far, static_cast<int64_t>(v.width) * v.height * v.channels / 50 + 1) << "image " << i;
    }
  }
}

TEST(EnhanceCpu, PredecessorChainInOrder) {
  const VarShapeBatch in = random_batch(test_shapes(), 19);
  const EnhanceParams p = enhance_params_predecessor();
  const VarShapeBatch out = run_cpu(p, in);
  for (int64_t i = 0; i < in.count(); ++i) {
    RefImage r = ref_pil_contrast(ref_of(in[i]), 1.15f);
    r = ref_pil_sharpness(r, 1.1f);
    VarShapeBatch staged = batch_of(r);
    VarShapeBatch blurred = filled_batch({{r.width, r.height, r.channels}});
    ASSERT_TRUE(enhance_gaussian_blur_cpu(staged[0], blurred[0], 1.0f).is_ok());
    r = ref_unsharp(r, ref_of(blurred[0]), 120, 3);
    std::string first;
    EXPECT_EQ(count_diff(out[i], r, 0, &first), 0) << "image " << i << ": " << first;
  }
}

TEST(EnhanceCpu, AllStepsThreadedEqualsUnthreadedAndInPlace) {
  const VarShapeBatch in = random_batch({{300, 211, 3}, {64, 64, 1}, {97, 45, 4}, {1, 1, 3}}, 20);
  EnhanceParams p = enhance_params_predecessor();
  p.contrast = 1.1f;
  p.brightness = 5.0f;
  p.gamma = 1.3f;
  const VarShapeBatch single = run_cpu(p, in);
  ThreadPool pool(2);
  const VarShapeBatch threaded = run_cpu(p, in, &pool);
  for (int64_t i = 0; i < in.count(); ++i) EXPECT_EQ(image_diff(single[i], threaded[i]).max_abs, 0.0) << i;
  // In place, with and without the point step in front of the neighbourhood steps.
  for (bool point : {true, false}) {
    EnhanceParams q = p;
    if (!point) q.contrast = 1, q.brightness = 0, q.gamma = 1, q.pil_contrast = 1;
    const VarShapeBatch expected = run_cpu(q, in);
    VarShapeBatch inplace = random_batch({{300, 211, 3}, {64, 64, 1}, {97, 45, 4}, {1, 1, 3}}, 20);
    ASSERT_TRUE(enhance(q, inplace.view(), inplace.view(), cpu_exec(&pool)).is_ok());
    for (int64_t i = 0; i < in.count(); ++i) EXPECT_EQ(image_diff(expected[i], inplace[i]).max_abs, 0.0) << i;
  }
}

TEST(EnhanceCpu, IdentityCopiesAndStridedViews) {
  const VarShapeBatch in = random_batch(test_shapes(), 21);
  const VarShapeBatch out = run_cpu(EnhanceParams{}, in);
  for (int64_t i = 0; i < in.count(); ++i) EXPECT_EQ(image_diff(in[i], out[i]).max_abs, 0.0);
  // A cropped (strided) input and output.
  VarShapeBatch big = random_batch({{50, 40, 3}}, 22);
  VarShapeBatch big_out = filled_batch({{50, 40, 3}});
  const VarShapeBatch crop_in = VarShapeBatch::wrap({big[0].crop(5, 7, 31, 22)});
  const VarShapeBatch crop_out = VarShapeBatch::wrap({big_out[0].crop(3, 2, 31, 22)});
  const EnhanceParams p = enhance_params_predecessor();
  ASSERT_TRUE(enhance(p, crop_in.view(), crop_out.view(), cpu_exec()).is_ok());
  const VarShapeBatch packed = random_batch({{31, 22, 3}}, 1);
  for (int32_t y = 0; y < 22; ++y) std::memcpy(packed[0].row<uint8_t>(y), crop_in[0].row<uint8_t>(y), 31 * 3);
  const VarShapeBatch expected = run_cpu(p, packed);
  EXPECT_EQ(image_diff(expected[0], crop_out[0]).max_abs, 0.0);
}

TEST(EnhanceValidate, BadCallsAreInvalidArgument) {
  const VarShapeBatch in = random_batch({{16, 16, 3}, {8, 9, 1}}, 23);
  const VarShapeBatch out = filled_batch({{16, 16, 3}, {8, 9, 1}});
  auto check = [&](const EnhanceParams& p, const VarShapeBatchView& a, const VarShapeBatchView& b, const char* what) {
    const Status s = enhance(p, a, b, cpu_exec());
    EXPECT_EQ(s.code(), Errc::kInvalidArgument) << what << ": " << s.message();
    EXPECT_EQ(enhance_validate(OpCall{OpKind::kEnhance, &p, a, b, nullptr}).code(), Errc::kInvalidArgument) << what;
  };
  EXPECT_TRUE(enhance(EnhanceParams{}, in.view(), out.view(), cpu_exec()).is_ok());
  const struct {
    const char* what;
    EnhanceParams params;
  } bad_params[] = {
      {"gamma 0", {.gamma = 0}},
      {"gamma < 0", {.gamma = -1}},
      {"gamma NaN", {.gamma = NAN}},
      {"negative radius", {.unsharp_radius = -1}},
      {"radius too large", {.unsharp_radius = 51}},
      {"negative threshold", {.unsharp_radius = 1, .unsharp_threshold = -1}},
      {"negative percent", {.unsharp_percent = -5}},
      {"contrast inf", {.contrast = INFINITY}},
      {"pil contrast NaN", {.pil_contrast = NAN}},
      {"pil sharpness inf", {.pil_sharpness = INFINITY}},
  };
  for (const auto& bad : bad_params) check(bad.params, in.view(), out.view(), bad.what);
  // Shapes and types.
  const EnhanceParams p;
  const VarShapeBatch other = filled_batch({{16, 15, 3}, {8, 9, 1}});
  check(p, in.view(), other.view(), "size mismatch");
  const VarShapeBatch chans = filled_batch({{16, 16, 4}, {8, 9, 1}});
  check(p, in.view(), chans.view(), "channel mismatch");
  const VarShapeBatch one = filled_batch({{16, 16, 3}});
  check(p, in.view(), one.view(), "count mismatch");
  const VarShapeBatch f32 = random_batch({{16, 16, 3, PixelType::kF32}}, 1);
  const VarShapeBatch f32_out = filled_batch({{16, 16, 3, PixelType::kF32}});
  check(p, f32.view(), f32_out.view(), "float32");
  const VarShapeBatch two = random_batch({{16, 16, 2}}, 1);
  const VarShapeBatch two_out = filled_batch({{16, 16, 2}});
  check(p, two.view(), two_out.view(), "2 channels");
  const VarShapeBatch chw = random_batch({{16, 16, 3, PixelType::kU8, Layout::kCHW}}, 1);
  const VarShapeBatch chw_out = filled_batch({{16, 16, 3, PixelType::kU8, Layout::kCHW}});
  check(p, chw.view(), chw_out.view(), "CHW");
}

}  // namespace
}  // namespace kiln::test
