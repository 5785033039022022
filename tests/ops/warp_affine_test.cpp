// The warp family on the CPU: cv::warpAffine(INTER_LINEAR) with every border mode (tolerances measured: OpenCV
// quantises coordinates to 1/32 pixel and, for u8, weights to 15 bits; kiln samples at float coordinates),
// identities and integer shifts (exact), inverse_map, threaded vs single-threaded, the similarity estimate and
// ArcFace alignment, names, and the negative suite.
#include <gtest/gtest.h>

#include <opencv2/core.hpp>
#include <opencv2/imgproc.hpp>

#include <cmath>
#include <cstdio>
#include <cstring>
#include <limits>
#include <random>
#include <vector>

#include "common/image_ops_util.h"
#include "core/thread_pool.h"
#include "kiln/image_ops.h"
#include "kiln/ops/warp.h"
#include "ops/warp.h"

namespace kiln {
namespace {

using Matrix = std::array<float, 6>;

// Source -> destination: rotation `degrees` and `scale` about (cx, cy), then a shift.
Matrix similarity(float degrees, float scale, float cx, float cy, float tx, float ty) {
  cv::Mat m = cv::getRotationMatrix2D(cv::Point2f(cx, cy), degrees, scale);
  return {static_cast<float>(m.at<double>(0, 0)), static_cast<float>(m.at<double>(0, 1)),
          static_cast<float>(m.at<double>(0, 2) + tx), static_cast<float>(m.at<double>(1, 0)),
          static_cast<float>(m.at<double>(1, 1)), static_cast<float>(m.at<double>(1, 2) + ty)};
}

cv::Mat cv_matrix(const Matrix& m) {
  cv::Mat out(2, 3, CV_64F);
  for (int k = 0; k < 6; ++k) out.at<double>(k / 3, k % 3) = m[static_cast<size_t>(k)];
  return out;
}

int cv_border(BorderMode mode) {
  switch (mode) {
    case BorderMode::kConstant: return cv::BORDER_CONSTANT;
    case BorderMode::kReplicate: return cv::BORDER_REPLICATE;
    case BorderMode::kReflect: return cv::BORDER_REFLECT;
    case BorderMode::kReflect101: return cv::BORDER_REFLECT_101;
  }
  return cv::BORDER_CONSTANT;
}

// A smooth image (gradients of at most ~6 levels per pixel), different per channel.
VarShapeBatch smooth_batch(const std::vector<ImageShape>& shapes) {
  VarShapeBatch batch = VarShapeBatch::allocate(shapes);
  for (int64_t i = 0; i < batch.count(); ++i) {
    const ImageView& v = batch[i];
    for (int32_t y = 0; y < v.height; ++y) {
      for (int32_t x = 0; x < v.width; ++x) {
        for (int32_t c = 0; c < v.channels; ++c) {
          const double value = 127.5 + 100.0 * std::sin(0.05 * x + 0.7 * c) * std::cos(0.04 * y - 0.3 * c) +
                               20.0 * std::sin(0.013 * (x + y));
          if (v.type == PixelType::kU8) {
            v.row<uint8_t>(y)[x * v.channels + c] = static_cast<uint8_t>(std::lround(value));
          } else {
            v.row<float>(y)[x * v.channels + c] = static_cast<float>(value);
          }
        }
      }
    }
  }
  return batch;
}

Status run_cpu(const WarpParams& params, const VarShapeBatch& in, const VarShapeBatch& out,
               ThreadPool* pool = nullptr) {
  return warp_affine(params, in.view(), out.view(), test::cpu_exec(pool));
}

struct Stats {
  double max_abs = 0;
  double exact_fraction = 0;
};

Stats compare_with_opencv(const VarShapeBatch& in, const VarShapeBatch& out, const std::vector<Matrix>& matrices,
                          const WarpParams& params) {
  Stats stats;
  int64_t exact = 0, total = 0;
  for (int64_t i = 0; i < in.count(); ++i) {
    cv::Mat want;
    const float* b = params.border_value;
    cv::warpAffine(test::cv_view(in[i]), want, cv_matrix(matrices[static_cast<size_t>(i)]),
                   cv::Size(out[i].width, out[i].height),
                   cv::INTER_LINEAR | (params.inverse_map ? cv::WARP_INVERSE_MAP : 0), cv_border(params.border),
                   cv::Scalar(b[0], b[1], b[2], b[3]));
    const ImageView w = test::kiln_view(want);
    for (int32_t y = 0; y < w.height; ++y) {
      for (int32_t x = 0; x < w.width; ++x) {
        for (int32_t c = 0; c < w.channels; ++c) {
          const double d = std::fabs(test::pixel_value(w, x, y, c) - test::pixel_value(out[i], x, y, c));
          stats.max_abs = std::max(stats.max_abs, d);
          exact += d == 0.0;
          ++total;
        }
      }
    }
  }
  stats.exact_fraction = static_cast<double>(exact) / static_cast<double>(total);
  return stats;
}

const BorderMode kBorders[] = {BorderMode::kConstant, BorderMode::kReplicate, BorderMode::kReflect,
                               BorderMode::kReflect101};

// Measured (OpenCV 4.6): u8 max 1 level, ~90 % exact; f32 max ~0.06 on gradients of <= 6 levels/pixel (1/64 px
// of coordinate quantisation x gradient). Tolerances leave room for other OpenCV builds.
TEST(WarpAffine, MatchesOpenCvOnSmoothImages) {
  for (PixelType type : {PixelType::kU8, PixelType::kF32}) {
    for (int32_t channels : {1, 3, 4}) {
      for (BorderMode border : kBorders) {
        const std::vector<ImageShape> in_shapes = {{64, 48, channels, type}, {37, 51, channels, type}, {9, 7, channels, type}};
        const std::vector<ImageShape> out_shapes = {{70, 40, channels, type}, {33, 61, channels, type}, {20, 17, channels, type}};
        const auto in = smooth_batch(in_shapes);
        const auto out = test::filled_batch(out_shapes);
        const std::vector<Matrix> matrices = {similarity(17.0f, 1.1f, 32, 24, 3.3f, -2.1f),
                                              similarity(-40.0f, 0.8f, 18, 25, 1.7f, 8.2f),
                                              similarity(95.0f, 1.7f, 4, 3, 6.0f, 5.0f)};
        WarpParams params;
        params.matrices = reinterpret_cast<const float(*)[6]>(matrices.data());
        params.border = border;
        params.border_value[0] = 10;
        params.border_value[1] = 200;
        params.border_value[2] = 77.4f;
        params.border_value[3] = 255;
        ASSERT_TRUE(run_cpu(params, in, out).is_ok());
        const Stats s = compare_with_opencv(in, out, matrices, params);
        const char* what = border_mode_name(border);
        // Constant border: along the image edge a tap of the border value (a step of up to ~190 levels) is
        // weighted with OpenCV's 1/32-pixel weights: up to 190/64 ~ 3 levels (measured 3 for u8 and f32).
        const bool step = border == BorderMode::kConstant;
        if (type == PixelType::kU8) {
          EXPECT_LE(s.max_abs, step ? 4.0 : 2.0) << what << " channels " << channels;
          EXPECT_GE(s.exact_fraction, 0.8) << what << " channels " << channels;
        } else {
          EXPECT_LE(s.max_abs, step ? 4.0 : 0.15) << what << " channels " << channels;
        }
        std::printf("[ measured ] %s %s c%d: max %.4f exact %.3f\n", pixel_type_name(type), what, channels, s.max_abs,
                    s.exact_fraction);
      }
    }
  }
}

// Random noise (neighbours differ by up to 255): the 1/32-pixel quantisation alone moves OpenCV's values by up to
// 255/64 ~ 4 levels. Measured (OpenCV 4.6): see the [ measured ] line; ~38 % exact.
TEST(WarpAffine, MatchesOpenCvOnNoiseWithinQuantisation) {
  const std::vector<ImageShape> in_shapes = {{64, 48, 3, PixelType::kU8}, {31, 29, 1, PixelType::kU8}};
  const std::vector<ImageShape> out_shapes = {{50, 50, 3, PixelType::kU8}, {40, 30, 1, PixelType::kU8}};
  const auto in = test::random_batch(in_shapes, 31);
  const auto out = test::filled_batch(out_shapes);
  const std::vector<Matrix> matrices = {similarity(23.0f, 1.05f, 32, 24, 0.5f, 0.25f),
                                        similarity(-71.0f, 0.9f, 15, 14, 2.0f, -1.0f)};
  WarpParams params;
  params.matrices = reinterpret_cast<const float(*)[6]>(matrices.data());
  params.border = BorderMode::kReflect101;
  ASSERT_TRUE(run_cpu(params, in, out).is_ok());
  const Stats s = compare_with_opencv(in, out, matrices, params);
  std::printf("[ measured ] noise u8: max %.1f exact %.3f\n", s.max_abs, s.exact_fraction);
  EXPECT_LE(s.max_abs, 6.0);
  EXPECT_GE(s.exact_fraction, 0.3);
}

TEST(WarpAffine, IdentityAndIntegerShiftAreExact) {
  for (PixelType type : {PixelType::kU8, PixelType::kF32}) {
    const std::vector<ImageShape> shapes = {{33, 17, 3, type}, {8, 9, 4, type}, {1, 1, 1, type}};
    const auto in = test::random_batch(shapes, 32);
    const auto out = test::filled_batch(shapes);
    const std::vector<Matrix> identity(3, Matrix{1, 0, 0, 0, 1, 0});
    WarpParams params;
    params.matrices = reinterpret_cast<const float(*)[6]>(identity.data());
    ASSERT_TRUE(run_cpu(params, in, out).is_ok());
    for (int64_t i = 0; i < in.count(); ++i) {
      EXPECT_EQ(std::memcmp(in[i].data, out[i].data, in[i].packed_bytes()), 0) << "identity image " << i;
    }
    // Shift right by 2 and up by 1 (replicate): out(x, y) = in(clamp(x - 2), clamp(y + 1)).
    const std::vector<Matrix> shift(3, Matrix{1, 0, 2, 0, 1, -1});
    params.matrices = reinterpret_cast<const float(*)[6]>(shift.data());
    params.border = BorderMode::kReplicate;
    ASSERT_TRUE(run_cpu(params, in, out).is_ok());
    for (int64_t i = 0; i < in.count(); ++i) {
      for (int32_t y = 0; y < in[i].height; ++y) {
        for (int32_t x = 0; x < in[i].width; ++x) {
          for (int32_t c = 0; c < in[i].channels; ++c) {
            const int32_t sx = std::clamp(x - 2, 0, in[i].width - 1);
            const int32_t sy = std::clamp(y + 1, 0, in[i].height - 1);
            ASSERT_EQ(test::pixel_value(out[i], x, y, c), test::pixel_value(in[i], sx, sy, c)) << x << "," << y;
          }
        }
      }
    }
  }
}

TEST(WarpAffine, InverseMapEqualsInvertedMatrix) {
  const std::vector<ImageShape> shapes = {{40, 30, 3, PixelType::kF32}};
  const auto in = smooth_batch(shapes);
  const auto a = test::filled_batch(shapes);
  const auto b = test::filled_batch(shapes);
  const std::vector<Matrix> forward = {similarity(30.0f, 1.2f, 20, 15, 1.0f, 2.0f)};
  WarpParams params;
  params.matrices = reinterpret_cast<const float(*)[6]>(forward.data());
  ASSERT_TRUE(run_cpu(params, in, a).is_ok());
  cv::Mat inv;
  cv::invertAffineTransform(cv_matrix(forward[0]), inv);
  std::vector<Matrix> inverse(1);
  for (int k = 0; k < 6; ++k) inverse[0][static_cast<size_t>(k)] = static_cast<float>(inv.at<double>(k / 3, k % 3));
  params.matrices = reinterpret_cast<const float(*)[6]>(inverse.data());
  params.inverse_map = true;
  ASSERT_TRUE(run_cpu(params, in, b).is_ok());
  EXPECT_EQ(std::memcmp(a[0].data, b[0].data, a[0].packed_bytes()), 0);
}

TEST(WarpAffine, ThreadedMatchesSingleThreaded) {
  ThreadPool pool(2);
  for (PixelType type : {PixelType::kU8, PixelType::kF32}) {
    const std::vector<ImageShape> in_shapes = {{64, 48, 3, type}, {17, 9, 1, type}, {30, 31, 4, type}};
    const std::vector<ImageShape> out_shapes = {{50, 70, 3, type}, {20, 20, 1, type}, {31, 30, 4, type}};
    const auto in = test::random_batch(in_shapes, 33);
    const auto a = test::filled_batch(out_shapes);
    const auto b = test::filled_batch(out_shapes, 0x11);
    const std::vector<Matrix> matrices = {similarity(10, 1.3f, 0, 0, 5, 5), similarity(-170, 0.5f, 8, 4, 0, 0),
                                          similarity(45, 2.0f, 15, 15, -3, 1)};
    WarpParams params;
    params.matrices = reinterpret_cast<const float(*)[6]>(matrices.data());
    params.border = BorderMode::kReflect;
    ASSERT_TRUE(run_cpu(params, in, a).is_ok());
    ASSERT_TRUE(run_cpu(params, in, b, &pool).is_ok());
    ASSERT_NO_FATAL_FAILURE(test::assert_same_bytes(a, b));
  }
}

// Source points = the template under a known similarity: the estimate is that similarity's inverse, and it maps
// the points onto the template.
TEST(SimilarityTransform, RecoversKnownSimilarity) {
  const Matrix known = similarity(25.0f, 1.6f, 56, 56, 40.0f, -12.0f);
  float src[5][2];
  for (int i = 0; i < 5; ++i) {
    const float x = kArcFaceTemplate112[i][0], y = kArcFaceTemplate112[i][1];
    src[i][0] = known[0] * x + known[1] * y + known[2];
    src[i][1] = known[3] * x + known[4] * y + known[5];
  }
  float m[6];
  ASSERT_TRUE(similarity_transform_estimate(src, kArcFaceTemplate112, 5, m).is_ok());
  for (int i = 0; i < 5; ++i) {
    EXPECT_NEAR(m[0] * src[i][0] + m[1] * src[i][1] + m[2], kArcFaceTemplate112[i][0], 1e-3);
    EXPECT_NEAR(m[3] * src[i][0] + m[4] * src[i][1] + m[5], kArcFaceTemplate112[i][1], 1e-3);
  }
  EXPECT_NEAR(std::hypot(m[0], m[3]), 1.0 / 1.6, 1e-5);  // scale
  EXPECT_FLOAT_EQ(m[0], m[4]);
  EXPECT_FLOAT_EQ(m[1], -m[3]);
}

// Umeyama's algorithm as skimage writes it (SVD of the covariance, reflection guard), in double with cv::SVD:
// an independent reference for the closed form in warp.cpp.
cv::Mat umeyama_reference(const float (*src)[2], const float (*dst)[2], int n) {
  cv::Mat s(n, 2, CV_64F), d(n, 2, CV_64F);
  for (int i = 0; i < n; ++i) {
    for (int k = 0; k < 2; ++k) {
      s.at<double>(i, k) = src[i][k];
      d.at<double>(i, k) = dst[i][k];
    }
  }
  cv::Mat sm, dm;
  cv::reduce(s, sm, 0, cv::REDUCE_AVG);
  cv::reduce(d, dm, 0, cv::REDUCE_AVG);
  const cv::Mat sc = s - cv::repeat(sm, n, 1), dc = d - cv::repeat(dm, n, 1);
  const cv::Mat a = dc.t() * sc / n;
  cv::Mat w, u, vt;
  cv::SVD::compute(a, w, u, vt);
  cv::Mat diag = cv::Mat::eye(2, 2, CV_64F);
  if (cv::determinant(a) < 0) diag.at<double>(1, 1) = -1;
  const cv::Mat r = u * diag * vt;
  cv::Mat var;
  cv::reduce(sc.mul(sc), var, 0, cv::REDUCE_AVG);
  const double scale = (w.at<double>(0) * diag.at<double>(0, 0) + w.at<double>(1) * diag.at<double>(1, 1)) /
                       (var.at<double>(0) + var.at<double>(1));
  const cv::Mat t = dm.t() - scale * r * sm.t();
  cv::Mat out(2, 3, CV_64F);
  cv::Mat(scale * r).copyTo(out(cv::Rect(0, 0, 2, 2)));
  t.copyTo(out(cv::Rect(2, 0, 1, 2)));
  return out;
}

// Noisy landmarks: the least-squares optimum, equal to an SVD-based Umeyama.
TEST(SimilarityTransform, MatchesSvdUmeyama) {
  std::mt19937 rng(5);
  std::normal_distribution<float> noise(0.0f, 2.0f);
  for (float degrees : {-35.0f, 0.0f, 120.0f, 179.0f}) {
    const Matrix known = similarity(degrees, 2.2f, 0, 0, 150.0f, 90.0f);
    float src[5][2];
    for (int i = 0; i < 5; ++i) {
      const float x = kArcFaceTemplate112[i][0], y = kArcFaceTemplate112[i][1];
      src[i][0] = known[0] * x + known[1] * y + known[2] + noise(rng);
      src[i][1] = known[3] * x + known[4] * y + known[5] + noise(rng);
    }
    float m[6];
    ASSERT_TRUE(similarity_transform_estimate(src, kArcFaceTemplate112, 5, m).is_ok());
    const cv::Mat want = umeyama_reference(src, kArcFaceTemplate112, 5);
    for (int k = 0; k < 6; ++k) EXPECT_NEAR(m[k], want.at<double>(k / 3, k % 3), k % 3 == 2 ? 1e-3 : 1e-5) << k;
  }
}

// End to end: blobs at rotated, scaled, shifted landmarks in a 200x160 image; the warp with the estimated matrix
// puts each blob's centroid on its template point.
TEST(SimilarityTransform, WarpAlignsLandmarksToTemplate) {
  const Matrix known = similarity(-28.0f, 1.4f, 56, 56, 45.0f, 20.0f);
  float landmarks[5][2];
  for (int i = 0; i < 5; ++i) {
    const float x = kArcFaceTemplate112[i][0], y = kArcFaceTemplate112[i][1];
    landmarks[i][0] = known[0] * x + known[1] * y + known[2];
    landmarks[i][1] = known[3] * x + known[4] * y + known[5];
  }
  const auto in = test::filled_batch({{200, 160, 1, PixelType::kF32}}, 0);
  const ImageView& v = in[0];
  for (int32_t y = 0; y < v.height; ++y) {
    for (int32_t x = 0; x < v.width; ++x) {
      float value = 0;
      for (auto& p : landmarks) {
        const float dx = x - p[0], dy = y - p[1];
        value += std::exp(-(dx * dx + dy * dy) / (2.0f * 2.5f * 2.5f));
      }
      v.row<float>(y)[x] = value;
    }
  }
  std::vector<Matrix> m(1);
  ASSERT_TRUE(similarity_transform_estimate(landmarks, kArcFaceTemplate112, 5, m[0].data()).is_ok());
  const auto out = test::filled_batch({{112, 112, 1, PixelType::kF32}});
  WarpParams params;
  params.matrices = reinterpret_cast<const float(*)[6]>(m.data());
  ASSERT_TRUE(run_cpu(params, in, out).is_ok());
  for (const auto& t : kArcFaceTemplate112) {
    double sum = 0, sx = 0, sy = 0;
    for (int32_t y = static_cast<int32_t>(t[1]) - 6; y <= static_cast<int32_t>(t[1]) + 6; ++y) {
      for (int32_t x = static_cast<int32_t>(t[0]) - 6; x <= static_cast<int32_t>(t[0]) + 6; ++x) {
        const double w = out[0].row<float>(y)[x];
        sum += w;
        sx += w * x;
        sy += w * y;
      }
    }
    EXPECT_NEAR(sx / sum, t[0], 0.25);
    EXPECT_NEAR(sy / sum, t[1], 0.25);
  }
}

TEST(SimilarityTransform, RejectsDegenerateInput) {
  float m[6];
  const float same[3][2] = {{1, 1}, {1, 1}, {1, 1}};
  const float dst[3][2] = {{0, 0}, {1, 0}, {0, 1}};
  EXPECT_EQ(similarity_transform_estimate(same, dst, 3, m).code(), Errc::kInvalidArgument);
  EXPECT_EQ(similarity_transform_estimate(dst, same, 3, m).code(), Errc::kInvalidArgument);
  EXPECT_EQ(similarity_transform_estimate(dst, dst, 1, m).code(), Errc::kInvalidArgument);
  const float nan_pts[2][2] = {{std::numeric_limits<float>::quiet_NaN(), 0}, {1, 1}};
  EXPECT_EQ(similarity_transform_estimate(nan_pts, dst, 2, m).code(), Errc::kInvalidArgument);
  EXPECT_TRUE(similarity_transform_estimate(dst, dst, 2, m).is_ok());
}

TEST(WarpAffine, BorderNamesRoundTrip) {
  for (BorderMode mode : kBorders) {
    auto parsed = border_mode_parse(border_mode_name(mode));
    ASSERT_TRUE(parsed.is_ok());
    EXPECT_EQ(parsed.value(), mode);
  }
  EXPECT_EQ(border_mode_parse("reflect_101").value(), BorderMode::kReflect101);
  EXPECT_EQ(border_mode_parse("wrap").status().code(), Errc::kInvalidArgument);
}

TEST(WarpAffine, RejectsBadCalls) {
  const auto u8 = test::random_batch({{8, 8, 3, PixelType::kU8}}, 1);
  const auto f32 = test::random_batch({{8, 8, 3, PixelType::kF32}}, 1);
  const auto f16 = test::random_batch({{8, 8, 3, PixelType::kF16}}, 1);
  const auto two = test::random_batch({{8, 8, 2, PixelType::kU8}}, 1);
  const auto gray = test::random_batch({{8, 8, 1, PixelType::kU8}}, 1);
  const auto planar = test::random_batch({{8, 8, 3, PixelType::kU8, Layout::kCHW}}, 1);
  const auto pair = test::random_batch({{8, 8, 3, PixelType::kU8}, {8, 8, 3, PixelType::kU8}}, 1);
  Matrix good{1, 0, 0, 0, 1, 0};
  WarpParams params;
  params.matrices = reinterpret_cast<const float(*)[6]>(&good);
  const auto out = test::filled_batch({{8, 8, 3, PixelType::kU8}});
  EXPECT_TRUE(run_cpu(params, u8, out).is_ok());
  EXPECT_EQ(run_cpu(params, f16, f16).code(), Errc::kInvalidArgument);      // f16
  EXPECT_EQ(run_cpu(params, u8, f32).code(), Errc::kInvalidArgument);      // types differ
  EXPECT_EQ(run_cpu(params, two, two).code(), Errc::kInvalidArgument);     // 2 channels
  EXPECT_EQ(run_cpu(params, u8, gray).code(), Errc::kInvalidArgument);     // channels differ
  EXPECT_EQ(run_cpu(params, planar, planar).code(), Errc::kInvalidArgument);  // CHW
  EXPECT_EQ(run_cpu(params, u8, pair).code(), Errc::kInvalidArgument);     // counts differ
  WarpParams bad = params;
  bad.matrices = nullptr;
  EXPECT_EQ(run_cpu(bad, u8, out).code(), Errc::kInvalidArgument);
  Matrix singular{1, 2, 0, 2, 4, 0};
  bad = params;
  bad.matrices = reinterpret_cast<const float(*)[6]>(&singular);
  EXPECT_EQ(run_cpu(bad, u8, out).code(), Errc::kInvalidArgument);
  bad.inverse_map = true;  // a singular destination -> source matrix is allowed (it collapses the image)
  EXPECT_TRUE(run_cpu(bad, u8, out).is_ok());
  Matrix nan_m{1, 0, std::numeric_limits<float>::quiet_NaN(), 0, 1, 0};
  bad = params;
  bad.matrices = reinterpret_cast<const float(*)[6]>(&nan_m);
  EXPECT_EQ(run_cpu(bad, u8, out).code(), Errc::kInvalidArgument);
  bad = params;
  bad.border = static_cast<BorderMode>(9);
  EXPECT_EQ(run_cpu(bad, u8, out).code(), Errc::kInvalidArgument);
  bad = params;
  bad.border_value[2] = std::numeric_limits<float>::infinity();
  EXPECT_EQ(run_cpu(bad, u8, out).code(), Errc::kInvalidArgument);
}

}  // namespace
}  // namespace kiln
