// Affine warp with bilinear sampling and border modes (cv::warpAffine conventions), and the similarity transform
// that aligns five face landmarks to the 112x112 ArcFace template.
#pragma once

#include <cstdint>
#include <string>

#include "kiln/enum_names.h"
#include "kiln/image.h"
#include "kiln/ops.h"

namespace kiln {

enum class BorderMode : uint8_t { kConstant = 0, kReplicate, kReflect, kReflect101 };
inline constexpr EnumName<BorderMode> kBorderModeNames[] = {
    {BorderMode::kConstant, "constant"},     {BorderMode::kReplicate, "replicate"},  {BorderMode::kReflect, "reflect"},
    {BorderMode::kReflect101, "reflect101"}, {BorderMode::kReflect101, "reflect_101"}, {BorderMode::kReflect101, "reflect-101"}};
inline const char* border_mode_name(BorderMode mode) { return enum_name(kBorderModeNames, mode); }
inline Result<BorderMode> border_mode_parse(const std::string& name) {
  return enum_parse(kBorderModeNames, name, "border mode");
}

struct WarpParams {
  const float (*matrices)[6] = nullptr;  // one 2x3 row-major matrix per image, mapping source -> destination
  bool inverse_map = false;              // matrices map destination -> source (cv::WARP_INVERSE_MAP)
  BorderMode border = BorderMode::kConstant;
  float border_value[4] = {0, 0, 0, 0};
};

// The least-squares similarity transform (Umeyama) taking `count` source points to destination points, as a
// 2x3 source -> destination matrix. InvalidArgument for fewer than 2 points or degenerate input.
Status similarity_transform_estimate(const float (*src)[2], const float (*dst)[2], int32_t count, float out[6]);
// The 5-point ArcFace template (eyes, nose, mouth corners) for a 112x112 crop.
extern const float kArcFaceTemplate112[5][2];

}  // namespace kiln
