// ops_peers: kiln's image ops against the equivalent OpenCV calls, on the same inputs and the same thread count.
//
//   ops_peers [--json FILE|-] [--threads N] [--seconds S] [--mode auto|gpu|cpu] [--ops a,b]
//
// Per op and size, one image per iteration: a warm-up (the first call, then kWarmFraction * S seconds), then
// iterations for S seconds (at least 3), reported as mean ± sample stddev of the per-iteration time and as images
// per second (1 / mean), plus the process CPU time per iteration (the steadier number on a shared machine; with
// one thread it is the time of the calling thread). "kiln_over_opencv" is OpenCV's mean time ÷ kiln's (> 1: kiln
// is faster), "kiln_over_opencv_cpu" the same on CPU time. kiln runs through the public op wrappers (op_run:
// validation, placement, run) with ExecOptions.mode (default cpu) and a kiln ThreadPool of N threads (nullptr
// for 1); OpenCV runs with cv::setNumThreads(N). Outputs are preallocated and reused by both tools. An op that kiln refuses (for instance
// NotImplemented while its family is unfinished) is reported with "error" and skipped, never aborts the run.
// After timing, kiln's output is compared with OpenCV's ("check"), so that a ratio is never reported for two tools
// doing different work without it showing.
#include <opencv2/core.hpp>
#include <opencv2/core/utility.hpp>
#include <opencv2/imgproc.hpp>

#include <algorithm>
#include <time.h>

#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <functional>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include "core/thread_pool.h"
#include "kiln/device.h"
#include "kiln/image_ops.h"
#include "kiln/image.h"
#include "kiln/exec.h"
#include "kiln/ops/color.h"
#include "kiln/ops/enhance.h"
#include "kiln/ops/mask.h"
#include "kiln/ops/preprocess.h"
#include "kiln/ops/quality.h"
#include "kiln/ops/resize.h"
#include "kiln/ops/warp.h"

namespace {

constexpr double kWarmFraction = 0.2;   // warm-up time after the first call, as a fraction of --seconds
constexpr size_t kMaxIterations = 100000;
constexpr float kImagenetMean[3] = {0.485f, 0.456f, 0.406f};
constexpr float kImagenetStd[3] = {0.229f, 0.224f, 0.225f};

struct Options {
  std::string json_path;  // "-": JSON on stdout instead of the table
  int32_t threads = 1;
  double seconds = 1.0;
  kiln::ExecMode mode = kiln::ExecMode::kCpu;
  std::vector<std::string> ops;  // empty: all
};

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

struct Check {
  std::string kind;  // max_abs_diff | max_rel_diff | mismatch_fraction
  double value = 0;
};

struct Case {
  std::string op;
  std::string size;  // "1920x1080->512x512"
  std::string peer;  // "opencv", or "" for kiln-only
  std::string peer_calls;
  std::function<kiln::Status()> kiln_run;
  std::function<void()> peer_run;
  std::function<Check()> check;  // after both ran: how far apart the outputs are
};

std::string size_name(int w, int h) { return std::to_string(w) + "x" + std::to_string(h); }
std::string size_name(int w, int h, int ow, int oh) { return size_name(w, h) + "->" + size_name(ow, oh); }

double max_abs_diff(const cv::Mat& a, const cv::Mat& b) { return cv::norm(a, b, cv::NORM_INF); }

struct Env {
  kiln::ExecOptions exec;
  kiln::ExecReport* report = nullptr;  // the last kiln call's placement
};

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
  Case k;
  k.op = "fused_preprocess";
  k.size = size_name(1920, 1080, ow, oh);
  k.peer = "opencv";
  k.peer_calls = "resize(INTER_LINEAR) + cvtColor(BGR2RGB) + convertTo(CV_32F, 1/255) + subtract + divide + split";
  k.kiln_run = [s, env] { return kiln::preprocess(s->params, s->in.view(), s->out.view(), env.exec, env.report); };
  k.peer_run = [s] {
    cv::resize(s->src, s->resized, cv::Size(512, 512), 0, 0, cv::INTER_LINEAR);
    cv::cvtColor(s->resized, s->rgb, cv::COLOR_BGR2RGB);
    s->rgb.convertTo(s->f32, CV_32F, 1.0 / 255.0);
    cv::subtract(s->f32, cv::Scalar(kImagenetMean[0], kImagenetMean[1], kImagenetMean[2]), s->f32);
    cv::divide(s->f32, cv::Scalar(kImagenetStd[0], kImagenetStd[1], kImagenetStd[2]), s->f32);
    cv::split(s->f32, s->planes.data());  // into the planes of one preallocated CHW buffer
  };
  k.check = [s] { return Check{"max_abs_diff", max_abs_diff(s->kiln_out, s->cv_out)}; };
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
  Case k;
  k.op = "quality";
  k.size = size_name(w, h);
  k.peer = "opencv";
  k.peer_calls = "cvtColor(RGB2GRAY) + Laplacian(CV_64F) + meanStdDev x2 + Sobel dx, dy (CV_64F) + magnitude + mean";
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
  struct State {
    cv::Mat src, kiln_out, cv_out;
    kiln::VarShapeBatch in, out;
    kiln::ResizeParams params;
  };
  auto s = std::make_shared<State>();
  s->src = image_make(w, h, 3, 3);
  s->kiln_out.create(oh, ow, CV_8UC3);
  s->cv_out.create(oh, ow, CV_8UC3);
  s->in = kiln::VarShapeBatch::wrap({view_hwc_u8(s->src)});
  s->out = kiln::VarShapeBatch::wrap({view_hwc_u8(s->kiln_out)});
  s->params.interp = interp;
  const int cv_interp = interp == kiln::Interp::kArea ? cv::INTER_AREA : cv::INTER_LINEAR;
  Case k;
  k.op = interp == kiln::Interp::kArea ? "resize_area" : "resize_bilinear";
  k.size = size_name(w, h, ow, oh);
  k.peer = "opencv";
  k.peer_calls = interp == kiln::Interp::kArea ? "resize(INTER_AREA)" : "resize(INTER_LINEAR)";
  k.kiln_run = [s, env] { return kiln::resize(s->params, s->in.view(), s->out.view(), env.exec, env.report); };
  k.peer_run = [s, ow, oh, cv_interp] { cv::resize(s->src, s->cv_out, cv::Size(ow, oh), 0, 0, cv_interp); };
  k.check = [s] { return Check{"max_abs_diff", max_abs_diff(s->kiln_out, s->cv_out)}; };
  return k;
}

Case case_cvt_gray(const Env& env, int w, int h) {
  struct State {
    cv::Mat src, kiln_out, cv_out;
    kiln::VarShapeBatch in, out;
    kiln::ColorParams params;
  };
  auto s = std::make_shared<State>();
  s->src = image_make(w, h, 3, 4);
  s->kiln_out.create(h, w, CV_8UC1);
  s->cv_out.create(h, w, CV_8UC1);
  s->in = kiln::VarShapeBatch::wrap({view_hwc_u8(s->src)});
  s->out = kiln::VarShapeBatch::wrap({view_hwc_u8(s->kiln_out)});
  s->params.conversion = kiln::ColorConversion::kRgbToGray;
  Case k;
  k.op = "cvt_gray";
  k.size = size_name(w, h);
  k.peer = "opencv";
  k.peer_calls = "cvtColor(RGB2GRAY)";
  k.kiln_run = [s, env] { return kiln::color_convert(s->params, s->in.view(), s->out.view(), env.exec, env.report); };
  k.peer_run = [s] { cv::cvtColor(s->src, s->cv_out, cv::COLOR_RGB2GRAY); };
  k.check = [s] { return Check{"max_abs_diff", max_abs_diff(s->kiln_out, s->cv_out)}; };
  return k;
}

// A face-alignment-like similarity: a 200 px region around (330, 230), rotated 12 degrees, onto 112x112.
Case case_warp_affine(const Env& env) {
  struct State {
    cv::Mat src, kiln_out, cv_out, m;
    float matrix[1][6];
    kiln::VarShapeBatch in, out;
    kiln::WarpParams params;
  };
  auto s = std::make_shared<State>();
  const int ow = 112, oh = 112;
  s->src = image_make(640, 480, 3, 5);
  s->kiln_out.create(oh, ow, CV_8UC3);
  s->cv_out.create(oh, ow, CV_8UC3);
  const double scale = 112.0 / 200.0, angle = 12.0 * 3.14159265358979323846 / 180.0;
  const double a = scale * std::cos(angle), b = scale * std::sin(angle);
  const double cx = 330, cy = 230;
  const double m[6] = {a, -b, 56.0 - (a * cx - b * cy), b, a, 56.0 - (b * cx + a * cy)};
  s->m = cv::Mat(2, 3, CV_64F);
  for (int i = 0; i < 6; ++i) {
    s->matrix[0][i] = static_cast<float>(m[i]);
    s->m.at<double>(i / 3, i % 3) = static_cast<double>(s->matrix[0][i]);  // the same (float) matrix for both
  }
  s->in = kiln::VarShapeBatch::wrap({view_hwc_u8(s->src)});
  s->out = kiln::VarShapeBatch::wrap({view_hwc_u8(s->kiln_out)});
  s->params.matrices = s->matrix;
  s->params.border = kiln::BorderMode::kConstant;
  Case k;
  k.op = "warp_affine";
  k.size = size_name(640, 480, ow, oh);
  k.peer = "opencv";
  k.peer_calls = "warpAffine(INTER_LINEAR, BORDER_CONSTANT 0)";
  k.kiln_run = [s, env] { return kiln::warp_affine(s->params, s->in.view(), s->out.view(), env.exec, env.report); };
  k.peer_run = [s] {
    cv::warpAffine(s->src, s->cv_out, s->m, cv::Size(112, 112), cv::INTER_LINEAR, cv::BORDER_CONSTANT, cv::Scalar());
  };
  k.check = [s] { return Check{"max_abs_diff", max_abs_diff(s->kiln_out, s->cv_out)}; };
  return k;
}

// Unsharp mask, radius (Gaussian sigma) 2, 150 %, threshold 0 (OpenCV has no threshold): out = in + 1.5 (in - blur).
Case case_unsharp(const Env& env, int w, int h) {
  struct State {
    cv::Mat src, kiln_out, cv_out, blur;
    kiln::VarShapeBatch in, out;
    kiln::EnhanceParams params;
  };
  auto s = std::make_shared<State>();
  s->src = image_make(w, h, 3, 6);
  s->kiln_out.create(h, w, CV_8UC3);
  s->cv_out.create(h, w, CV_8UC3);
  s->in = kiln::VarShapeBatch::wrap({view_hwc_u8(s->src)});
  s->out = kiln::VarShapeBatch::wrap({view_hwc_u8(s->kiln_out)});
  s->params.unsharp_radius = 2.0f;
  s->params.unsharp_percent = 150.0f;
  s->params.unsharp_threshold = 0;
  Case k;
  k.op = "unsharp";
  k.size = size_name(w, h);
  k.peer = "opencv";
  k.peer_calls = "GaussianBlur(sigma 2) + addWeighted(2.5, -1.5)";
  k.kiln_run = [s, env] { return kiln::enhance(s->params, s->in.view(), s->out.view(), env.exec, env.report); };
  k.peer_run = [s] {
    cv::GaussianBlur(s->src, s->blur, cv::Size(0, 0), 2.0);
    cv::addWeighted(s->src, 2.5, s->blur, -1.5, 0.0, s->cv_out);
  };
  k.check = [s] { return Check{"max_abs_diff", max_abs_diff(s->kiln_out, s->cv_out)}; };
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
  Case k;
  k.op = "mask";
  k.size = std::to_string(kClasses) + "x" + size_name(w, h);
  k.peer = "opencv";
  k.peer_calls = "argmax of the logits: per class compare(CMP_GT) + max + setTo(class, mask)";
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

std::vector<Case> cases_make(const Env& env) {
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
  return cases;
}

// ---- timing ------------------------------------------------------------------------------------------------

struct Row {
  std::string op, tool, size;
  std::string error;       // non-empty: not measured
  std::vector<double> ms;      // wall clock, per iteration
  std::vector<double> cpu_ms;  // CPU time of the process (all threads), per iteration
  double mean_ms = 0, stddev_ms = 0, cpu_mean_ms = 0, cpu_stddev_ms = 0;
};

void mean_stddev(const std::vector<double>& v, double* mean, double* stddev) {
  const auto n = static_cast<double>(v.size());
  double sum = 0;
  for (double x : v) sum += x;
  *mean = sum / n;
  double sq = 0;
  for (double x : v) sq += (x - *mean) * (x - *mean);
  *stddev = v.size() > 1 ? std::sqrt(sq / (n - 1)) : 0.0;
}

void stats_fill(Row* r) {
  mean_stddev(r->ms, &r->mean_ms, &r->stddev_ms);
  mean_stddev(r->cpu_ms, &r->cpu_mean_ms, &r->cpu_stddev_ms);
}

double process_cpu_ms() {
  timespec ts{};
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) * 1e3 + static_cast<double>(ts.tv_nsec) * 1e-6;
}

double seconds_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

// fn returns an empty string on success, else the error.
Row measure(const std::string& op, const std::string& tool, const std::string& size,
            const std::function<std::string()>& fn, double seconds) {
  Row r{op, tool, size, "", {}, {}, 0, 0, 0, 0};
  r.error = fn();  // first call: allocations, program builds
  if (!r.error.empty()) return r;
  const auto warm = std::chrono::steady_clock::now();
  while (seconds_since(warm) < kWarmFraction * seconds) {
    r.error = fn();
    if (!r.error.empty()) return r;
  }
  const auto start = std::chrono::steady_clock::now();
  while (r.ms.size() < 3 || (seconds_since(start) < seconds && r.ms.size() < kMaxIterations)) {
    const double c0 = process_cpu_ms();
    const auto t0 = std::chrono::steady_clock::now();
    r.error = fn();
    r.ms.push_back(seconds_since(t0) * 1e3);
    r.cpu_ms.push_back(process_cpu_ms() - c0);
    if (!r.error.empty()) {
      r.ms.clear();
      return r;
    }
  }
  stats_fill(&r);
  return r;
}

// ---- report ------------------------------------------------------------------------------------------------

std::string git_commit() {
  std::string out;
  if (FILE* p = popen("git -C '" KILN_SOURCE_DIR "' rev-parse --short HEAD 2>/dev/null", "r")) {
    char buf[128];
    while (std::fgets(buf, sizeof buf, p) != nullptr) out += buf;
    pclose(p);
  }
  out = out.substr(0, out.find_first_of("\r\n"));
  return out.empty() ? "unknown" : out;
}

std::string cpu_model() {
  std::ifstream in("/proc/cpuinfo");
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind("model name", 0) == 0) {
      const size_t colon = line.find(':');
      if (colon != std::string::npos) return line.substr(line.find_first_not_of(" \t", colon + 1));
    }
  }
  return "unknown";
}

void usage(FILE* f) {
  std::fprintf(f,
               "usage: ops_peers [--json FILE|-] [--threads N] [--seconds S] [--mode auto|gpu|cpu] [--ops a,b]\n"
               "  --json FILE   also write the results as JSON (\"-\": JSON on stdout instead of the table)\n"
               "  --threads N   threads for both tools (default 1): cv::setNumThreads(N), a kiln ThreadPool(N)\n"
               "  --seconds S   timed run per op, size and tool after the warm-up (default 1.0)\n"
               "  --mode M      kiln's ExecOptions.mode (default cpu)\n"
               "  --ops a,b     only these ops: fused_preprocess quality resize_bilinear resize_area cvt_gray\n"
               "                warp_affine unsharp mask\n");
}

std::vector<std::string> split_list(const std::string& s) {
  std::vector<std::string> out;
  std::stringstream in(s);
  std::string item;
  while (std::getline(in, item, ',')) {
    if (!item.empty()) out.push_back(item);
  }
  return out;
}

std::optional<Options> options_parse(int argc, char** argv) {
  Options opt;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    const bool has_value = i + 1 < argc;
    if (arg == "--json" && has_value) {
      opt.json_path = argv[++i];
    } else if (arg == "--threads" && has_value) {
      opt.threads = std::atoi(argv[++i]);
    } else if (arg == "--seconds" && has_value) {
      opt.seconds = std::atof(argv[++i]);
    } else if (arg == "--mode" && has_value) {
      auto mode = kiln::exec_mode_parse(argv[++i]);
      if (!mode.is_ok()) {
        std::fprintf(stderr, "ops_peers: %s\n", mode.status().message().c_str());
        return std::nullopt;
      }
      opt.mode = mode.value();
    } else if (arg == "--ops" && has_value) {
      opt.ops = split_list(argv[++i]);
    } else if (arg == "-h" || arg == "--help") {
      usage(stdout);
      std::exit(0);
    } else {
      std::fprintf(stderr, "ops_peers: bad argument '%s'\n", arg.c_str());
      return std::nullopt;
    }
  }
  if (!(opt.seconds > 0.0) || opt.threads < 1) {
    std::fprintf(stderr, "ops_peers: --seconds must be > 0 and --threads >= 1\n");
    return std::nullopt;
  }
  return opt;
}

}  // namespace

int main(int argc, char** argv) {
  const std::optional<Options> parsed = options_parse(argc, argv);
  if (!parsed) {
    usage(stderr);
    return 2;
  }
  const Options& opt = *parsed;
  const bool table = opt.json_path != "-";
  cv::setNumThreads(opt.threads);
  std::unique_ptr<kiln::ThreadPool> pool;
  if (opt.threads > 1) pool = std::make_unique<kiln::ThreadPool>(opt.threads);
  Env env;
  env.exec.mode = opt.mode;
  env.exec.pool = pool.get();
  kiln::ExecReport report;
  env.report = &report;

  const std::string commit = git_commit();
  const std::string device = cpu_model();
  if (table) {
    std::printf("ops_peers: commit %s, %s, OpenCV %s, %d thread(s), kiln mode %s, %g s per op/size/tool\n",
                commit.c_str(), device.c_str(), CV_VERSION, opt.threads, kiln::exec_mode_name(opt.mode), opt.seconds);
    std::fflush(stdout);
  }

  nlohmann::json results = nlohmann::json::array();
  nlohmann::json ratios = nlohmann::json::array();
  nlohmann::json checks = nlohmann::json::array();
  if (table) {
    std::printf("\n%-17s %-20s %-7s %20s %10s %20s\n", "op", "size", "tool", "ms (mean ± sd)", "img/s",
                "CPU ms (mean ± sd)");
  }
  for (Case& c : cases_make(env)) {
    if (!opt.ops.empty() && std::find(opt.ops.begin(), opt.ops.end(), c.op) == opt.ops.end()) continue;
    std::vector<Row> rows;
    report = kiln::ExecReport{};
    rows.push_back(measure(c.op, "kiln", c.size, [&] {
      const kiln::Status st = c.kiln_run();
      return st.is_ok() ? std::string() : st.to_string();
    }, opt.seconds));
    if (c.peer_run) {
      rows.push_back(measure(c.op, c.peer, c.size, [&] {
        try {
          c.peer_run();
        } catch (const cv::Exception& e) {
          return std::string("OpenCV: ") + e.what();
        }
        return std::string();
      }, opt.seconds));
    }
    for (const Row& r : rows) {
      nlohmann::json j{{"op", r.op}, {"tool", r.tool}, {"size", r.size}, {"threads", opt.threads}};
      if (r.tool == "kiln" && !report.backend.empty()) j["backend"] = report.backend;
      if (r.tool != "kiln") j["calls"] = c.peer_calls;
      if (r.error.empty()) {
        j["img_per_s"] = 1e3 / r.mean_ms;
        j["mean_ms"] = r.mean_ms;
        j["stddev_ms"] = r.stddev_ms;
        j["cpu_ms"] = r.cpu_mean_ms;
        j["cpu_stddev_ms"] = r.cpu_stddev_ms;
        j["iterations"] = r.ms.size();
      } else {
        j["error"] = r.error;
      }
      results.push_back(j);
      if (table) {
        if (r.error.empty()) {
          std::printf("%-17s %-20s %-7s %10.3f ± %7.3f %10.1f %10.3f ± %7.3f\n", r.op.c_str(), r.size.c_str(),
                      r.tool.c_str(), r.mean_ms, r.stddev_ms, 1e3 / r.mean_ms, r.cpu_mean_ms, r.cpu_stddev_ms);
        } else {
          std::printf("%-17s %-20s %-7s skipped: %s\n", r.op.c_str(), r.size.c_str(), r.tool.c_str(), r.error.c_str());
        }
        std::fflush(stdout);
      }
    }
    if (rows.size() == 2 && rows[0].error.empty() && rows[1].error.empty()) {
      ratios.push_back({{"op", c.op},
                        {"size", c.size},
                        {"kiln_over_opencv", rows[1].mean_ms / rows[0].mean_ms},
                        {"kiln_over_opencv_cpu", rows[1].cpu_mean_ms / rows[0].cpu_mean_ms}});
      if (c.check) {
        const Check k = c.check();
        checks.push_back({{"op", c.op}, {"size", c.size}, {"kind", k.kind}, {"value", k.value}});
      }
    }
  }

  if (table) {
    std::printf("\n%-17s %-20s %14s %14s   %s\n", "op", "size", "kiln ÷ opencv", "(CPU time)", "check (kiln vs opencv)");
    for (const auto& q : ratios) {
      std::string check;
      for (const auto& k : checks) {
        if (k["op"] == q["op"] && k["size"] == q["size"]) {
          char buf[96];
          std::snprintf(buf, sizeof buf, "%s %.3g", k["kind"].get<std::string>().c_str(), k["value"].get<double>());
          check = buf;
        }
      }
      std::printf("%-17s %-20s %13.2fx %13.2fx   %s\n", q["op"].get<std::string>().c_str(),
                  q["size"].get<std::string>().c_str(), q["kiln_over_opencv"].get<double>(),
                  q["kiln_over_opencv_cpu"].get<double>(), check.c_str());
    }
  }

  if (!opt.json_path.empty()) {
    nlohmann::json out{{"commit", commit},
                       {"device", device},
                       {"threads", opt.threads},
                       {"mode", kiln::exec_mode_name(opt.mode)},
                       {"opencv_version", CV_VERSION},
                       {"seconds", opt.seconds},
                       {"warmup_s", kWarmFraction * opt.seconds},
                       {"results", results},
                       {"ratios", ratios},
                       {"checks", checks}};
    if (opt.json_path == "-") {
      std::printf("%s\n", out.dump(2).c_str());
    } else {
      std::ofstream f(opt.json_path);
      f << out.dump(2) << "\n";
      if (!f) {
        std::fprintf(stderr, "ops_peers: cannot write %s\n", opt.json_path.c_str());
        return 1;
      }
      std::printf("\nwrote %s\n", opt.json_path.c_str());
    }
  }
  return 0;
}
