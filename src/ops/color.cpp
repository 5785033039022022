// The color family: names, and validation of a call before any backend sees it.
#include "ops/color.h"

#include <cmath>
#include <string>

namespace kiln {

namespace {

// The NV12 -> RGB input of output `out`: a u8 1-channel view of both planes (color.h, kNv12ToRgb).
Status nv12_validate(const ImageView& in, const ImageView& out, const ColorParams& params, const std::string& at) {
  if (in.type != PixelType::kU8 || out.type != PixelType::kU8) return invalid_argument(at + ": needs u8 images");
  if (in.channels != 1 || in.layout != Layout::kHWC) {
    return invalid_argument(at + ": needs the NV12 planes as one 1-channel HWC view");
  }
  if (out.channels != 3) return invalid_argument(at + ": needs 3 output channels");
  if (in.width != out.width || in.width % 2 != 0) {
    return invalid_argument(at + ": needs an even width, the same for the input and the output");
  }
  const int32_t chroma_row = params.nv12_chroma_row > 0 ? params.nv12_chroma_row : out.height;
  if (params.nv12_chroma_row < 0 || chroma_row < out.height) {
    return invalid_argument(at + ": the chroma plane must start after the " + std::to_string(out.height) +
                            " luma rows");
  }
  if (in.height < chroma_row + (out.height + 1) / 2) {
    return invalid_argument(at + ": the input's " + std::to_string(in.height) + " rows end before its chroma plane (" +
                            std::to_string((out.height + 1) / 2) + " rows from row " + std::to_string(chroma_row) +
                            ")");
  }
  if (in.row_stride > INT32_MAX || out.row_stride > INT32_MAX) return invalid_argument(at + ": row stride too large");
  return Status::ok();
}

// The RGB -> NV12 output of input `in`: one u8 1-channel view of both planes (color.h, kRgbToNv12).
Status to_nv12_validate(const ImageView& in, const ImageView& out, const ColorParams& params, const std::string& at) {
  if (in.type != PixelType::kU8 || out.type != PixelType::kU8) return invalid_argument(at + ": needs u8 images");
  if (in.channels != 3) return invalid_argument(at + ": needs 3 input channels");
  if (out.channels != 1 || out.layout != Layout::kHWC) {
    return invalid_argument(at + ": needs the NV12 planes as one 1-channel HWC view");
  }
  if (in.width != out.width || in.width % 2 != 0) {
    return invalid_argument(at + ": needs an even width, the same for the input and the output");
  }
  const int32_t chroma_row = params.nv12_chroma_row > 0 ? params.nv12_chroma_row : in.height;
  if (params.nv12_chroma_row < 0 || chroma_row < in.height) {
    return invalid_argument(at + ": the chroma plane must start after the " + std::to_string(in.height) + " luma rows");
  }
  if (out.height < chroma_row + (in.height + 1) / 2) {
    return invalid_argument(at + ": the output's " + std::to_string(out.height) +
                            " rows end before its chroma plane (" + std::to_string((in.height + 1) / 2) +
                            " rows from row " + std::to_string(chroma_row) + ")");
  }
  if (in.row_stride > INT32_MAX || out.row_stride > INT32_MAX) return invalid_argument(at + ": row stride too large");
  return Status::ok();
}

}  // namespace

KilnYuvConsts color_yuv_consts(const ColorParams& params) {
  double kr = 0.2126, kb = 0.0722;  // BT.709
  if (params.yuv_matrix == YuvMatrix::kBt601) kr = 0.299, kb = 0.114;
  if (params.yuv_matrix == YuvMatrix::kBt2020) kr = 0.2627, kb = 0.0593;
  const double kg = 1.0 - kr - kb;
  const double luma_scale = params.yuv_full_range ? 1.0 : 255.0 / 219.0;
  const double chroma_scale = params.yuv_full_range ? 1.0 : 255.0 / 224.0;
  const auto fixed = [](double v) { return static_cast<int32_t>(std::lround(v * (1 << 20))); };
  KilnYuvConsts k;
  k.chroma_row = params.nv12_chroma_row;
  k.y_offset = params.yuv_full_range ? 0 : 16;
  k.cy = fixed(luma_scale);
  k.cvr = fixed(2.0 * (1.0 - kr) * chroma_scale);
  k.cub = fixed(2.0 * (1.0 - kb) * chroma_scale);
  k.cug = fixed(-2.0 * kb * (1.0 - kb) / kg * chroma_scale);
  k.cvg = fixed(-2.0 * kr * (1.0 - kr) / kg * chroma_scale);
  // RGB -> YUV: the inverse scales; the green terms are what makes each row's sum exact (see KilnYuvConsts).
  const double luma_out = 1.0 / luma_scale, chroma_out = 1.0 / chroma_scale;
  k.eyr = fixed(kr * luma_out);
  k.eyb = fixed(kb * luma_out);
  k.eyg = fixed(luma_out) - k.eyr - k.eyb;
  k.eur = fixed(-kr / (2.0 * (1.0 - kb)) * chroma_out);
  k.eub = fixed(0.5 * chroma_out);
  k.eug = -(k.eur + k.eub);
  k.evr = fixed(0.5 * chroma_out);
  k.evb = fixed(-kb / (2.0 * (1.0 - kr)) * chroma_out);
  k.evg = -(k.evr + k.evb);
  return k;
}

Status color_validate(const OpCall& call) {
  const auto& params = *static_cast<const ColorParams*>(call.params);
  if (std::string(color_conversion_name(params.conversion)) == "?") return invalid_argument("color: unknown conversion");
  if (call.out.count != call.in.count) return invalid_argument("color: input and output counts differ");
  const char* name = color_conversion_name(params.conversion);
  for (int64_t i = 0; i < call.in.count; ++i) {
    const ImageView& in = call.in[i];
    const ImageView& out = call.out[i];
    const std::string at = std::string("color ") + name + ": image " + std::to_string(i);
    if (params.conversion == ColorConversion::kNv12ToRgb) {
      KILN_TRY(nv12_validate(in, out, params, at));
      continue;
    }
    if (params.conversion == ColorConversion::kRgbToNv12) {
      KILN_TRY(to_nv12_validate(in, out, params, at));
      continue;
    }
    if (in.width != out.width || in.height != out.height) return invalid_argument(at + ": input and output sizes differ");
    if (in.type != out.type) return invalid_argument(at + ": input and output types differ");
    if (in.type != PixelType::kU8 && in.type != PixelType::kF16 && in.type != PixelType::kF32) {
      return invalid_argument(at + ": unsupported pixel type");
    }
    if (in.row_stride > INT32_MAX || out.row_stride > INT32_MAX) return invalid_argument(at + ": row stride too large");
    int32_t want_in = in.channels;
    int32_t want_out = in.channels;
    switch (params.conversion) {
      case ColorConversion::kSwapRB:
        if (in.channels != 3 && in.channels != 4) return invalid_argument(at + ": needs 3 or 4 channels");
        break;
      case ColorConversion::kRgbToGray:
      case ColorConversion::kBgrToGray:
        if (in.channels != 3 && in.channels != 4) return invalid_argument(at + ": needs 3 or 4 input channels");
        want_out = 1;
        break;
      case ColorConversion::kGrayToRgb:
        want_in = 1;
        want_out = 3;
        break;
      case ColorConversion::kHwcToChw:
        if (in.layout != Layout::kHWC || out.layout != Layout::kCHW) {
          return invalid_argument(at + ": needs an HWC input and a CHW output");
        }
        break;
      case ColorConversion::kChwToHwc:
        if (in.layout != Layout::kCHW || out.layout != Layout::kHWC) {
          return invalid_argument(at + ": needs a CHW input and an HWC output");
        }
        break;
      case ColorConversion::kNv12ToRgb:
      case ColorConversion::kRgbToNv12:
        break;  // validated above
    }
    if (in.channels != want_in) return invalid_argument(at + ": needs " + std::to_string(want_in) + " input channels");
    if (out.channels != want_out) {
      return invalid_argument(at + ": needs " + std::to_string(want_out) + " output channels");
    }
  }
  return Status::ok();
}

}  // namespace kiln
