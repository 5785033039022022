// Resize: names, letterbox placement, validation and the sampling plans (OpenCV's cv::resize conventions).
#include "ops/resize.h"

#include <algorithm>
#include <cfloat>
#include <cmath>
#include <limits>
#include <string>

namespace kiln {

LetterboxPlacement letterbox_placement(int32_t in_width, int32_t in_height, int32_t out_width, int32_t out_height) {
  LetterboxPlacement p;
  if (in_width <= 0 || in_height <= 0 || out_width <= 0 || out_height <= 0) return p;
  const double sx = static_cast<double>(out_width) / in_width;
  const double sy = static_cast<double>(out_height) / in_height;
  const double scale = std::min(sx, sy);
  p.scale = static_cast<float>(scale);
  p.width = sx <= sy ? out_width
                     : std::clamp(static_cast<int32_t>(std::lround(in_width * scale)), 1, out_width);
  p.height = sy <= sx ? out_height
                      : std::clamp(static_cast<int32_t>(std::lround(in_height * scale)), 1, out_height);
  p.x = (out_width - p.width) / 2;
  p.y = (out_height - p.height) / 2;
  return p;
}

namespace {

// OpenCV's interpolateCubic (A = -0.75), in float like OpenCV.
void cubic_coeffs(float x, float* coeffs) {
  const float a = -0.75f;
  coeffs[0] = ((a * (x + 1) - 5 * a) * (x + 1) + 8 * a) * (x + 1) - 4 * a;
  coeffs[1] = ((a + 2) * x - (a + 3)) * x * x + 1;
  coeffs[2] = ((a + 2) * (1 - x) - (a + 3)) * (1 - x) * (1 - x) + 1;
  coeffs[3] = 1.f - coeffs[0] - coeffs[1] - coeffs[2];
}

struct Tap {
  int32_t index;
  float weight;
};

// Taps of each output coordinate of one axis (source indices relative to the source rectangle), in one array:
// coordinate d has taps [end[d - 1], end[d]).
struct AxisTaps {
  std::vector<Tap> taps;
  std::vector<size_t> end;

  explicit AxisTaps(int32_t dsize, size_t per_coordinate) {
    taps.reserve(static_cast<size_t>(dsize) * per_coordinate);
    end.reserve(static_cast<size_t>(dsize));
  }
  void add(Tap tap) { taps.push_back(tap); }
  void next() { end.push_back(taps.size()); }
  size_t begin_of(size_t d) const { return d == 0 ? 0 : end[d - 1]; }
  size_t count(size_t d) const { return end[d] - begin_of(d); }
  size_t size() const { return end.size(); }
};

// cv::resize's computeResizeAreaTab: the source cells covered by each output cell, weighted by their overlap.
AxisTaps area_taps(int32_t ssize, int32_t dsize, double scale) {
  AxisTaps t(dsize, static_cast<size_t>(std::ceil(scale)) + 1);
  for (int32_t dx = 0; dx < dsize; ++dx) {
    const size_t first = t.taps.size();
    const double fsx1 = dx * scale;
    const double fsx2 = fsx1 + scale;
    const double cell_width = std::min(scale, ssize - fsx1);
    int32_t sx1 = static_cast<int32_t>(std::ceil(fsx1));
    int32_t sx2 = static_cast<int32_t>(std::floor(fsx2));
    sx2 = std::min(sx2, ssize - 1);
    sx1 = std::min(sx1, sx2);
    if (sx1 - fsx1 > 1e-3) t.add({sx1 - 1, static_cast<float>((sx1 - fsx1) / cell_width)});
    for (int32_t sx = sx1; sx < sx2; ++sx) t.add({sx, static_cast<float>(1.0 / cell_width)});
    if (fsx2 - sx2 > 1e-3) {
      t.add({sx2, static_cast<float>(std::min(std::min(fsx2 - sx2, 1.0), cell_width) / cell_width)});
    }
    if (t.taps.size() == first) t.add({std::min(std::max(sx1, 0), ssize - 1), 1.0f});
    t.next();
  }
  return t;
}

AxisTaps axis_taps(Interp interp, bool area_downscale, int32_t ssize, int32_t dsize) {
  AxisTaps taps(dsize, interp == Interp::kBicubic ? 4 : 2);
  if (ssize == dsize) {  // identity: an exact copy whatever the interpolation
    for (int32_t d = 0; d < dsize; ++d) {
      taps.add({d, 1.0f});
      taps.next();
    }
    return taps;
  }
  const double inv_scale = static_cast<double>(dsize) / ssize;
  const double scale = 1.0 / inv_scale;
  switch (interp) {
    case Interp::kNearest:
      for (int32_t d = 0; d < dsize; ++d) {
        const auto s = static_cast<int32_t>(std::floor(d * scale));
        taps.add({std::min(s, ssize - 1), 1.0f});
        taps.next();
      }
      return taps;
    case Interp::kArea:
      if (area_downscale) return area_taps(ssize, dsize, static_cast<double>(ssize) / dsize);
      [[fallthrough]];
    case Interp::kBilinear:
      for (int32_t d = 0; d < dsize; ++d) {
        int32_t s = 0;
        float f = 0;
        if (interp == Interp::kArea) {  // cv::resize's INTER_AREA when upscaling
          s = static_cast<int32_t>(std::floor(d * scale));
          f = static_cast<float>((d + 1) - (s + 1) * inv_scale);
          f = f <= 0 ? 0.f : f - std::floor(f);
        } else {
          f = static_cast<float>((d + 0.5) * scale - 0.5);
          s = static_cast<int32_t>(std::floor(f));
          f -= static_cast<float>(s);
        }
        if (s < 0) f = 0, s = 0;
        if (s >= ssize - 1) f = 0, s = ssize - 1;
        taps.add({s, 1.f - f});
        taps.add({std::min(s + 1, ssize - 1), f});
        taps.next();
      }
      return taps;
    case Interp::kBicubic:
      for (int32_t d = 0; d < dsize; ++d) {
        float f = static_cast<float>((d + 0.5) * scale - 0.5);
        const auto s = static_cast<int32_t>(std::floor(f));
        f -= static_cast<float>(s);
        float c[4];
        cubic_coeffs(f, c);
        for (int32_t k = 0; k < 4; ++k) taps.add({std::clamp(s - 1 + k, 0, ssize - 1), c[k]});
        taps.next();
      }
      return taps;
  }
  return taps;
}

ResizeAxis axis_make(const AxisTaps& taps, int32_t offset) {
  ResizeAxis axis;
  size_t width = 1;
  for (size_t d = 0; d < taps.size(); ++d) width = std::max(width, taps.count(d));
  axis.taps = static_cast<int32_t>(width);
  axis.index.resize(taps.size() * width);
  axis.weight.resize(taps.size() * width);
  axis.lo = std::numeric_limits<int32_t>::max();
  axis.hi = std::numeric_limits<int32_t>::min();
  for (size_t d = 0; d < taps.size(); ++d) {
    for (size_t k = 0; k < width; ++k) {
      // Unused taps: weight 0 at the last used index (always inside the image).
      const size_t n = taps.count(d);
      const Tap* t = taps.taps.data() + taps.begin_of(d);
      const Tap tap = k < n ? t[k] : Tap{t[n - 1].index, 0.0f};
      axis.index[d * width + k] = tap.index + offset;
      axis.weight[d * width + k] = tap.weight;
      axis.lo = std::min(axis.lo, tap.index + offset);
      axis.hi = std::max(axis.hi, tap.index + offset);
    }
  }
  return axis;
}

Status pair_check(const ImageView& in, const ImageView& out, const std::string& at) {
  if (in.channels != out.channels) return invalid_argument(at + ": input and output channels differ");
  if (in.channels != 1 && in.channels != 3 && in.channels != 4) {
    return invalid_argument(at + ": " + std::to_string(in.channels) + " channels (1, 3 or 4)");
  }
  return Status::ok();
}

}  // namespace

ResizePlan resize_plan_make(Interp interp, ResizeFit fit, const RectI& src, int32_t out_width, int32_t out_height) {
  ResizePlan plan;
  plan.src = src;
  plan.dst = RectI{0, 0, out_width, out_height};
  if (fit == ResizeFit::kLetterbox) {
    const LetterboxPlacement p = letterbox_placement(src.width, src.height, out_width, out_height);
    plan.dst = RectI{p.x, p.y, p.width, p.height};
  }
  // cv::resize's INTER_AREA averages cells only when no axis is enlarged; otherwise it interpolates linearly.
  const bool area_downscale = src.width >= plan.dst.width && src.height >= plan.dst.height;
  plan.x = axis_make(axis_taps(interp, area_downscale, src.width, plan.dst.width), src.x);
  plan.y = axis_make(axis_taps(interp, area_downscale, src.height, plan.dst.height), src.y);
  return plan;
}

Status resize_tables_append(const ResizePlan& plan, ResizeTables* tables) {
  const size_t entries = tables->index.size() + plan.x.index.size() + plan.y.index.size();
  if (entries > static_cast<size_t>(INT32_MAX)) return invalid_argument("resize: sampling tables too large");
  KilnResizeImage image{};
  image.x_table = static_cast<int32_t>(tables->index.size());
  tables->index.insert(tables->index.end(), plan.x.index.begin(), plan.x.index.end());
  tables->weight.insert(tables->weight.end(), plan.x.weight.begin(), plan.x.weight.end());
  image.y_table = static_cast<int32_t>(tables->index.size());
  tables->index.insert(tables->index.end(), plan.y.index.begin(), plan.y.index.end());
  tables->weight.insert(tables->weight.end(), plan.y.weight.begin(), plan.y.weight.end());
  image.x_taps = plan.x.taps;
  image.y_taps = plan.y.taps;
  image.dst_x = plan.dst.x;
  image.dst_y = plan.dst.y;
  image.dst_width = plan.dst.width;
  image.dst_height = plan.dst.height;
  tables->images.push_back(image);
  return Status::ok();
}

Status resize_tables_build(Interp interp, ResizeFit fit, const RectI* rois, const VarShapeBatchView& in,
                           const VarShapeBatchView& out, ResizeTables* tables) {
  for (int64_t i = 0; i < in.count; ++i) {
    const RectI src = rois != nullptr ? rois[i] : RectI{0, 0, in[i].width, in[i].height};
    KILN_TRY(resize_tables_append(resize_plan_make(interp, fit, src, out[i].width, out[i].height), tables));
  }
  return Status::ok();
}

KilnResizePad resize_pad(const ResizeParams& params) {
  KilnResizePad pad{};
  for (int c = 0; c < 4; ++c) pad.v[c] = params.pad[c];
  return pad;
}

RectI resize_source_rect(const ResizeParams& params, const ImageView& image, int64_t i) {
  if (params.rois != nullptr) return params.rois[i];
  return RectI{0, 0, image.width, image.height};
}

Status resize_validate(const OpCall& call) {
  if (call.params == nullptr) return invalid_argument("resize: no parameters");
  const auto& params = *static_cast<const ResizeParams*>(call.params);
  if (static_cast<uint8_t>(params.interp) > static_cast<uint8_t>(Interp::kBicubic)) {
    return invalid_argument("resize: unknown interpolation");
  }
  if (params.fit != ResizeFit::kStretch && params.fit != ResizeFit::kLetterbox) {
    return invalid_argument("resize: unknown fit");
  }
  if (call.in.count != call.out.count) {
    return invalid_argument("resize: " + std::to_string(call.in.count) + " inputs but " +
                            std::to_string(call.out.count) + " outputs");
  }
  for (int64_t i = 0; i < call.in.count; ++i) {
    const ImageView& in = call.in[i];
    const ImageView& out = call.out[i];
    const std::string at = "resize: image " + std::to_string(i);
    KILN_TRY(pair_check(in, out, at));
    if (in.type != out.type) return invalid_argument(at + ": input and output types differ");
    if (in.type != PixelType::kU8 && in.type != PixelType::kF32) {
      return invalid_argument(at + ": type " + pixel_type_name(in.type) + " (uint8 or float32)");
    }
    if (in.layout != out.layout) return invalid_argument(at + ": input and output layouts differ");
    if (params.rois != nullptr) {
      const RectI& r = params.rois[i];
      if (r.width <= 0 || r.height <= 0 || r.x < 0 || r.y < 0 || r.x > in.width - r.width ||
          r.y > in.height - r.height) {
        return invalid_argument(at + ": ROI outside the image");
      }
    }
  }
  return Status::ok();
}

}  // namespace kiln
