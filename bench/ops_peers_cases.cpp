#include "ops_peers_cases.h"

#include <opencv2/core.hpp>
#include <opencv2/imgproc.hpp>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <functional>
#include <memory>

#include "kiln/image.h"
#include "kiln/image_ops.h"
#include "kiln/ops/blur.h"
#include "kiln/ops/color.h"
#include "kiln/ops/enhance.h"
#include "kiln/ops/mask.h"
#include "kiln/ops/matte.h"
#include "kiln/ops/preprocess.h"
#include "kiln/ops/quality.h"
#include "kiln/ops/resize.h"
#include "kiln/ops/warp.h"

namespace kiln::bench {

namespace {

constexpr float kImagenetMean[3] = {0.485f, 0.456f, 0.406f};
constexpr float kImagenetStd[3] = {0.229f, 0.224f, 0.225f};

// ---- inputs ------------------------------------------------------------------------------------------------

// A seeded, photo-like u8 image: uniform noise smoothed by a 5x5 box, plus a diagonal gradient.
cv::Mat image_make(int width, int height, int channels, uint64_t seed) {
  cv::RNG rng(seed);
  cv::Mat noise(height, width, CV_8UC(channels));
  rng.fill(noise, cv::RNG::UNIFORM, 0, 256);
  cv::Mat smooth;
  cv::blur(noise, smooth, cv::Size(5, 5));
  cv::Mat gradient(height, width, CV_8UC(channels));
  for (int y = 0; y < height; ++y) {
    uint8_t* row = gradient.ptr<uint8_t>(y);
    for (int x = 0; x < width * channels; ++x) row[x] = static_cast<uint8_t>(((x / channels) * 255 / width + y * 255 / height) / 2);
  }
  cv::Mat out;
  cv::addWeighted(smooth, 0.6, gradient, 0.6, -20.0, out);
  return out;
}

kiln::ImageView view_of(const cv::Mat& m, kiln::PixelType type, kiln::Layout layout, int width, int height,
                        int channels) {
  return kiln::image_view_packed(const_cast<uint8_t*>(m.data), width, height, channels, type, layout);
}
kiln::ImageView view_hwc_u8(const cv::Mat& m) {
  return view_of(m, kiln::PixelType::kU8, kiln::Layout::kHWC, m.cols, m.rows, m.channels());
}

// ---- cases -------------------------------------------------------------------------------------------------

std::string size_name(int w, int h) { return std::to_string(w) + "x" + std::to_string(h); }
std::string size_name(int w, int h, int ow, int oh) { return size_name(w, h) + "->" + size_name(ow, oh); }

double max_abs_diff(const cv::Mat& a, const cv::Mat& b) { return cv::norm(a, b, cv::NORM_INF); }

// The buffers of a case from one u8 HWC image to another: the source, kiln's and OpenCV's outputs, the batches
// kiln sees and the family's parameters. Cases that need more derive from it.
template <typename Params>
struct ImageState {
  cv::Mat src, kiln_out, cv_out;
  kiln::VarShapeBatch in, out;
  Params params;
};

// A State (an ImageState or derived): a seeded w x h RGB source, ow x oh outputs of out_channels.
template <typename State>
std::shared_ptr<State> image_state_make(int w, int h, int ow, int oh, int out_channels, uint64_t seed) {
  auto s = std::make_shared<State>();
  s->src = image_make(w, h, 3, seed);
  s->kiln_out.create(oh, ow, CV_8UC(out_channels));
  s->cv_out.create(oh, ow, CV_8UC(out_channels));
  s->in = kiln::VarShapeBatch::wrap({view_hwc_u8(s->src)});
  s->out = kiln::VarShapeBatch::wrap({view_hwc_u8(s->kiln_out)});
  return s;
}

template <typename State>
std::function<Check()> check_max_abs_diff(const std::shared_ptr<State>& s) {
  return [s] { return Check{"max_abs_diff", max_abs_diff(s->kiln_out, s->cv_out)}; };
}

// Each case owns its buffers through a shared state captured by its lambdas.
Case case_fused_preprocess(const Env& env) {
  struct State {
    cv::Mat src, kiln_out, cv_out, resized, rgb, f32;
    std::vector<cv::Mat> planes;
    kiln::VarShapeBatch in, out;
    kiln::PreprocessParams params;
  };
  auto s = std::make_shared<State>();
  const int ow = 512, oh = 512;
  s->src = image_make(1920, 1080, 3, 1);  // BGR, as cv::imread gives it
  s->kiln_out.create(3 * oh, ow, CV_32F);
  s->cv_out.create(3 * oh, ow, CV_32F);
  for (int c = 0; c < 3; ++c) s->planes.emplace_back(oh, ow, CV_32F, s->cv_out.ptr<float>(c * oh));
  s->in = kiln::VarShapeBatch::wrap({view_hwc_u8(s->src)});
  s->out = kiln::VarShapeBatch::wrap({view_of(s->kiln_out, kiln::PixelType::kF32, kiln::Layout::kCHW, ow, oh, 3)});
  s->params.interp = kiln::Interp::kBilinear;
  s->params.swap_rb = true;
  s->params.scale = 1.0f / 255.0f;
  for (int c = 0; c < 3; ++c) {
    s->params.mean[c] = kImagenetMean[c];
    s->params.std[c] = kImagenetStd[c];
  }
  Case k{.op = "fused_preprocess",
         .size = size_name(1920, 1080, ow, oh),
         .peer = "opencv",
         .peer_calls = "resize(INTER_LINEAR) + cvtColor(BGR2RGB) + convertTo(CV_32F, 1/255) + subtract + divide + "
                       "split"};
  k.kiln_run = [s, env] { return kiln::preprocess(s->params, s->in.view(), s->out.view(), env.exec, env.report); };
  k.peer_run = [s] {
    cv::resize(s->src, s->resized, cv::Size(512, 512), 0, 0, cv::INTER_LINEAR);
    cv::cvtColor(s->resized, s->rgb, cv::COLOR_BGR2RGB);
    s->rgb.convertTo(s->f32, CV_32F, 1.0 / 255.0);
    cv::subtract(s->f32, cv::Scalar(kImagenetMean[0], kImagenetMean[1], kImagenetMean[2]), s->f32);
    cv::divide(s->f32, cv::Scalar(kImagenetStd[0], kImagenetStd[1], kImagenetStd[2]), s->f32);
    cv::split(s->f32, s->planes.data());  // into the planes of one preallocated CHW buffer
  };
  k.check = check_max_abs_diff(s);
  return k;
}

Case case_quality(const Env& env, int w, int h) {
  struct State {
    cv::Mat src, gray, lap, dx, dy, mag;
    kiln::VarShapeBatch in;
    kiln::QualityParams params;
    kiln::QualityMetrics kiln_metrics;
    double cv_metrics[4] = {0, 0, 0, 0};  // blur, brightness, contrast, sharpness
  };
  auto s = std::make_shared<State>();
  s->src = image_make(w, h, 3, 2);  // RGB
  s->in = kiln::VarShapeBatch::wrap({view_hwc_u8(s->src)});
  Case k{.op = "quality",
         .size = size_name(w, h),
         .peer = "opencv",
         .peer_calls = "cvtColor(RGB2GRAY) + Laplacian(CV_64F) + meanStdDev x2 + Sobel dx, dy (CV_64F) + magnitude + mean"};
  k.kiln_run = [s, env] { return kiln::quality_measure(s->params, s->in.view(), &s->kiln_metrics, env.exec, env.report); };
  k.peer_run = [s] {
    cv::cvtColor(s->src, s->gray, cv::COLOR_RGB2GRAY);
    cv::Laplacian(s->gray, s->lap, CV_64F);
    cv::Scalar lap_mean, lap_std, mean, std;
    cv::meanStdDev(s->lap, lap_mean, lap_std);
    cv::meanStdDev(s->gray, mean, std);
    cv::Sobel(s->gray, s->dx, CV_64F, 1, 0, 3);
    cv::Sobel(s->gray, s->dy, CV_64F, 0, 1, 3);
    cv::magnitude(s->dx, s->dy, s->mag);
    s->cv_metrics[0] = lap_std[0] * lap_std[0];
    s->cv_metrics[1] = mean[0];
    s->cv_metrics[2] = std[0];
    s->cv_metrics[3] = cv::mean(s->mag)[0];
  };
  k.check = [s] {
    const double kiln_values[4] = {s->kiln_metrics.blur, s->kiln_metrics.brightness, s->kiln_metrics.contrast,
                                   s->kiln_metrics.sharpness};
    double worst = 0;
    for (int i = 0; i < 4; ++i) {
      worst = std::max(worst, std::abs(kiln_values[i] - s->cv_metrics[i]) / std::max(std::abs(s->cv_metrics[i]), 1e-12));
    }
    return Check{"max_rel_diff", worst};
  };
  return k;
}

Case case_resize(const Env& env, kiln::Interp interp, int w, int h, int ow, int oh) {
  using State = ImageState<kiln::ResizeParams>;
  auto s = image_state_make<State>(w, h, ow, oh, 3, 3);
  s->params.interp = interp;
  const bool area = interp == kiln::Interp::kArea;
  const int cv_interp = area ? cv::INTER_AREA : cv::INTER_LINEAR;
  Case k{.op = area ? "resize_area" : "resize_bilinear",
         .size = size_name(w, h, ow, oh),
         .peer = "opencv",
         .peer_calls = area ? "resize(INTER_AREA)" : "resize(INTER_LINEAR)"};
  k.kiln_run = [s, env] { return kiln::resize(s->params, s->in.view(), s->out.view(), env.exec, env.report); };
  k.peer_run = [s, ow, oh, cv_interp] { cv::resize(s->src, s->cv_out, cv::Size(ow, oh), 0, 0, cv_interp); };
  k.check = check_max_abs_diff(s);
  return k;
}

Case case_cvt_gray(const Env& env, int w, int h) {
  using State = ImageState<kiln::ColorParams>;
  auto s = image_state_make<State>(w, h, w, h, 1, 4);
  s->params.conversion = kiln::ColorConversion::kRgbToGray;
  Case k{.op = "cvt_gray", .size = size_name(w, h), .peer = "opencv", .peer_calls = "cvtColor(RGB2GRAY)"};
  k.kiln_run = [s, env] { return kiln::color_convert(s->params, s->in.view(), s->out.view(), env.exec, env.report); };
  k.peer_run = [s] { cv::cvtColor(s->src, s->cv_out, cv::COLOR_RGB2GRAY); };
  k.check = check_max_abs_diff(s);
  return k;
}

// A face-alignment-like similarity: a 200 px region around (330, 230), rotated 12 degrees, onto 112x112.
Case case_warp_affine(const Env& env) {
  struct State : ImageState<kiln::WarpParams> {
    cv::Mat m;
    float matrix[1][6];
  };
  const int ow = 112, oh = 112;
  auto s = image_state_make<State>(640, 480, ow, oh, 3, 5);
  const double scale = 112.0 / 200.0, angle = 12.0 * 3.14159265358979323846 / 180.0;
  const double a = scale * std::cos(angle), b = scale * std::sin(angle);
  const double cx = 330, cy = 230;
  const double m[6] = {a, -b, 56.0 - (a * cx - b * cy), b, a, 56.0 - (b * cx + a * cy)};
  s->m = cv::Mat(2, 3, CV_64F);
  for (int i = 0; i < 6; ++i) {
    s->matrix[0][i] = static_cast<float>(m[i]);
    s->m.at<double>(i / 3, i % 3) = static_cast<double>(s->matrix[0][i]);  // the same (float) matrix for both
  }
  s->params.matrices = s->matrix;
  s->params.border = kiln::BorderMode::kConstant;
  Case k{.op = "warp_affine",
         .size = size_name(640, 480, ow, oh),
         .peer = "opencv",
         .peer_calls = "warpAffine(INTER_LINEAR, BORDER_CONSTANT 0)"};
  k.kiln_run = [s, env] { return kiln::warp_affine(s->params, s->in.view(), s->out.view(), env.exec, env.report); };
  k.peer_run = [s] {
    cv::warpAffine(s->src, s->cv_out, s->m, cv::Size(112, 112), cv::INTER_LINEAR, cv::BORDER_CONSTANT, cv::Scalar());
  };
  k.check = check_max_abs_diff(s);
  return k;
}

// Unsharp mask, radius (Gaussian sigma) 2, 150 %, threshold 0 (OpenCV has no threshold): out = in + 1.5 (in - blur).
Case case_unsharp(const Env& env, int w, int h) {
  struct State : ImageState<kiln::EnhanceParams> {
    cv::Mat blur;
  };
  auto s = image_state_make<State>(w, h, w, h, 3, 6);
  s->params.unsharp_radius = 2.0f;
  s->params.unsharp_percent = 150.0f;
  s->params.unsharp_threshold = 0;
  Case k{.op = "unsharp",
         .size = size_name(w, h),
         .peer = "opencv",
         .peer_calls = "GaussianBlur(sigma 2) + addWeighted(2.5, -1.5)"};
  k.kiln_run = [s, env] { return kiln::enhance(s->params, s->in.view(), s->out.view(), env.exec, env.report); };
  k.peer_run = [s] {
    cv::GaussianBlur(s->src, s->blur, cv::Size(0, 0), 2.0);
    cv::addWeighted(s->src, 2.5, s->blur, -1.5, 0.0, s->cv_out);
  };
  k.check = check_max_abs_diff(s);
  return k;
}

// Softmax + argmax of 21-class logits (B, C, H, W) -> u8 class ids. Softmax is monotonic, so the OpenCV
// equivalent takes the argmax of the logits with a running max (compare + max + masked setTo per class).
Case case_mask(const Env& env) {
  constexpr int kClasses = 21, w = 512, h = 512;
  struct State {
    cv::Mat logits, kiln_out, cv_out, best, greater;
    std::vector<cv::Mat> planes;
    kiln::VarShapeBatch in, out;
    kiln::MaskParams params;
  };
  auto s = std::make_shared<State>();
  s->logits.create(kClasses * h, w, CV_32F);
  cv::RNG rng(7);
  rng.fill(s->logits, cv::RNG::NORMAL, 0.0, 2.0);
  for (int c = 0; c < kClasses; ++c) s->planes.emplace_back(h, w, CV_32F, s->logits.ptr<float>(c * h));
  s->kiln_out.create(h, w, CV_8UC1);
  s->cv_out.create(h, w, CV_8UC1);
  s->in = kiln::VarShapeBatch::wrap({view_of(s->logits, kiln::PixelType::kF32, kiln::Layout::kCHW, w, h, kClasses)});
  s->out = kiln::VarShapeBatch::wrap({view_of(s->kiln_out, kiln::PixelType::kU8, kiln::Layout::kCHW, w, h, 1)});
  s->params.activation = kiln::MaskActivation::kSoftmax;
  s->params.target_class = -1;
  Case k{.op = "mask",
         .size = std::to_string(kClasses) + "x" + size_name(w, h),
         .peer = "opencv",
         .peer_calls = "argmax of the logits: per class compare(CMP_GT) + max + setTo(class, mask)"};
  k.kiln_run = [s, env] { return kiln::mask_postprocess(s->params, s->in.view(), s->out.view(), env.exec, env.report); };
  k.peer_run = [s] {
    s->planes[0].copyTo(s->best);
    s->cv_out.setTo(0);
    for (int c = 1; c < kClasses; ++c) {
      cv::compare(s->planes[static_cast<size_t>(c)], s->best, s->greater, cv::CMP_GT);
      cv::max(s->best, s->planes[static_cast<size_t>(c)], s->best);
      s->cv_out.setTo(c, s->greater);
    }
  };
  k.check = [s] {
    return Check{"mismatch_fraction", static_cast<double>(cv::countNonZero(s->kiln_out != s->cv_out)) /
                                          static_cast<double>(s->kiln_out.total())};
  };
  return k;
}

// A segmentation model's person probability (256 x 256, a smooth blob) -> a 1280 x 720 frame's 0/255 mask: what
// kiln segment does per frame and the sequential loop of bench/segment_peers does with OpenCV.
Case case_matte(const Env& env) {
  constexpr int mw = 256, mh = 256, w = 1280, h = 720;
  struct State {
    cv::Mat prob, big, kiln_out, cv_out;
    kiln::VarShapeBatch in, out;
    kiln::MatteParams params;
  };
  auto s = std::make_shared<State>();
  s->prob.create(mh, mw, CV_32F);
  for (int y = 0; y < mh; ++y) {
    for (int x = 0; x < mw; ++x) {
      const double dx = (x - mw * 0.5) / (mw * 0.25), dy = (y - mh * 0.55) / (mh * 0.4);
      s->prob.at<float>(y, x) = static_cast<float>(1.0 / (1.0 + std::exp(6.0 * (dx * dx + dy * dy - 1.0))));
    }
  }
  s->kiln_out.create(h, w, CV_8UC1);
  s->cv_out.create(h, w, CV_8UC1);
  s->in = kiln::VarShapeBatch::wrap({view_of(s->prob, kiln::PixelType::kF32, kiln::Layout::kHWC, mw, mh, 1)});
  s->out = kiln::VarShapeBatch::wrap({view_of(s->kiln_out, kiln::PixelType::kU8, kiln::Layout::kHWC, w, h, 1)});
  Case k{.op = "matte",
         .size = size_name(mw, mh, w, h),
         .peer = "opencv",
         .peer_calls = "resize(INTER_LINEAR) + threshold(0.5, 255) + convertTo(CV_8U)"};
  k.kiln_run = [s, env] { return kiln::matte_render(s->params, s->in.view(), s->out.view(), env.exec, env.report); };
  k.peer_run = [s] {
    cv::resize(s->prob, s->big, cv::Size(w, h), 0, 0, cv::INTER_LINEAR);
    cv::threshold(s->big, s->big, 0.5, 255, cv::THRESH_BINARY);
    s->big.convertTo(s->cv_out, CV_8U);
  };
  k.check = [s] {
    return Check{"mismatch_fraction", static_cast<double>(cv::countNonZero(s->kiln_out != s->cv_out)) /
                                          static_cast<double>(s->kiln_out.total())};
  };
  return k;
}

// kiln segment's blurred background at --blur_radius 25 (shrink by 6, two boxes of radius 2, enlarge) against the
// same steps in OpenCV.
Case case_blur(const Env& env, int w, int h) {
  struct State : ImageState<kiln::BlurParams> {
    cv::Mat small;
  };
  auto s = image_state_make<State>(w, h, w, h, 3, 8);
  s->params = kiln::blur_params_for_radius(25);
  const int factor = s->params.factor, box = 2 * s->params.radius + 1;
  Case k{.op = "blur",
         .size = size_name(w, h),
         .peer = "opencv",
         .peer_calls = "resize(INTER_AREA, 1/6) + blur(5x5, BORDER_REPLICATE) x2 + resize(INTER_LINEAR)"};
  k.kiln_run = [s, env] { return kiln::blur(s->params, s->in.view(), s->out.view(), env.exec, env.report); };
  k.peer_run = [s, w, h, factor, box] {
    cv::resize(s->src, s->small, cv::Size(w / factor, h / factor), 0, 0, cv::INTER_AREA);
    for (int pass = 0; pass < 2; ++pass) {
      cv::blur(s->small, s->small, cv::Size(box, box), cv::Point(-1, -1), cv::BORDER_REPLICATE);
    }
    cv::resize(s->small, s->cv_out, cv::Size(w, h), 0, 0, cv::INTER_LINEAR);
  };
  k.check = check_max_abs_diff(s);
  return k;
}

}  // namespace

std::vector<Case> ops_peers_cases_make(const Env& env) {
  std::vector<Case> cases;
  cases.push_back(case_fused_preprocess(env));
  cases.push_back(case_quality(env, 640, 480));
  cases.push_back(case_quality(env, 1920, 1080));
  cases.push_back(case_resize(env, kiln::Interp::kBilinear, 1920, 1080, 512, 512));
  cases.push_back(case_resize(env, kiln::Interp::kBilinear, 640, 480, 112, 112));
  cases.push_back(case_resize(env, kiln::Interp::kArea, 1920, 1080, 512, 512));
  cases.push_back(case_resize(env, kiln::Interp::kArea, 640, 480, 112, 112));
  cases.push_back(case_cvt_gray(env, 640, 480));
  cases.push_back(case_cvt_gray(env, 1920, 1080));
  cases.push_back(case_warp_affine(env));
  cases.push_back(case_unsharp(env, 640, 480));
  cases.push_back(case_unsharp(env, 1920, 1080));
  cases.push_back(case_mask(env));
  cases.push_back(case_matte(env));
  cases.push_back(case_blur(env, 1280, 720));
  cases.push_back(case_blur(env, 1920, 1080));
  return cases;
}

}  // namespace kiln::bench
