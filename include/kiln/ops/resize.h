// Resize (nearest, bilinear, area, bicubic; OpenCV's sampling conventions), crop (a source rectangle per image)
// and letterbox (fit keeping the aspect ratio, centered, padded). Var-shape in, var-shape out: each input image is
// resized to the size of the matching output image.
#pragma once

#include <cstdint>
#include <string>

#include "kiln/enum_names.h"
#include "kiln/image.h"
#include "kiln/ops.h"

namespace kiln {

enum class Interp : uint8_t { kNearest = 0, kBilinear, kArea, kBicubic };
inline constexpr EnumName<Interp> kInterpNames[] = {{Interp::kBilinear, "bilinear"}, {Interp::kNearest, "nearest"},
                                                   {Interp::kArea, "area"},         {Interp::kBicubic, "bicubic"},
                                                   {Interp::kBilinear, "linear"},   {Interp::kBicubic, "cubic"}};
inline const char* interp_name(Interp interp) { return enum_name(kInterpNames, interp); }
inline Result<Interp> interp_parse(const std::string& name) { return enum_parse(kInterpNames, name, "interpolation"); }

enum class ResizeFit : uint8_t { kStretch = 0, kLetterbox };

struct RectI {
  int32_t x = 0;
  int32_t y = 0;
  int32_t width = 0;
  int32_t height = 0;
};

struct ResizeParams {
  Interp interp = Interp::kBilinear;
  ResizeFit fit = ResizeFit::kStretch;
  float pad[4] = {0, 0, 0, 0};  // letterbox border value per channel
  const RectI* rois = nullptr;  // one source rectangle per image (crop before resizing); nullptr = whole images
};

// Where a letterboxed image lands inside its output: scale, then offset (for mapping results back).
struct LetterboxPlacement {
  float scale = 1;
  int32_t x = 0;
  int32_t y = 0;
  int32_t width = 0;
  int32_t height = 0;
};
LetterboxPlacement letterbox_placement(int32_t in_width, int32_t in_height, int32_t out_width, int32_t out_height);

}  // namespace kiln
