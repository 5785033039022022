// _kiln.quality (metrics + verdicts) and _kiln.preprocess (fused resize/normalize into an inference tensor).
#include <pybind11/numpy.h>
#include <pybind11/stl.h>

#include <array>
#include <string>
#include <vector>

#include "bindings.h"
#include "core/thread_pool.h"
#include "errors.h"
#include "image_input.h"
#include "kiln/image_ops.h"

namespace kiln::py {

namespace {

namespace pyb = pybind11;

ExecOptions exec_make(OpKind op, const std::string& mode) {
  // The environment first (GPU_BACKEND, ALL_GPU, the op's switch); an explicit mode argument wins over it.
  ExecOptions exec;
  status_check(exec_options_apply_env(op, &exec));
  Result<ExecMode> parsed = exec_mode_parse(mode);
  status_check(parsed.status());
  if (parsed.value() != ExecMode::kAuto) exec.mode = parsed.value();
  return exec;
}

pyb::dict quality(pyb::handle images, bool bgr, double min_blur, double min_brightness, double max_brightness,
                  double min_sharpness, double min_contrast, double min_score, const std::string& mode,
                  int32_t threads) {
  const ImageListInput input = images_from_object(images);
  const int64_t n = static_cast<int64_t>(input.views.size());
  QualityParams params;
  params.bgr = bgr;
  ExecOptions exec = exec_make(OpKind::kQuality, mode);
  std::vector<QualityMetrics> metrics(static_cast<size_t>(n));
  ExecReport report;
  Status status;
  {
    pyb::gil_scoped_release release;
    ThreadPool pool(threads);
    exec.pool = &pool;
    status = quality_measure(params, input.batch(), metrics.data(), exec, &report);
  }
  status_check(status);
  QualityThresholds thresholds;
  thresholds.min_blur = min_blur;
  thresholds.min_brightness = min_brightness;
  thresholds.max_brightness = max_brightness;
  thresholds.min_sharpness = min_sharpness;
  thresholds.min_contrast = min_contrast;
  thresholds.min_score = min_score;
  std::array<pyb::array_t<double>, 5> columns{pyb::array_t<double>(n), pyb::array_t<double>(n), pyb::array_t<double>(n),
                                             pyb::array_t<double>(n), pyb::array_t<double>(n)};
  pyb::array_t<bool> passed(n);
  pyb::list reasons;
  for (int64_t i = 0; i < n; ++i) {
    const QualityMetrics& m = metrics[static_cast<size_t>(i)];
    const double values[5] = {m.blur, m.brightness, m.contrast, m.sharpness, m.score};
    for (size_t k = 0; k < 5; ++k) columns[k].mutable_at(i) = values[k];
    const QualityVerdict verdict = quality_judge(m, thresholds);
    passed.mutable_at(i) = verdict.pass;
    reasons.append(pyb::cast(verdict.reasons));
  }
  pyb::dict out;
  const char* names[5] = {"blur", "brightness", "contrast", "sharpness", "score"};
  for (size_t k = 0; k < 5; ++k) out[names[k]] = columns[k];
  out["passed"] = passed;
  out["reasons"] = reasons;
  out["backend"] = report.backend;
  if (!report.fallback.empty()) out["fallback"] = report.fallback;
  return out;
}

std::array<float, 4> floats4(const std::vector<float>& v, const char* what, float fill) {
  if (v.empty() || v.size() > 4) raise_value_error(std::string(what) + ": expected 1 to 4 values");
  std::array<float, 4> out{fill, fill, fill, fill};
  for (size_t i = 0; i < v.size(); ++i) out[i] = v[i];
  return out;
}

pyb::array preprocess(pyb::handle images, std::pair<int32_t, int32_t> size, const std::string& layout,
                      const std::string& dtype, const std::string& interp, bool letterbox, std::vector<float> pad,
                      std::vector<float> mean, std::vector<float> std_dev, float scale, bool swap_rb,
                      const std::string& mode, int32_t threads) {
  const ImageListInput input = images_from_object(images);
  const auto [height, width] = size;
  if (width <= 0 || height <= 0) raise_value_error("size: expected positive (height, width)");
  if (layout != "chw" && layout != "hwc") raise_value_error("layout: expected 'chw' or 'hwc', got '" + layout + "'");
  const bool f16 = dtype == "float16" || dtype == "f16";
  if (!f16 && dtype != "float32" && dtype != "f32") raise_value_error("dtype: expected float32 or float16, got '" + dtype + "'");
  Result<Interp> parsed = interp_parse(interp);
  status_check(parsed.status());

  PreprocessParams params;
  params.interp = parsed.value();
  params.fit = letterbox ? ResizeFit::kLetterbox : ResizeFit::kStretch;
  params.swap_rb = swap_rb;
  params.scale = scale;
  const auto p = floats4(pad, "pad", pad.empty() ? 0.0f : pad.back());
  const auto m = floats4(mean, "mean", 0.0f);
  const auto s = floats4(std_dev, "std", 1.0f);
  for (int c = 0; c < 4; ++c) {
    params.pad[c] = p[c];
    params.mean[c] = m[c];
    params.std[c] = s[c];
  }

  const int64_t n = static_cast<int64_t>(input.views.size());
  const int32_t channels = n > 0 ? input.views[0].channels : 3;
  for (const ImageView& v : input.views) {
    if (v.channels != channels) raise_value_error("images: every image needs the same number of channels");
  }
  const bool chw = layout == "chw";
  const std::vector<pyb::ssize_t> shape = chw ? std::vector<pyb::ssize_t>{n, channels, height, width}
                                              : std::vector<pyb::ssize_t>{n, height, width, channels};
  pyb::array out = f16 ? pyb::array(pyb::dtype("float16"), shape) : pyb::array(pyb::dtype::of<float>(), shape);
  const PixelType type = f16 ? PixelType::kF16 : PixelType::kF32;
  const int64_t image_bytes = static_cast<int64_t>(channels) * width * height * (f16 ? 2 : 4);
  std::vector<ImageView> outs;
  for (int64_t i = 0; i < n; ++i) {
    outs.push_back(image_view_packed(static_cast<uint8_t*>(out.mutable_data()) + i * image_bytes, width, height,
                                     channels, type, chw ? Layout::kCHW : Layout::kHWC));
  }
  ExecOptions exec = exec_make(OpKind::kPreprocess, mode);
  Status status;
  {
    pyb::gil_scoped_release release;
    ThreadPool pool(threads);
    exec.pool = &pool;
    status = kiln::preprocess(params, input.batch(), VarShapeBatchView{outs.data(), n, MemorySpace::kHost}, exec);
  }
  status_check(status);
  return out;
}

}  // namespace

void image_ops_bindings_add(pyb::module_& m) {
  using namespace pybind11::literals;
  m.def("quality", &quality, "images"_a, pyb::kw_only(), "bgr"_a = false, "min_blur"_a = 120.0,
        "min_brightness"_a = 30.0, "max_brightness"_a = 225.0, "min_sharpness"_a = 100.0, "min_contrast"_a = 0.0,
        "min_score"_a = 0.0, "mode"_a = "auto", "threads"_a = 0,
        "Image-quality metrics of uint8 images: blur (Laplacian variance), brightness, contrast, sharpness, score,\n"
        "with pass/fail against the thresholds. Returns a dict of arrays plus 'passed' and 'reasons'.");
  m.def("preprocess", &preprocess, "images"_a, "size"_a, pyb::kw_only(), "layout"_a = "chw", "dtype"_a = "float32",
        "interp"_a = "bilinear", "letterbox"_a = false, "pad"_a = std::vector<float>{0.0f},
        "mean"_a = std::vector<float>{0.485f, 0.456f, 0.406f}, "std"_a = std::vector<float>{0.229f, 0.224f, 0.225f},
        "scale"_a = 1.0f / 255.0f, "swap_rb"_a = false, "mode"_a = "auto", "threads"_a = 0,
        "Fused resize + normalize of uint8 HWC images into an (N, C, H, W) or (N, H, W, C) float32/float16 array.");
}

}  // namespace kiln::py
