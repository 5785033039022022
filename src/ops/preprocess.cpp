// Preprocess: validation and the constants shared by the backends.
#include "ops/preprocess.h"

#include <cmath>
#include <cstdint>
#include <string>

#include "ops/color.h"

namespace kiln {

KilnPreprocessConsts preprocess_consts(const PreprocessParams& params) {
  KilnPreprocessConsts k{};
  k.scale = params.scale;
  k.swap_rb = params.swap_rb ? 1 : 0;
  for (int c = 0; c < 4; ++c) {
    k.mean[c] = params.mean[c];
    k.std[c] = params.std[c];
    k.pad[c] = params.pad[c];
  }
  if (params.nv12) {
    ColorParams yuv;
    yuv.yuv_matrix = params.yuv_matrix;
    yuv.yuv_full_range = params.yuv_full_range;
    k.nv12 = 1;
    k.yuv = color_yuv_consts(yuv);
  }
  return k;
}

int32_t preprocess_nv12_rows(int32_t view_rows) { return static_cast<int32_t>(2 * int64_t{view_rows} / 3); }

std::vector<RectI> preprocess_source_rects(const PreprocessParams& params, const VarShapeBatchView& in) {
  std::vector<RectI> rects;
  for (int64_t i = 0; i < in.count; ++i) {
    rects.push_back(RectI{0, 0, in[i].width, params.nv12 ? preprocess_nv12_rows(in[i].height) : in[i].height});
  }
  return rects;
}

namespace {

using Channels = float[4];

// A per-channel list: one value per channel; a single value applies to every color channel (not alpha).
ParamTable<PreprocessParams>& add_channels(ParamTable<PreprocessParams>& t, ParamSpec spec,
                                           Channels& (*field)(PreprocessParams&), int32_t shown) {
  spec.type = ParamType::kFloats;
  spec.min_count = 1;
  spec.max_count = 4;
  return t.add_custom(
      std::move(spec),
      [field](PreprocessParams& p, const ParamValue& v) {
        const auto& values = std::get<std::vector<double>>(v);
        if (values.size() == 2) return invalid_argument("expected 1 value (every color channel) or 3 or 4");
        Channels& out = field(p);
        const size_t n = values.size() == 1 ? 3 : values.size();
        for (size_t c = 0; c < n; ++c) out[c] = static_cast<float>(values[values.size() == 1 ? 0 : c]);
        return Status::ok();
      },
      [field, shown](const PreprocessParams& p) {
        const Channels& values = field(const_cast<PreprocessParams&>(p));
        return ParamValue(std::vector<double>(values, values + shown));
      });
}

// An NV12 input (PreprocessParams::nv12) and its output.
Status nv12_input_validate(const ImageView& in, const ImageView& out, const std::string& at) {
  if (in.type != PixelType::kU8 || in.layout != Layout::kHWC || in.channels != 1) {
    return invalid_argument(at + ": an NV12 input is a uint8 1-channel view of both planes");
  }
  const int32_t rows = preprocess_nv12_rows(in.height);
  if (in.width < 2 || in.width % 2 != 0 || rows < 1 || in.height - rows != (rows + 1) / 2) {
    return invalid_argument(at + ": an NV12 view of " + std::to_string(in.width) + "x" + std::to_string(in.height) +
                            " is not an even width's luma rows followed by half as many chroma rows (rounded up)");
  }
  if (out.type != PixelType::kF32 && out.type != PixelType::kF16) {
    return invalid_argument(at + ": output must be float32 or float16");
  }
  if (out.channels != 3) return invalid_argument(at + ": an NV12 input's output has 3 channels");
  if (in.row_stride > INT32_MAX) return invalid_argument(at + ": row stride too large");
  return Status::ok();
}

}  // namespace

const ParamTable<PreprocessParams>& preprocess_params() {
  static const ParamTable<PreprocessParams> table = [] {
    using P = PreprocessParams;
    ParamTable<P> t;
    t.add_choice({.name = "interp", .help = "Interpolation"}, [](P& p) -> Interp& { return p.interp; }, kInterpNames,
                 "interpolation");
    t.add_custom({.name = "letterbox", .type = ParamType::kBool,
                  .help = "Keep the aspect ratio, center the image and pad with `pad`"},
                 [](P& p, const ParamValue& v) {
                   p.fit = std::get<bool>(v) ? ResizeFit::kLetterbox : ResizeFit::kStretch;
                   return Status::ok();
                 },
                 [](const P& p) { return ParamValue(p.fit == ResizeFit::kLetterbox); });
    add_channels(t, {.name = "pad", .help = "Letterbox border level per channel", .min = 0, .max = 255},
                 [](P& p) -> Channels& { return p.pad; }, 1);
    t.add({.name = "bgr", .help = "Swap the red and blue channels (RGB inputs give B,G,R outputs and back)"},
          [](P& p) -> bool& { return p.swap_rb; });
    t.add({.name = "scale", .help = "Factor applied to levels before mean and std"},
          [](P& p) -> float& { return p.scale; });
    add_channels(t, {.name = "mean", .help = "Subtracted per output channel, after scale"},
                 [](P& p) -> Channels& { return p.mean; }, 3);
    add_channels(t, {.name = "std", .help = "Divisor per output channel, non-zero"},
                 [](P& p) -> Channels& { return p.std; }, 3);
    return t;
  }();
  return table;
}

Status preprocess_validate(const OpCall& call) {
  if (call.params == nullptr) return invalid_argument("preprocess: no parameters");
  const auto& params = *static_cast<const PreprocessParams*>(call.params);
  if (static_cast<uint8_t>(params.interp) > static_cast<uint8_t>(Interp::kBicubic)) {
    return invalid_argument("preprocess: unknown interpolation");
  }
  if (params.fit != ResizeFit::kStretch && params.fit != ResizeFit::kLetterbox) {
    return invalid_argument("preprocess: unknown fit");
  }
  if (!std::isfinite(params.scale)) return invalid_argument("preprocess: scale is not finite");
  if (params.nv12 && static_cast<uint8_t>(params.yuv_matrix) > static_cast<uint8_t>(YuvMatrix::kBt2020)) {
    return invalid_argument("preprocess: unknown YUV matrix");
  }
  if (call.in.count != call.out.count) {
    return invalid_argument("preprocess: " + std::to_string(call.in.count) + " inputs but " +
                            std::to_string(call.out.count) + " outputs");
  }
  for (int64_t i = 0; i < call.in.count; ++i) {
    const ImageView& in = call.in[i];
    const ImageView& out = call.out[i];
    const std::string at = "preprocess: image " + std::to_string(i);
    if (params.nv12) {
      KILN_TRY(nv12_input_validate(in, out, at));
    } else {
      if (in.type != PixelType::kU8 || in.layout != Layout::kHWC) {
        return invalid_argument(at + ": input must be uint8 HWC");
      }
      if (out.type != PixelType::kF32 && out.type != PixelType::kF16) {
        return invalid_argument(at + ": output must be float32 or float16");
      }
      if (in.channels != out.channels) return invalid_argument(at + ": input and output channels differ");
      if (in.channels != 1 && in.channels != 3 && in.channels != 4) {
        return invalid_argument(at + ": " + std::to_string(in.channels) + " channels (1, 3 or 4)");
      }
    }
    if (params.swap_rb && out.channels < 3) return invalid_argument(at + ": swap_rb needs 3 or 4 channels");
    for (int32_t c = 0; c < out.channels; ++c) {
      if (!(params.std[c] != 0.0f) || !std::isfinite(params.std[c]) || !std::isfinite(params.mean[c])) {
        return invalid_argument(at + ": mean/std of channel " + std::to_string(c) + " not finite or std zero");
      }
    }
  }
  return Status::ok();
}

}  // namespace kiln
