// Contact sheet of rendered images for `kiln render --preview grid.png`.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "kiln/image.h"
#include "kiln/status.h"

namespace kiln {

constexpr int32_t kPreviewGutter = 2;      // pixels between tiles
constexpr uint8_t kPreviewGutterGray = 128;

// Tiles gray images (u8, or f32 in [0, 1] scaled by 255 and clamped) row-major into `columns` columns
// (<= 0: a near-square grid) with a 2-px mid-gray gutter, and writes one gray PNG to `path` (tmp + rename).
// Cells are as large as the largest image; smaller images sit top-left on the gutter gray.
// UnsupportedFormat when kiln was built without libspng.
Status preview_write_png(const std::string& path, const std::vector<ImageView>& images, int32_t columns);

}  // namespace kiln
