// Shared by the mask_*_test.cpp files: random CHW logits, u8 mask outputs shaped like them, and the CPU mask op.
#pragma once

#include <cstdint>
#include <utility>
#include <vector>

#include "common/image_ops_util.h"
#include "kiln/image_ops.h"
#include "kiln/ops/mask.h"

namespace kiln::test {

inline VarShapeBatch logits_batch(const std::vector<std::pair<int32_t, int32_t>>& sizes, int32_t channels,
                                  PixelType type, uint32_t seed, float lo = -4.0f, float hi = 4.0f) {
  std::vector<ImageShape> shapes;
  for (auto [w, h] : sizes) shapes.push_back({w, h, channels, type, Layout::kCHW});
  return random_batch(shapes, seed, lo, hi);
}

// One 1-channel u8 HWC output per logits image, filled so unwritten pixels show.
inline VarShapeBatch masks_for(const VarShapeBatch& in) {
  std::vector<ImageShape> shapes;
  for (const ImageView& v : in.images()) shapes.push_back({v.width, v.height, 1, PixelType::kU8, Layout::kHWC});
  return filled_batch(shapes);
}

inline Status run_cpu(const MaskParams& params, const VarShapeBatch& in, const VarShapeBatch& out) {
  return mask_postprocess(params, in.view(), out.view(), cpu_exec());
}

}  // namespace kiln::test
